#pragma once
// A worker's per-step calls after a step's work: its iteration-done report
// to the shards (the commit) and its StepReport to the scheduler, sent in
// step order on a thread of their own ("step-report"), so that the next
// step waits for neither (docs/worker.md, "Worker process").
//
// Contract, per submitted step, in submission order: its commit runs first
// (where given), then its report is sent. A report therefore reaches the
// scheduler only after every shard took that step's iteration-done report,
// as when both were sent inline: the scheduler may end the job on the
// shards, or checkpoint them, once every worker reported an iteration.
// Each report carries the time its commit took (commit_ms, and the disk
// reads it returned) and the time the report before it took to send
// (report_ms).
//
// The first failure stops the reporter: later steps are neither committed
// nor reported, `on_failure(iteration, error)` runs once on the reporter's
// thread (the session reports the error and calls off work in flight),
// and Submit and Flush return the error from then on. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/scheduler_client.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"

namespace herald::worker {

class StepReporter {
 public:
  // A step's commit: the iteration-done report to every shard, returning
  // the disk reads it committed (ps::PsClient::IterationDone).
  using Commit = std::function<absl::StatusOr<ps::PsDiskReads>()>;
  using OnFailure = std::function<void(uint64_t iteration, const absl::Status& error)>;

  // `scheduler` must outlive the reporter. At most `max_queued` steps wait
  // to be committed and reported; Submit waits for room beyond that.
  StepReporter(cluster::SchedulerClient* scheduler, OnFailure on_failure, size_t max_queued = 2);
  // Sends what is queued (Flush), then joins the thread.
  ~StepReporter();
  StepReporter(const StepReporter&) = delete;
  StepReporter& operator=(const StepReporter&) = delete;

  // Queues `report` (its iteration) after `commit` (null: none). Returns
  // the reporter's first failure instead, queuing nothing, once it failed.
  absl::Status Submit(Commit commit, proto::StepReport report);
  // Waits until every queued step was committed and reported. Returns the
  // first failure, if any.
  absl::Status Flush();

 private:
  struct Queued {
    Commit commit;
    proto::StepReport report;
  };
  void Run();
  // Commits and reports one step. Errors: the commit's or the report's.
  absl::Status Send(Queued& step);

  cluster::SchedulerClient* const scheduler_;
  const OnFailure on_failure_;
  const size_t max_queued_;
  double last_report_ms_ = 0;  // reporter thread only
  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool sending_ ABSL_GUARDED_BY(mu_) = false;  // a step taken from the queue is in flight
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace herald::worker
