#pragma once
// The cluster token shared by the servers and the CLI: clients send it in
// the "x-herald-token" metadata of every call; a server started with a
// token refuses calls without the right one (UNAUTHENTICATED, logged with
// the peer). An empty token disables the check (development clusters).

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace herald::rpc {

inline constexpr char kTokenMetadataKey[] = "x-herald-token";

// The file's content without surrounding whitespace. Errors: NotFound
// (unreadable), InvalidArgument (empty), both naming the path.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Whether `given` is the token `expected`, compared without an early exit
// so timing does not reveal a prefix (also for HTTP: the status page).
bool SameSecret(const std::string& expected, absl::string_view given);

// Adds the token to a call (nothing when `token` is empty).
void AttachToken(grpc::ClientContext* context, const std::string& token);

// OK when `expected` is empty or the call carries it; else UNAUTHENTICATED
// (and a warning naming the peer and `method`).
grpc::Status CheckToken(const grpc::ServerContext* context, const std::string& expected,
                        const char* method);

}  // namespace herald::rpc
