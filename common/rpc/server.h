#pragma once
// Shared gRPC server setup: bind (port 0 allowed, bound port reported), message
// size limits, keepalive, the standard health service.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/tunables.h"
#include "grpcpp/grpcpp.h"

namespace herald::rpc {

struct ServerOptions {
  // Address to bind, "host:port". Port 0 picks a free port. Default loopback only.
  std::string listen_address = "127.0.0.1:0";
  // Host other machines dial to reach this server (it registers
  // "advertise_host:port" with the scheduler). Empty: the listen host. A node
  // that listens on a wildcard (0.0.0.0, [::]) must set it (CheckAdvertised).
  std::string advertise_host;
  // Largest message accepted or sent, in bytes (bulk row batches are large).
  int max_message_bytes = tunables::kMaxMessageBytes;
  // TLS: when both are set the server only accepts TLS connections.
  std::string tls_cert_path;
  std::string tls_key_path;
};

// A started server. Shutdown() (also run by the destructor) is idempotent.
class RunningServer {
 public:
  // `host`: what address() names (the advertised host, else the listen host).
  RunningServer(std::unique_ptr<grpc::Server> server, int port, std::string host);
  ~RunningServer();
  int port() const { return port_; }
  // "host:port" to dial: the advertised host, else the listen host (127.0.0.1
  // for a wildcard, which only this machine can use).
  std::string address() const;
  void Shutdown();
  void Wait();

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_;
  std::string host_;
  bool shut_down_ = false;
};

// Starts a server hosting `services` (not owned; they must outlive the server).
// Errors: InvalidArgument for a malformed address, Unavailable if binding fails.
absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(
    const ServerOptions& options, const std::vector<grpc::Service*>& services);

// For a node that registers its address with the scheduler: InvalidArgument
// (naming --listen and --advertise) if `options` listens on a wildcard host
// without an advertised one, since no other machine could dial 127.0.0.1.
absl::Status CheckAdvertised(const ServerOptions& options);

// Writes `port` to `path` atomically (temp file + rename), so a process waiting
// for the file never reads a partial number.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace herald::rpc
