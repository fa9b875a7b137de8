#include "worker/collectives/coordinator_kv_store.h"

#include "absl/strings/str_cat.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/status.h"
#include "common/tunables.h"

namespace herald::worker {
namespace {

// Control calls answer fast; a Get may wait on the server up to its timeout.

}  // namespace

CoordinatorKvStore::CoordinatorKvStore(std::shared_ptr<proto::Coordinator::StubInterface> stub,
                                       std::string scope, std::string token)
    : stub_(std::move(stub)), scope_(std::move(scope)), token_(std::move(token)) {}

absl::Status CoordinatorKvStore::Set(const std::string& key, const std::string& value) {
  grpc::ClientContext context;
  rpc::SetDeadline(&context, tunables::kReportDeadlineMs);
  rpc::AttachToken(&context, token_);
  proto::KvSetRequest request;
  request.set_scope(scope_);
  request.set_key(key);
  request.set_value(value);
  proto::KvSetResponse response;
  absl::Status s = rpc::FromGrpcStatus(stub_->KvSet(&context, request, &response));
  return s.ok() ? s : Annotate(s, absl::StrCat("kv set ", scope_, "/", key));
}

absl::StatusOr<std::vector<std::string>> CoordinatorKvStore::Get(
    const std::vector<std::string>& keys, absl::Duration timeout) {
  const int64_t wait_ms = absl::ToInt64Milliseconds(timeout);
  grpc::ClientContext context;
  rpc::SetDeadline(&context, wait_ms + tunables::kRendezvousGetMarginMs);
  rpc::AttachToken(&context, token_);
  proto::KvGetRequest request;
  request.set_scope(scope_);
  for (const auto& k : keys) request.add_keys(k);
  request.set_wait_ms(static_cast<uint32_t>(std::max<int64_t>(0, wait_ms)));
  proto::KvGetResponse response;
  absl::Status s = rpc::FromGrpcStatus(stub_->KvGet(&context, request, &response));
  if (!s.ok()) return Annotate(s, absl::StrCat("kv get in scope ", scope_));
  if (response.values_size() != static_cast<int>(keys.size())) {
    return absl::InternalError(
        absl::StrCat("kv get: ", response.values_size(), " values for ", keys.size(), " keys"));
  }
  return std::vector<std::string>(response.values().begin(), response.values().end());
}

}  // namespace herald::worker
