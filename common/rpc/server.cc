#include "common/rpc/server.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/health_check_service_interface.h"

namespace herald::rpc {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

RunningServer::RunningServer(std::unique_ptr<grpc::Server> server, int port, std::string host)
    : server_(std::move(server)), port_(port), host_(std::move(host)) {}

RunningServer::~RunningServer() { Shutdown(); }

namespace {
bool IsWildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "[::]" || host == "::" || host.empty();
}
}  // namespace

std::string RunningServer::address() const {
  return absl::StrCat(IsWildcard(host_) ? "127.0.0.1" : host_, ":", port_);
}

absl::Status CheckAdvertised(const ServerOptions& options) {
  const std::string host = options.listen_address.substr(0, options.listen_address.rfind(':'));
  if (IsWildcard(host) && options.advertise_host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--listen ", options.listen_address,
        " binds every interface: set --advertise to the address other hosts reach this one at"));
  }
  return absl::OkStatus();
}

void RunningServer::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
}

void RunningServer::Wait() { server_->Wait(); }

absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(
    const ServerOptions& options, const std::vector<grpc::Service*>& services) {
  auto colon = options.listen_address.rfind(':');
  int requested_port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(options.listen_address.substr(colon + 1), &requested_port) ||
      requested_port < 0 || requested_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address '", options.listen_address, "' is not host:port"));
  }
  std::string host = options.listen_address.substr(0, colon);

  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!options.tls_cert_path.empty() || !options.tls_key_path.empty()) {
    auto cert = ReadFile(options.tls_cert_path);
    auto key = ReadFile(options.tls_key_path);
    if (!cert.ok() || !key.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("TLS: cannot read cert '",
                                                     options.tls_cert_path, "' or key '",
                                                     options.tls_key_path, "'"));
    }
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    creds = grpc::SslServerCredentials(ssl);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(options.listen_address, creds, &bound_port);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // Without this, gRPC sets SO_REUSEPORT and a second server silently shares the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  for (grpc::Service* s : services) builder.RegisterService(s);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot bind ", options.listen_address));
  }
  return std::make_unique<RunningServer>(
      std::move(server), bound_port,
      options.advertise_host.empty() ? host : options.advertise_host);
}

absl::Status WritePortFile(const std::string& path, int port) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out.good()) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace herald::rpc
