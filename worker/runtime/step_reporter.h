#pragma once
// A worker's per-step calls after a step's work: its iteration-done report
// to the shards (the commit) and its StepReport to the scheduler, sent in
// order on a thread of their own ("step-report"), so that the step's
// thread waits for neither (docs/worker.md, "Worker process").
//
// Contract: jobs run in the order they were queued. The executor queues a
// step's commit as soon as its pushes and write-backs are in (phase 9,
// StepExecutor::StartCommitsWith), the session its report once the step
// returned, so a step's report follows its commit, and reaches the
// scheduler only after every shard took that iteration-done report, as
// when both were sent inline: the scheduler may end the job on the shards,
// or checkpoint them, once every worker reported an iteration. A report
// whose iteration the reporter committed carries the time the commit took
// (commit_ms) and the disk reads it returned; every report carries the
// time the report before it took to send (report_ms).
//
// The first failure stops the reporter: later jobs are dropped,
// `on_failure(iteration, error)` runs once on the reporter's thread (the
// session reports the error and calls off work in flight), and
// StartCommit, Submit and Flush return the error from then on.
// Thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
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

  // `scheduler` must outlive the reporter. At most `max_queued` jobs wait;
  // StartCommit and Submit wait for room beyond that.
  StepReporter(cluster::SchedulerClient* scheduler, OnFailure on_failure, size_t max_queued = 4);
  // Runs what is queued, then joins the thread.
  ~StepReporter();
  StepReporter(const StepReporter&) = delete;
  StepReporter& operator=(const StepReporter&) = delete;

  // Queues iteration `iteration`'s commit. Returns the reporter's first
  // failure instead, queuing nothing, once it failed.
  absl::Status StartCommit(uint64_t iteration, Commit commit);
  // Queues `report` (its iteration's; after its commit, where queued).
  // Returns the first failure instead, as StartCommit.
  absl::Status Submit(proto::StepReport report);
  // Waits until every queued job ran. Returns the first failure, if any.
  absl::Status Flush();

 private:
  struct Job {
    uint64_t iteration = 0;
    Commit commit;             // a commit, or
    proto::StepReport report;  // a report
  };
  // What a commit gave, for its report.
  struct Committed {
    double ms = 0;
    ps::PsDiskReads reads;
  };
  absl::Status Queue(Job job);
  void Run();
  // Runs one job. Errors: the commit's or the report's.
  absl::Status Send(Job& job);

  cluster::SchedulerClient* const scheduler_;
  const OnFailure on_failure_;
  const size_t max_queued_;
  // Reporter thread only.
  double last_report_ms_ = 0;
  std::map<uint64_t, Committed> committed_;  // by iteration, until reported
  absl::Mutex mu_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // a job taken from the queue is running
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace herald::worker
