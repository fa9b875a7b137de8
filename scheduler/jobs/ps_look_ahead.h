#pragma once
// The scheduler's side of the PS disk tier's look-ahead
// (docs/parameter-server.md, "Tables larger than memory"): as soon as an
// iteration is planned (iterations before the workers train it: the step
// queues' depth), the rows it touches on the parameter servers (fetched,
// pushed, evicted or written back by any worker) go to their shards, which
// load those on disk in the background. No other system knows a batch's
// rows this early: it is the planner's read-ahead.

#include <memory>
#include <string>
#include <vector>

#include "proto/job.pb.h"
#include "ps_server/client/ps_client.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

class PsLookAhead {
 public:
  // Null when no shard has a disk tier for the job (its Stats say) or the
  // spec turns the look-ahead off (ps.no_look_ahead). `ps` must outlive it.
  static std::unique_ptr<PsLookAhead> ForJob(ps::PsClient* ps, const std::string& job_id,
                                             const proto::JobSpec& spec);

  // Sends `plan`'s rows. A failure is logged (once) and not fatal: the
  // shards then read those rows when the requests come.
  void Send(const IterationPlan& plan);

 private:
  PsLookAhead(ps::PsClient* ps, std::string job_id) : ps_(ps), job_id_(std::move(job_id)) {}

  ps::PsClient* const ps_;
  const std::string job_id_;
  std::vector<ps::TableKeys> keys_;  // reused
  bool warned_ = false;
};

}  // namespace herald::scheduler
