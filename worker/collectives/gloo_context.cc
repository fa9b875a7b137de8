#include "worker/collectives/gloo_context.h"

#include <chrono>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::shared_ptr<gloo::Context>> ConnectGloo(KvStore* store, int rank, int size,
                                                           const GlooOptions& options) {
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
    return std::shared_ptr<gloo::Context>(std::move(context));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("gloo: rank ", rank, " of ", size, " could not connect: ", e.what()));
  }
}

}  // namespace herald::worker
