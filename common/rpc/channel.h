#pragma once
// Client channel helpers: message size limits, TLS, per-call deadlines.

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/tunables.h"
#include "grpcpp/grpcpp.h"

namespace herald::rpc {

struct ChannelOptions {
  int max_message_bytes = tunables::kMaxMessageBytes;
  // PEM root certificate; when set the channel uses TLS and verifies the
  // server's certificate against it.
  std::string tls_root_cert_path;
  // With TLS: the name the server's certificate must carry (empty: the host
  // part of the address).
  std::string tls_server_name;
};

// Creates a channel to "host:port". Errors: InvalidArgument for an unreadable
// certificate.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ChannelOptions& options);

// Sets a deadline `timeout_ms` from now on `context`.
void SetDeadline(grpc::ClientContext* context, int64_t timeout_ms);

// Waits up to `timeout_ms` for the channel to connect. False if it did not.
bool WaitForConnected(grpc::Channel* channel, int64_t timeout_ms);

}  // namespace herald::rpc
