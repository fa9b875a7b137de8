#pragma once
// A job's evaluations (eval.*): the held-out batches, read and encoded once
// when the job starts, or a followed directory's new files (eval.each_file),
// read when each is scored; and the one evaluation running at a time: the
// steps that hand each worker its share of the batches, the predictions
// they send back, and the exact metrics of each label the model predicts
// (AUC and log loss, or RMSE) over every batch in order.
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

// The samples of one evaluation, in order: encoded for the workers, with
// their batch sizes and labels.
struct EvalSet {
  std::vector<proto::EvalBatch> batches;
  // With admission or expiry: the batches unencoded (each evaluation
  // filters and encodes its own copy).
  std::vector<data::KeyBatch> raw_batches;
  std::vector<uint32_t> batch_sizes;
  std::vector<float> labels;  // num_labels per sample: every label column
  uint32_t num_labels = 1;

  bool empty() const { return batches.empty(); }
  uint64_t samples() const { return labels.size() / num_labels; }
  // Appends `batch` as the next one (`keep_raw`: also unencoded).
  void Add(const data::KeyBatch& batch, bool keep_raw);
};

class EvalCoordinator {
 public:
  EvalCoordinator(std::string job_id, uint32_t num_workers)
      : job_id_(std::move(job_id)), num_workers_(num_workers) {}

  // Reads the held-out batches `settings` asks for (none when it does not
  // evaluate held-out data). Call once, before any evaluation. Errors: the
  // data source's.
  absl::Status Load(const proto::JobSpec& spec, const EvalSettings& settings);

  // No held-out batch: nothing to evaluate with Begin(iteration).
  bool empty() const { return held_out_->empty(); }

  // The first eval.max_samples samples of each of `paths` (files of the
  // job's data), in order, as one set. REQUIRES: Load ran. Errors: the
  // files' readers'.
  absl::StatusOr<std::shared_ptr<const EvalSet>> ReadFiles(
      const std::vector<std::string>& paths) const;

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
  // + 1): the steps to queue, every batch of `set` once (null: the
  // held-out batches).
  std::vector<WorkerEvalStep> Begin(uint64_t iteration,
                                    std::shared_ptr<const EvalSet> set = nullptr);
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
  // Set by Load, then read-only.
  proto::JobSpec spec_;
  EvalSettings settings_;
  bool keep_raw_ = false;  // the job admits or expires keys
  std::shared_ptr<const EvalSet> held_out_ = std::make_shared<EvalSet>();
  std::vector<TrainedLabel> heads_;  // what the predictions are of, per head

  mutable absl::Mutex mu_;
  std::unique_ptr<EvalRound> round_ ABSL_GUARDED_BY(mu_);          // the one running
  std::shared_ptr<const EvalSet> round_set_ ABSL_GUARDED_BY(mu_);  // what it scores
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const KeyLifecycle> admission_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::scheduler
