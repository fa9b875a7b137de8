#pragma once
// The held-out samples a job is evaluated on (data.eval_fraction): the
// first `max_samples` of the held-out stream, in batches of `batch_size`,
// in stream order. The evaluations during a job (eval.*) and `heraldctl
// evaluate --max-samples` read the same batches, so they score the same
// samples in the same order. With eval.each_file, the first `max_samples`
// of each new file of a followed directory, in file order (`heraldctl
// evaluate --data FILE` scores the same).

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "common/data/key_batch.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"

namespace herald::scheduler {

// A job's eval.* with the defaults filled in.
struct EvalSettings {
  uint64_t every_iterations = 0;  // 0: never during the job
  bool at_end = false;
  // data.follow with eval.each_file: each new file is scored before its
  // samples train (not part of enabled(), which is about held-out data).
  bool each_file = false;
  uint64_t max_samples = 0;
  uint32_t batch_size = 0;
  // True when the job evaluates at all (it holds data out, and asks for
  // evaluations during the job or at its end).
  bool enabled() const { return every_iterations > 0 || at_end; }
  // True when an evaluation follows iteration `iteration` (not the last).
  bool EvaluatesAfter(uint64_t iteration) const {
    return every_iterations > 0 && (iteration + 1) % every_iterations == 0;
  }
};
EvalSettings EvalSettingsFromSpec(const proto::JobSpec& spec);

// Calls `visit` for each held-out batch, in order, until `max_samples`
// samples were visited (0: all of them; the last batch is cut short to
// fit). Errors: the data source's, `visit`'s.
absl::Status ForEachHeldOutBatch(const proto::JobSpec& spec, uint32_t batch_size,
                                 uint64_t max_samples,
                                 const std::function<absl::Status(const data::KeyBatch&)>& visit);

// The same for the first `max_samples` samples of one file `path` of the
// job's data format and schema, in file order (data.follow: one file of
// the directory; any path for `heraldctl evaluate --data`), the last
// batch cut short. Errors: the file's reader's, `visit`'s.
absl::Status ForEachFileBatch(const proto::JobSpec& spec, const std::string& path,
                              uint32_t batch_size, uint64_t max_samples,
                              const std::function<absl::Status(const data::KeyBatch&)>& visit);

// Held-out batch `index` as WorkerStep.eval carries it (the labels stay
// with the scheduler).
proto::EvalBatch EncodeEvalBatch(const data::KeyBatch& batch, uint32_t index);

}  // namespace herald::scheduler
