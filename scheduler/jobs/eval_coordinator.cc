#include "scheduler/jobs/eval_coordinator.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status.h"

namespace herald::scheduler {

void EvalSet::Add(const data::KeyBatch& batch, bool keep_raw) {
  if (keep_raw) raw_batches.push_back(batch);
  batches.push_back(EncodeEvalBatch(batch, static_cast<uint32_t>(batches.size())));
  batch_sizes.push_back(batch.num_samples);
  num_labels = batch.num_labels;
  labels.insert(labels.end(), batch.labels.begin(), batch.labels.end());
}

absl::Status EvalCoordinator::Load(const proto::JobSpec& spec, const EvalSettings& settings) {
  spec_ = spec;
  settings_ = settings;
  heads_ = TrainedLabelsOf(spec);
  keep_raw_ = !KeyLifecycle::RuleOf(spec).empty();
  if (!settings.enabled()) return absl::OkStatus();
  auto held_out = std::make_shared<EvalSet>();
  HERALD_RETURN_IF_ERROR(ForEachHeldOutBatch(spec, settings.batch_size, settings.max_samples,
                                             [&](const data::KeyBatch& batch) {
                                               held_out->Add(batch, keep_raw_);
                                               return absl::OkStatus();
                                             }));
  if (held_out->empty()) {
    HLOG_WARN("job {}: data.eval_fraction {} held out no sample: no evaluation", job_id_,
              spec.data().eval_fraction());
  }
  held_out_ = std::move(held_out);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const EvalSet>> EvalCoordinator::ReadFiles(
    const std::vector<std::string>& paths) const {
  auto set = std::make_shared<EvalSet>();
  for (const std::string& path : paths) {
    HERALD_RETURN_IF_ERROR(ForEachFileBatch(
        spec_, path, settings_.batch_size, settings_.max_samples, [&](const data::KeyBatch& batch) {
          set->Add(batch, keep_raw_);
          return absl::OkStatus();
        }));
  }
  return std::shared_ptr<const EvalSet>(std::move(set));
}

std::vector<EvalCoordinator::WorkerEvalStep> EvalCoordinator::Begin(
    uint64_t iteration, std::shared_ptr<const EvalSet> set) {
  if (set == nullptr) set = held_out_;
  std::shared_ptr<const KeyLifecycle> admission;
  {
    absl::MutexLock lock(&mu_);
    round_ = std::make_unique<EvalRound>(iteration + 1, set->batch_sizes, num_workers_, heads_);
    round_set_ = set;
    admission = admission_;
  }
  std::vector<WorkerEvalStep> steps;
  for (uint32_t b = 0; b < set->batches.size(); ++b) {
    auto step = std::make_shared<proto::WorkerStep>();
    step->set_job_id(job_id_);
    step->set_iteration(iteration + 1);
    if (admission != nullptr && b < set->raw_batches.size()) {
      data::KeyBatch admitted = set->raw_batches[b];
      admission->FilterAdmittedBy(iteration, &admitted);
      *step->mutable_eval() = EncodeEvalBatch(admitted, b);
    } else {
      *step->mutable_eval() = set->batches[b];
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
  const EvalResult result = round_->Compute(round_set_->labels, round_set_->num_labels);
  round_.reset();
  round_set_.reset();
  return result;
}

}  // namespace herald::scheduler
