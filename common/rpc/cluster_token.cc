#include "common/rpc/cluster_token.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/logging.h"

namespace herald::rpc {
bool SameSecret(const std::string& a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("token file ", path, ": cannot read"));
  std::stringstream content;
  content << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(content.str()));
  if (token.empty())
    return absl::InvalidArgumentError(absl::StrCat("token file ", path, ": empty"));
  return token;
}

void AttachToken(grpc::ClientContext* context, const std::string& token) {
  if (!token.empty()) context->AddMetadata(kTokenMetadataKey, token);
}

grpc::Status CheckToken(const grpc::ServerContext* context, const std::string& expected,
                        const char* method) {
  if (expected.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kTokenMetadataKey);
  if (it != metadata.end() &&
      SameSecret(expected, absl::string_view(it->second.data(), it->second.size()))) {
    return grpc::Status::OK;
  }
  HLOG_WARN("refused {} from {}: {} cluster token", method, context->peer(),
            it == metadata.end() ? "no" : "wrong");
  return grpc::Status(
      grpc::StatusCode::UNAUTHENTICATED,
      absl::StrCat(method, ": missing or wrong cluster token (", kTokenMetadataKey, ")"));
}

}  // namespace herald::rpc
