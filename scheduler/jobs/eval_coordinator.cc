#include "scheduler/jobs/eval_coordinator.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status.h"

namespace herald::scheduler {

absl::Status EvalCoordinator::Load(const proto::JobSpec& spec, const EvalSettings& settings) {
  if (!settings.enabled()) return absl::OkStatus();
  heads_ = TrainedLabelsOf(spec);
  const bool admission = !KeyLifecycle::RuleOf(spec).empty();
  HERALD_RETURN_IF_ERROR(ForEachHeldOutBatch(
      spec, settings.batch_size, settings.max_samples, [&](const data::KeyBatch& batch) {
        if (admission) raw_batches_.push_back(batch);
        batches_.push_back(EncodeEvalBatch(batch, static_cast<uint32_t>(batches_.size())));
        batch_sizes_.push_back(batch.num_samples);
        num_labels_ = batch.num_labels;
        labels_.insert(labels_.end(), batch.labels.begin(), batch.labels.end());
        return absl::OkStatus();
      }));
  if (batches_.empty()) {
    HLOG_WARN("job {}: data.eval_fraction {} held out no sample: no evaluation", job_id_,
              spec.data().eval_fraction());
  }
  return absl::OkStatus();
}

std::vector<EvalCoordinator::WorkerEvalStep> EvalCoordinator::Begin(uint64_t iteration) {
  std::shared_ptr<const KeyLifecycle> admission;
  {
    absl::MutexLock lock(&mu_);
    round_ = std::make_unique<EvalRound>(iteration + 1, batch_sizes_, num_workers_, heads_);
    admission = admission_;
  }
  std::vector<WorkerEvalStep> steps;
  for (uint32_t b = 0; b < batches_.size(); ++b) {
    auto step = std::make_shared<proto::WorkerStep>();
    step->set_job_id(job_id_);
    step->set_iteration(iteration + 1);
    if (admission != nullptr && b < raw_batches_.size()) {
      data::KeyBatch admitted = raw_batches_[b];
      admission->FilterAdmittedBy(iteration, &admitted);
      *step->mutable_eval() = EncodeEvalBatch(admitted, b);
    } else {
      *step->mutable_eval() = batches_[b];
    }
    steps.emplace_back(EvalRound::WorkerOf(b, num_workers_), std::move(step));
  }
  return steps;
}

absl::Status EvalCoordinator::Accept(uint32_t worker, const proto::EvalReport& report) {
  absl::MutexLock lock(&mu_);
  if (round_ == nullptr || round_->iteration() != report.iteration()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id_, " runs no evaluation before iteration ", report.iteration()));
  }
  return round_->Accept(worker, report.index(), report.predictions());
}

bool EvalCoordinator::AwaitComplete(absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  auto complete = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return aborted_ || (round_ != nullptr && round_->complete());
  };
  return mu_.AwaitWithTimeout(absl::Condition(&complete), wait) && !aborted_;
}

void EvalCoordinator::Abort() {
  absl::MutexLock lock(&mu_);
  aborted_ = true;
}

EvalResult EvalCoordinator::Finish() {
  absl::MutexLock lock(&mu_);
  const EvalResult result = round_->Compute(labels_, num_labels_);
  round_.reset();
  return result;
}

}  // namespace herald::scheduler
