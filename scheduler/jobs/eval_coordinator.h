#pragma once
// A job's evaluations (eval.*): the held-out batches, read and encoded once
// when the job starts, and the one evaluation running at a time: the steps
// that hand each worker its share of the batches, the predictions they
// send back, and the exact metrics of each label the model predicts (AUC
// and log loss, or RMSE) over every batch in order.
// Thread-safe: predictions arrive on RPC threads while the job's thread
// waits for them.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "scheduler/data/held_out.h"
#include "scheduler/data/key_lifecycle.h"
#include "scheduler/jobs/eval_round.h"

namespace herald::scheduler {

class EvalCoordinator {
 public:
  EvalCoordinator(std::string job_id, uint32_t num_workers)
      : job_id_(std::move(job_id)), num_workers_(num_workers) {}

  // Reads the held-out batches `settings` asks for (none when it does not
  // evaluate). Call once, before any evaluation. Errors: the data source's.
  absl::Status Load(const proto::JobSpec& spec, const EvalSettings& settings);

  // No held-out batch: nothing to evaluate.
  bool empty() const { return batches_.empty(); }

  // The training stream's id admission (null: none). Each evaluation
  // then scores the held-out batches with only the keys admitted by its
  // iteration, as if the others were absent.
  void SetAdmission(std::shared_ptr<const KeyLifecycle> admission) {
    absl::MutexLock lock(&mu_);
    admission_ = std::move(admission);
  }

  // A step for one worker: which, and what it evaluates.
  using WorkerEvalStep = std::pair<uint32_t, std::shared_ptr<const proto::WorkerStep>>;
  // Starts the evaluation after `iteration` (it runs before step iteration
  // + 1): the steps to queue, every held-out batch once.
  std::vector<WorkerEvalStep> Begin(uint64_t iteration);
  // A worker's predictions for one batch. Errors: FailedPrecondition (no
  // evaluation before that iteration running), EvalRound::Accept's.
  absl::Status Accept(uint32_t worker, const proto::EvalReport& report);
  // Waits up to `wait` for every prediction, or until Abort(); true when
  // they all arrived.
  bool AwaitComplete(absl::Duration wait) const;
  // Wakes a waiting AwaitComplete at once (the job failed); safe from any
  // thread, any time.
  void Abort();
  // REQUIRES: AwaitComplete() returned true. Ends the evaluation.
  EvalResult Finish();

 private:
  const std::string job_id_;
  const uint32_t num_workers_;
  // Set by Load, then read-only: encoded for the workers, their sizes and
  // labels in order.
  std::vector<proto::EvalBatch> batches_;
  // With admission: the batches unencoded (each evaluation filters and
  // encodes its own copy).
  std::vector<data::KeyBatch> raw_batches_;
  std::vector<uint32_t> batch_sizes_;
  std::vector<float> labels_;  // num_labels_ per sample: every label column
  uint32_t num_labels_ = 1;
  std::vector<TrainedLabel> heads_;  // what the predictions are of, per head

  mutable absl::Mutex mu_;
  std::unique_ptr<EvalRound> round_ ABSL_GUARDED_BY(mu_);  // the one running
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const KeyLifecycle> admission_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::scheduler
