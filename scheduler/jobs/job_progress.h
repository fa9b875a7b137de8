#pragma once
// A job's figures as plain logic: what the planner planned and sent, what
// the workers reported, and what follows from it (progress counters, the
// per-iteration history, losses, rate and ETA). No locking and no clock of
// its own: JobRun holds it under its lock and passes the time, so a test
// drives it with any sequence of events and times.
//
// Reports are checked here: each worker reports the iterations sent to it,
// in order. An iteration is complete when every worker reported it; they
// complete in order.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/scheduler.pb.h"
#include "scheduler/jobs/eval_round.h"
#include "scheduler/jobs/job_history.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

// One iteration as planned: its rows over every worker and its costs.
struct PlannedIteration {
  uint64_t iteration = 0;
  PlanCounts total;  // summed over the workers
  double plan_ms = 0;
  bool last = false;  // the job's last iteration
  // Id admission's and row expiry's counts after it (all 0 without them).
  uint64_t keys_admitted = 0, keys_waiting = 0, lookups_dropped = 0, rows_expired = 0;
  uint64_t expired_now = 0;  // rows deleted at this iteration's commit
};

class JobProgressTracker {
 public:
  // `spec_iterations`: the job's iterations if it names them (0: until the
  // data ends, known when the last is planned). `earlier`: the history of
  // the job's earlier runs this run continues.
  JobProgressTracker(uint32_t num_workers, uint32_t global_batch_size, uint64_t spec_iterations,
                     size_t history_points, const std::vector<proto::HistoryPoint>& earlier,
                     absl::Time started);

  // The run trains from `first_iteration` (a resumed job's; 0 otherwise).
  void StartAt(uint64_t first_iteration);
  // An iteration planned, before its steps are queued: its history point
  // exists from now on, so no report can come before it.
  void Planned(const PlannedIteration& planned);
  // Every step of `planned` queued (built and encoded in `encode_ms`): it
  // counts as planned from now on. The data loader has skipped
  // `malformed_lines` so far.
  void Queued(const PlannedIteration& planned, double encode_ms, uint64_t malformed_lines);
  // A step of the iteration being planned queued to `worker` (before it
  // can reach the worker, so its report is never early).
  void Sent(uint32_t worker) { ++sent_[worker]; }
  // A worker's report of an iteration. Errors: InvalidArgument (not the
  // iteration it reports next, or one not sent to it).
  absl::Status Reported(uint32_t worker, const proto::StepReport& report, absl::Time now);
  // An evaluation after `iteration` finished in `ms`; `files`: the files
  // it scored (eval.each_file; empty: the held-out samples).
  void Evaluated(uint64_t iteration, const EvalResult& result, double ms, absl::Time now,
                 const std::vector<std::string>& files = {});

  // Every planned iteration reported by every worker, the last included.
  bool AllReported() const {
    return planning_done_ && progress_.iteration() == first_iteration_ + planned_;
  }
  // Every worker reported `iteration`.
  bool HasReported(uint64_t iteration) const { return progress_.iteration() > iteration; }
  bool planning_done() const { return planning_done_; }
  uint64_t first_iteration() const { return first_iteration_; }
  // The job's iterations (0 until known).
  uint64_t total_iterations() const { return total_iterations_; }
  // The CRC of each worker's dense parameters in its last report.
  const std::vector<uint32_t>& final_crcs() const { return final_crc_; }

  // The counters; `mutable_progress` for what other parts record
  // (checkpoints, resume modes).
  proto::JobProgress Progress() const;
  proto::JobProgress* mutable_progress() { return &progress_; }
  std::vector<double> Losses() const { return losses_; }
  std::vector<proto::HistoryPoint> History() const { return history_.points(); }

 private:
  // An iteration planned and not yet reported by every worker: made when
  // it is planned (rows, hits), completed by the reports (loss, phases).
  struct Pending {
    uint32_t reports = 0;
    double loss_sum = 0;
    proto::HistoryPoint point;
  };
  // Moves the iterations every worker reported into the history, in order.
  void CompleteReported(absl::Time now);

  const uint32_t num_workers_;
  const uint32_t global_batch_size_;
  proto::JobProgress progress_;
  uint64_t total_iterations_;
  uint64_t first_iteration_ = 0;
  uint64_t planned_ = 0;
  bool planning_done_ = false;
  std::vector<uint64_t> next_report_;  // per worker
  std::vector<uint64_t> sent_;         // steps queued, per worker
  std::vector<uint32_t> final_crc_;    // per worker, last report
  std::map<uint64_t, Pending> pending_;
  std::vector<double> losses_;
  JobHistory history_;
  const absl::Time started_;
  absl::Time last_point_time_;
  uint64_t last_point_iteration_ = 0;
  uint64_t rows_vanilla_ = 0;
  uint64_t uses_ = 0;  // planned row uses and cache hits
  uint64_t hits_ = 0;
};

}  // namespace herald::scheduler
