#pragma once
// Test helpers (testonly) for training the scheduler's plans on real
// in-process workers and comparing the outcome with the single-process
// reference.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/key_batch.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "worker/reference/reference_trainer.h"

namespace herald::scheduler {

// Seeded global batches: labels 30% positive, uniform dense features, and
// per table skewed keys (key = ⌊keys·u²⌋ + 1000·t, u uniform) so rows are
// owned, shared, evicted and handed between workers; the last table is
// multi-hot (1 or 2 keys per sample).
std::vector<data::KeyBatch> SkewedBatches(size_t iterations, uint32_t batch_size, uint32_t tables,
                                          uint32_t num_dense, uint32_t keys_per_table = 30);

struct PlannedRun {
  std::string policy = "herald";
  uint32_t workers = 1;
  uint32_t capacity = 12;            // cache rows per table and worker
  uint32_t slots = 40;               // slot array size per table
  std::vector<std::string> devices;  // per worker (empty: every worker on the CPU)
};

// The steps of `batches` planned under the run's policy, as the scheduler
// sends them: [iteration][worker], the last marked last.
absl::StatusOr<std::vector<std::vector<proto::WorkerStep>>> PlanWorkerSteps(
    const proto::JobSpec& spec, const std::vector<data::KeyBatch>& batches, const PlannedRun& run);

// Plans `batches` under the run's policy, trains the steps on in-process
// workers against a 2-shard in-process PS, and compares with `reference`
// (dense parameters, per-iteration losses, every row of keys 0..29 of each
// table, see worker::testing::CompareWithReference). `dense`: worker 0's
// final dense parameters, if wanted. `spec.name()` names the job.
absl::Status TrainPlannedAndCompare(const proto::JobSpec& spec,
                                    const std::vector<data::KeyBatch>& batches,
                                    const PlannedRun& run,
                                    const worker::ReferenceTrainer& reference,
                                    const std::vector<double>& reference_losses,
                                    std::vector<float>* dense = nullptr);

}  // namespace herald::scheduler
