#include "scheduler/jobs/ps_look_ahead.h"

#include <algorithm>

#include "common/logging.h"

namespace herald::scheduler {

std::unique_ptr<PsLookAhead> PsLookAhead::ForJob(ps::PsClient* ps, const std::string& job_id,
                                                 const proto::JobSpec& spec) {
  if (spec.ps().no_look_ahead()) return nullptr;
  absl::StatusOr<std::vector<proto::PsStatsResponse>> stats = ps->Stats(job_id);
  if (!stats.ok()) {
    HLOG_WARN("job {}: no look-ahead: {}", job_id, std::string(stats.status().message()));
    return nullptr;
  }
  const bool tiered =
      std::any_of(stats->begin(), stats->end(), [](const auto& s) { return s.has_disk_tier(); });
  if (!tiered) return nullptr;
  HLOG_INFO(
      "job {}: rows beyond the shards' memory budget are on disk; each planned "
      "iteration's rows are sent to the shards ahead",
      job_id);
  return std::unique_ptr<PsLookAhead>(new PsLookAhead(ps, job_id));
}

void PsLookAhead::Send(const IterationPlan& plan) {
  const size_t tables = plan.workers.empty() ? 0 : plan.workers[0].tables.size();
  keys_.resize(tables);
  for (size_t t = 0; t < tables; ++t) {
    ps::TableKeys& k = keys_[t];
    k.table = TableId(static_cast<uint32_t>(t));
    k.keys.clear();
    for (const WorkerPlan& w : plan.workers) {
      const plan::TablePlan& p = w.tables[t];
      for (const auto* list : {&p.evict.keys, &p.fetch.keys, &p.push.keys, &p.writeback.keys}) {
        k.keys.insert(k.keys.end(), list->begin(), list->end());
      }
    }
    std::sort(k.keys.begin(), k.keys.end());
    k.keys.erase(std::unique(k.keys.begin(), k.keys.end()), k.keys.end());
  }
  absl::Status s = ps_->LookAhead(job_id_, Iteration(plan.iteration), keys_);
  if (!s.ok() && !warned_) {
    warned_ = true;
    HLOG_WARN(
        "job {}: look-ahead of iteration {} failed (the shards read those rows when "
        "needed): {}",
        job_id_, plan.iteration, std::string(s.message()));
  }
}

}  // namespace herald::scheduler
