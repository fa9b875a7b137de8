#include "scheduler/planner/plan_digest.h"

#include <vector>

namespace herald::scheduler {
namespace {

class Fnv1a {
 public:
  explicit Fnv1a(uint64_t state) : state_(state) {}
  void Bytes(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) state_ = (state_ ^ p[i]) * 0x100000001b3ull;
  }
  // The length first, so that lists split differently digest differently.
  template <typename T>
  void List(const std::vector<T>& v) {
    const uint64_t n = v.size();
    Bytes(&n, sizeof(n));
    Bytes(v.data(), v.size() * sizeof(T));
  }
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace

uint64_t PlanDigest(const IterationPlan& plan, uint64_t digest) {
  Fnv1a h(digest);
  h.Bytes(&plan.iteration, sizeof(plan.iteration));
  for (const WorkerPlan& w : plan.workers) {
    h.List(w.samples);
    for (const plan::TableSamples& s : w.slots) {
      h.List(s.offsets);
      h.List(s.slots);
      if (!s.feature_lengths.empty()) h.List(s.feature_lengths);  // digests stay as they were
      if (!s.weights.empty()) h.List(s.weights);
    }
    for (const plan::TablePlan& p : w.tables) {
      h.List(p.evict.slots);
      h.List(p.evict.keys);
      h.List(p.fetch.keys);
      h.List(p.fetch.slots);
      h.List(p.fetch.early);
      h.List(p.owned_slots);
      h.List(p.hold.slots);
      h.List(p.hold.keys);
      h.List(p.flush.slots);
      h.List(p.flush.keys);
      h.List(p.push.slots);
      h.List(p.push.keys);
      h.List(p.writeback.slots);
      h.List(p.writeback.keys);
      h.List(p.receive.slots);
      h.List(p.receive.keys);
      h.List(p.send.slots);
      h.List(p.send.keys);
      h.List(p.send.peers);
      h.List(p.incoming.keys);
      h.List(p.incoming.peers);
      h.List(p.receive.served);
      h.List(p.send.served);
      h.List(p.incoming.served);
      h.List(p.remote.slots);
      h.List(p.remote.keys);
      h.List(p.remote.peers);
      h.List(p.gather.slots);
      h.List(p.gather.keys);
      h.List(p.gather.peers);
      h.List(p.init.keys);
      h.List(p.init.slots);
    }
  }
  return h.state();
}

}  // namespace herald::scheduler
