#include "common/rpc/server_tls_flags.h"

#include <fstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain this server presents; with --tls_key it serves TLS only");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");

namespace herald::rpc {

absl::Status ApplyServerTlsFlags(ServerOptions* options) {
  const std::string cert = absl::GetFlag(FLAGS_tls_cert);
  const std::string key = absl::GetFlag(FLAGS_tls_key);
  if (cert.empty() && key.empty()) return absl::OkStatus();
  if (cert.empty() || key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key must be given together");
  }
  for (const auto& [flag, path] : {std::pair{"tls_cert", cert}, std::pair{"tls_key", key}}) {
    if (!std::ifstream(path)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read ", path));
    }
  }
  options->tls_cert_path = cert;
  options->tls_key_path = key;
  return absl::OkStatus();
}

}  // namespace herald::rpc
