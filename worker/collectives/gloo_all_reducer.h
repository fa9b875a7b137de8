#pragma once
// DenseAllReducer over Gloo on TCP, for CPU workers (host memory): an
// all-to-all reduce-scatter summed in rank order, then an all-gather, so every
// rank gets the same bits (Gloo's ring all-reduce does not: each rank adds in
// its own ring order). Ranks find each other through a KvStore: each publishes its
// address under "<prefix>/..." and connects a full mesh.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/gloo_context.h"
#include "worker/collectives/kv_store.h"

namespace gloo {
class Context;
}

namespace herald::worker {

class GlooAllReducer final : public DenseAllReducer {
 public:
  // Blocks until all `size` ranks connected or the timeout passed.
  // `store` is used only during the call.
  static absl::StatusOr<std::unique_ptr<GlooAllReducer>> Connect(KvStore* store, int rank, int size,
                                                                 const GlooOptions& options);
  ~GlooAllReducer() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // REQUIRES: `data` is host memory.
  absl::Status AllReduceSum(float* data, size_t n) override;

 private:
  GlooAllReducer(int rank, int size, std::shared_ptr<gloo::Context> context);

  int rank_, size_;
  std::shared_ptr<gloo::Context> context_;
  std::vector<float> send_, receive_, owned_, gathered_;  // reused between calls
};

}  // namespace herald::worker
