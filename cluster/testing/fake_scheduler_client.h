#pragma once
// A scripted SchedulerClient for unit tests of the worker (testonly): the
// JoinJob answer and each stream's steps and end are set by the test; every
// report and upload is recorded. Thread-safe.

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "cluster/scheduler_client.h"

namespace herald::cluster::testing {

// Gives `steps` in order, then ends with `end`; with `hold_open` it waits
// after the last step until Cancel() and then ends Cancelled, as a
// scheduler that keeps the stream open until the run ends.
class FakeStepReader final : public StepReader {
 public:
  FakeStepReader(std::vector<proto::WorkerStep> steps, absl::Status end, bool hold_open = false);
  bool Read(proto::WorkerStep* step) override;
  absl::Status Finish() override;
  void Cancel() override;
  bool cancelled() const;

 private:
  mutable absl::Mutex mu_;
  std::deque<proto::WorkerStep> steps_ ABSL_GUARDED_BY(mu_);
  absl::Status end_ ABSL_GUARDED_BY(mu_);
  bool hold_open_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

class FakeSchedulerClient final : public SchedulerClient {
 public:
  // What the next JoinJob returns (NotFound until set) and the next
  // OpenSteps streams.
  void SetJoin(absl::StatusOr<proto::JoinJobResponse> join);
  void SetSteps(std::vector<proto::WorkerStep> steps, absl::Status end, bool hold_open = false);

  absl::StatusOr<proto::JoinJobResponse> JoinJob(const proto::JoinJobRequest& request) override;
  std::unique_ptr<StepReader> OpenSteps(const proto::WorkerStepsRequest& request) override;
  absl::Status ReportStep(const proto::StepReport& report) override;
  absl::Status ReportEval(const proto::EvalReport& report) override;
  absl::Status UploadDense(const std::string& node_id, const std::string& job_id, uint64_t run_id,
                           const std::vector<float>& values) override;
  absl::Status UploadCheckpointDense(const std::string& node_id, const std::string& job_id,
                                     uint64_t run_id, uint64_t iteration,
                                     const std::vector<float>& values,
                                     const std::vector<float>& state) override;

  std::vector<proto::StepReport> reports() const;
  std::vector<proto::EvalReport> evals() const;
  std::vector<float> uploaded() const;  // the last final upload's values

 private:
  mutable absl::Mutex mu_;
  absl::StatusOr<proto::JoinJobResponse> join_ ABSL_GUARDED_BY(mu_) =
      absl::NotFoundError("no job yet");
  std::vector<proto::WorkerStep> steps_ ABSL_GUARDED_BY(mu_);
  absl::Status end_ ABSL_GUARDED_BY(mu_);
  bool hold_open_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<proto::StepReport> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<proto::EvalReport> evals_ ABSL_GUARDED_BY(mu_);
  std::vector<float> uploaded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::cluster::testing
