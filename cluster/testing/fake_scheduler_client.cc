#include "cluster/testing/fake_scheduler_client.h"

namespace herald::cluster::testing {

FakeStepReader::FakeStepReader(std::vector<proto::WorkerStep> steps, absl::Status end,
                               bool hold_open)
    : steps_(steps.begin(), steps.end()), end_(std::move(end)), hold_open_(hold_open) {}

bool FakeStepReader::Read(proto::WorkerStep* step) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return cancelled_ || !steps_.empty() || !hold_open_;
  };
  mu_.Await(absl::Condition(&ready));
  if (cancelled_ || steps_.empty()) return false;
  *step = std::move(steps_.front());
  steps_.pop_front();
  return true;
}

absl::Status FakeStepReader::Finish() {
  absl::MutexLock lock(&mu_);
  return cancelled_ ? absl::CancelledError("the stream was cancelled") : end_;
}

void FakeStepReader::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

bool FakeStepReader::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

void FakeSchedulerClient::SetJoin(absl::StatusOr<proto::JoinJobResponse> join) {
  absl::MutexLock lock(&mu_);
  join_ = std::move(join);
}

void FakeSchedulerClient::SetSteps(std::vector<proto::WorkerStep> steps, absl::Status end,
                                   bool hold_open) {
  absl::MutexLock lock(&mu_);
  steps_ = std::move(steps);
  end_ = std::move(end);
  hold_open_ = hold_open;
}

absl::StatusOr<proto::JoinJobResponse> FakeSchedulerClient::JoinJob(const proto::JoinJobRequest&) {
  absl::MutexLock lock(&mu_);
  return join_;
}

std::unique_ptr<StepReader> FakeSchedulerClient::OpenSteps(const proto::WorkerStepsRequest&) {
  absl::MutexLock lock(&mu_);
  return std::make_unique<FakeStepReader>(steps_, end_, hold_open_);
}

absl::Status FakeSchedulerClient::ReportStep(const proto::StepReport& report) {
  absl::MutexLock lock(&mu_);
  reports_.push_back(report);
  return absl::OkStatus();
}

absl::Status FakeSchedulerClient::ReportEval(const proto::EvalReport& report) {
  absl::MutexLock lock(&mu_);
  evals_.push_back(report);
  return absl::OkStatus();
}

absl::Status FakeSchedulerClient::UploadDense(const std::string&, const std::string&, uint64_t,
                                              const std::vector<float>& values) {
  absl::MutexLock lock(&mu_);
  uploaded_ = values;
  return absl::OkStatus();
}

absl::Status FakeSchedulerClient::UploadCheckpointDense(const std::string&, const std::string&,
                                                        uint64_t, uint64_t,
                                                        const std::vector<float>&,
                                                        const std::vector<float>&) {
  return absl::OkStatus();
}

std::vector<proto::StepReport> FakeSchedulerClient::reports() const {
  absl::MutexLock lock(&mu_);
  return reports_;
}

std::vector<proto::EvalReport> FakeSchedulerClient::evals() const {
  absl::MutexLock lock(&mu_);
  return evals_;
}

std::vector<float> FakeSchedulerClient::uploaded() const {
  absl::MutexLock lock(&mu_);
  return uploaded_;
}

}  // namespace herald::cluster::testing
