#include "common/scheduling_defaults.h"

namespace herald {

void ResolveSchedulingDefaults(proto::SchedulingSpec* s) {
  const proto::PolicyKind p = s->policy();
  const bool herald = p == proto::POLICY_KIND_UNSPECIFIED || p == proto::POLICY_HERALD ||
                      p == proto::POLICY_HERALD_ADAPTIVE;
  const bool owns_rows = herald || p == proto::POLICY_HERALD_COMM_ONLY;
  const bool locality = herald || p == proto::POLICY_HERALD_ALLOC_ONLY;
  if (!s->has_handoff()) s->set_handoff(owns_rows);
  if (!s->has_serve()) s->set_serve(owns_rows);
  if (!s->has_init_on_worker()) {
    s->set_init_on_worker(owns_rows || p == proto::POLICY_HERALD_ALLOC_ONLY);
  }
  if (s->allocation_passes() == 0) s->set_allocation_passes(locality ? 2 : 1);
}

}  // namespace herald
