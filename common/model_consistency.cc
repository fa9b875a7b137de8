#include "common/model_consistency.h"

#include "absl/strings/str_cat.h"

namespace herald {

bool IsSynchronousSgd(const proto::SchedulingSpec& scheduling) {
  return scheduling.policy() != proto::POLICY_HET || scheduling.staleness() == 0;
}

std::string ModelConsistency(const proto::SchedulingSpec& scheduling) {
  if (IsSynchronousSgd(scheduling)) return "synchronous SGD";
  return absl::StrCat("bounded staleness ", scheduling.staleness(),
                      " (het): not the synchronous-SGD model");
}

}  // namespace herald
