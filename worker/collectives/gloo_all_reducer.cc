#include "worker/collectives/gloo_all_reducer.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "gloo/allgather.h"
#include "gloo/alltoall.h"
#include "gloo/common/error.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/tcp/device.h"

namespace herald::worker {
namespace {

// gloo::rendezvous::Store over a KvStore. Gloo reports store failures by
// exception; they are caught in Connect and turned into a Status.
class KvStoreAdapter final : public gloo::rendezvous::Store {
 public:
  KvStoreAdapter(KvStore* store, absl::Duration timeout) : store_(store), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    absl::Status s = store_->Set(key, std::string(data.begin(), data.end()));
    if (!s.ok()) throw gloo::IoException(s.ToString());
  }
  std::vector<char> get(const std::string& key) override {
    auto values = store_->Get({key}, timeout_);
    if (!values.ok()) throw gloo::IoException(values.status().ToString());
    return std::vector<char>((*values)[0].begin(), (*values)[0].end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, {}); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    auto values = store_->Get(keys, timeout_);
    if (!values.ok()) throw gloo::IoException(values.status().ToString());
  }

 private:
  KvStore* store_;
  absl::Duration timeout_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GlooAllReducer>> GlooAllReducer::Connect(
    KvStore* store, int rank, int size, const GlooOptions& options) {
  if (size < 1 || rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(absl::StrCat("gloo: rank ", rank, " of ", size));
  }
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(options.timeout)));
    KvStoreAdapter adapter(store, options.timeout);
    gloo::rendezvous::PrefixStore prefixed(options.prefix, adapter);
    context->connectFullMesh(prefixed, device);
    return std::unique_ptr<GlooAllReducer>(new GlooAllReducer(rank, size, std::move(context)));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("gloo: rank ", rank, " of ", size, " could not connect: ", e.what()));
  }
}

GlooAllReducer::GlooAllReducer(int rank, int size, std::shared_ptr<gloo::Context> context)
    : rank_(rank), size_(size), context_(std::move(context)) {}

GlooAllReducer::~GlooAllReducer() = default;

absl::Status GlooAllReducer::AllReduceSum(float* data, size_t n) {
  if (size_ == 1 || n == 0) return absl::OkStatus();
  // Reduce-scatter by all-to-all: rank r receives every rank's chunk r and
  // sums it in rank order; then all-gather. Each element is reduced once, by
  // its chunk's owner, so every rank gets the same bits, and the order (rank
  // 0 + rank 1 + …) is the order the parameter servers use.
  const size_t chunk = (n + size_ - 1) / size_;
  send_.assign(chunk * size_, 0.0f);
  std::copy(data, data + n, send_.begin());
  receive_.resize(chunk * size_);
  owned_.resize(chunk);
  gathered_.resize(chunk * size_);
  try {
    gloo::AlltoallOptions scatter(context_);
    scatter.setInput(send_.data(), send_.size());
    scatter.setOutput(receive_.data(), receive_.size());
    scatter.setTag(1);
    gloo::alltoall(scatter);
    std::copy(receive_.begin(), receive_.begin() + chunk, owned_.begin());
    for (int r = 1; r < size_; ++r) {
      const float* part = receive_.data() + r * chunk;
      for (size_t i = 0; i < chunk; ++i) owned_[i] += part[i];
    }
    gloo::AllgatherOptions gather(context_);
    gather.setInput(owned_.data(), owned_.size());
    gather.setOutput(gathered_.data(), gathered_.size());
    gather.setTag(2);
    gloo::allgather(gather);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("gloo all-reduce of ", n, " floats at rank ", rank_, ": ", e.what()));
  }
  std::copy(gathered_.begin(), gathered_.begin() + n, data);
  return absl::OkStatus();
}

}  // namespace herald::worker
