#include "common/rpc/channel.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace herald::rpc {

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!options.tls_root_cert_path.empty()) {
    std::ifstream in(options.tls_root_cert_path);
    if (!in) {
      return absl::InvalidArgumentError(
          absl::StrCat("TLS: cannot read root certificate ", options.tls_root_cert_path));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ss.str();
    creds = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
  }
  return grpc::CreateCustomChannel(address, creds, args);
}

void SetDeadline(grpc::ClientContext* context, int64_t timeout_ms) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

bool WaitForConnected(grpc::Channel* channel, int64_t timeout_ms) {
  return channel->WaitForConnected(std::chrono::system_clock::now() +
                                   std::chrono::milliseconds(timeout_ms));
}

}  // namespace herald::rpc
