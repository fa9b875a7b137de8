#include "common/rpc/client_tls_flags.h"

#include <fstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, tls_ca, "",
          "PEM root certificate(s) to verify servers with; when set every channel this "
          "process opens is TLS");
ABSL_FLAG(std::string, tls_server_name, "",
          "with --tls_ca: the name the servers' certificates must carry (default: the host "
          "of the dialled address)");

namespace herald::rpc {

absl::StatusOr<ChannelOptions> ClientChannelOptionsFromFlags() {
  ChannelOptions options;
  const std::string ca = absl::GetFlag(FLAGS_tls_ca);
  const std::string name = absl::GetFlag(FLAGS_tls_server_name);
  if (ca.empty()) {
    if (!name.empty()) return absl::InvalidArgumentError("--tls_server_name needs --tls_ca");
    return options;
  }
  if (!std::ifstream(ca))
    return absl::InvalidArgumentError(absl::StrCat("--tls_ca: cannot read ", ca));
  options.tls_root_cert_path = ca;
  options.tls_server_name = name;
  return options;
}

}  // namespace herald::rpc
