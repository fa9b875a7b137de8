#pragma once
// The single-process reference a distributed job must equal: the same job
// trained by worker::ReferenceTrainer on the same batches, and the check of
// an exported model against it (gtest expectations):
//   - dense parameters: ‖x − ref‖₂ ≤ 1e-5 · ‖ref‖₂ over the whole vector;
//   - embeddings: per table, the same trained keys, and ‖x − ref‖₂ ≤
//     1e-5 · ‖ref‖₂ over all of the table's rows (values + optimizer state).

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/ids.h"
#include "proto/job.pb.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"

namespace herald::testing {

inline constexpr double kReferenceRelativeError = 1e-5;

struct ReferenceModel {
  std::unique_ptr<worker::CpuDevice> device = std::make_unique<worker::CpuDevice>();
  std::unique_ptr<worker::ReferenceTrainer> trainer;
  std::vector<double> losses;                  // per iteration, per sample
  std::vector<absl::flat_hash_set<Key>> keys;  // trained keys per table (live: not expired)
  uint64_t expired = 0;                        // rows deleted by row expiry
};

// Trains `spec` (its training split, in the scheduler's batch order).
ReferenceModel TrainReference(const proto::JobSpec& spec);

// ‖a − b‖₂ / ‖b‖₂ (‖a − b‖₂ when b is zero).
double RelativeError(const std::vector<double>& a, const std::vector<double>& b);

// The export in `dir` (heraldctl export) trained `iterations` and equals
// `ref`. `warm_started`: the job fetched hot rows it may never train; they
// are in the export at their initial values, beside every reference row.
// `relative`: the tolerance (long jobs whose sums ran in other orders drift
// further within float rounding).
void ExpectExportEqualsReference(const std::string& dir, const ReferenceModel& ref,
                                 uint64_t iterations, bool warm_started = false,
                                 double relative = kReferenceRelativeError);

}  // namespace herald::testing
