#include "scheduler/herald/plan_digest.h"

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
    for (const worker::TableSamples& s : w.slots) {
      h.List(s.offsets);
      h.List(s.slots);
    }
    for (const worker::TablePlan& p : w.tables) {
      h.List(p.evict_slots);
      h.List(p.evict_keys);
      h.List(p.fetch_keys);
      h.List(p.fetch_slots);
      h.List(p.fetch_early);
      h.List(p.owned_slots);
      h.List(p.shared_slots);
      h.List(p.shared_keys);
      h.List(p.writeback_slots);
      h.List(p.writeback_keys);
      h.List(p.receive_slots);
      h.List(p.receive_keys);
      h.List(p.send_slots);
      h.List(p.send_keys);
      h.List(p.send_to);
      h.List(p.incoming_keys);
      h.List(p.incoming_from);
      h.List(p.receive_served);
      h.List(p.send_served);
      h.List(p.incoming_served);
      h.List(p.remote_slots);
      h.List(p.remote_keys);
      h.List(p.remote_to);
      h.List(p.gather_slots);
      h.List(p.gather_keys);
      h.List(p.gather_from);
      h.List(p.init_keys);
      h.List(p.init_slots);
    }
  }
  return h.state();
}

}  // namespace herald::scheduler
