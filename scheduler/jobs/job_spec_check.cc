#include "scheduler/jobs/job_spec_check.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/data/schema.h"
#include "common/model_spec_check.h"
#include "common/status.h"
#include "scheduler/planner/scheduling_spec.h"

namespace herald::scheduler {

absl::Status ValidateJobSpec(const proto::JobSpec& spec) {
  if (spec.tables_size() == 0) return absl::InvalidArgumentError("tables: at least one table");
  if (spec.tables_size() > static_cast<int>(data::DataSchema::kMaxSparse)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tables: ", spec.tables_size(), " tables, at most ", data::DataSchema::kMaxSparse));
  }
  // Criteo's layout holds 32 dense features; data with a schema more.
  const uint32_t max_dense =
      spec.data().has_schema() ? data::DataSchema::kMaxDense : data::DataSchema::kMaxCriteoDense;
  if (spec.num_dense() > max_dense) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_dense: ", spec.num_dense(), ", at most ", max_dense,
        spec.data().has_schema() ? ""
                                 : " for Criteo-shaped data (describe more with data.schema)"));
  }
  for (int t = 0; t < spec.tables_size(); ++t) {
    if (spec.tables(t).dim() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("tables[", t, "].dim: must be > 0"));
    }
  }
  HERALD_RETURN_IF_ERROR(ValidateModelSpec(spec));
  if (spec.global_batch_size() == 0) {
    return absl::InvalidArgumentError("global_batch_size: must be > 0");
  }
  if (spec.iterations() == 0 && spec.epochs() == 0 && !spec.data().follow()) {
    return absl::InvalidArgumentError("iterations: set iterations or epochs");
  }
  const uint32_t workers = spec.num_workers();
  if (workers > 0 && spec.global_batch_size() < workers) {
    return absl::InvalidArgumentError(absl::StrCat("global_batch_size: ", spec.global_batch_size(),
                                                   " is less than num_workers ", workers));
  }
  const proto::DataSpec& d = spec.data();
  switch (d.format()) {
    case proto::DATA_FORMAT_CRITEO_TSV:
    case proto::DATA_FORMAT_HERALD_BINARY:
    case proto::DATA_FORMAT_CSV:
      if (d.paths().empty()) return absl::InvalidArgumentError("data.paths: empty");
      break;
    case proto::DATA_FORMAT_GENERATED:
      if (d.generator().rows() == 0) {
        return absl::InvalidArgumentError("data.generator.rows: must be > 0");
      }
      break;
    default:
      return absl::InvalidArgumentError(
          "data.format: must be CRITEO_TSV, HERALD_BINARY, CSV or GENERATED");
  }
  if (d.follow()) {
    if (d.format() == proto::DATA_FORMAT_GENERATED || d.paths_size() != 1) {
      return absl::InvalidArgumentError(
          "data.follow: data.paths must name one directory of files (not generated data)");
    }
    if (d.eval_fraction() > 0) {
      return absl::InvalidArgumentError(
          "data.follow: no held-out split (data.eval_fraction 0) on a followed directory");
    }
    if (spec.epochs() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("epochs: ", spec.epochs(), " with data.follow, which reads each file once"));
    }
    if (!(d.follow_until_idle_seconds() >= 0) || std::isinf(d.follow_until_idle_seconds())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data.follow_until_idle_seconds: ", d.follow_until_idle_seconds(), ", want ≥ 0"));
    }
  }
  if (!(d.eval_fraction() >= 0 && d.eval_fraction() < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.eval_fraction: ", d.eval_fraction(), " not in [0, 1)"));
  }
  HERALD_RETURN_IF_ERROR(
      ValidateSchedulingSpec(spec.scheduling(), static_cast<uint32_t>(spec.tables_size())));
  for (int t = 0; t < spec.tables_size(); ++t) {
    if (spec.tables(t).expiry().after_iterations() == 0) continue;
    if (spec.scheduling().policy() == proto::POLICY_HET) {
      return absl::InvalidArgumentError(
          absl::StrCat("tables[", t,
                       "].expiry: not with scheduling.policy het, whose workers hold "
                       "gradients of rows the PS would delete"));
    }
  }
  if (spec.checkpoint().every_iterations() > 0 && spec.checkpoint().dir().empty()) {
    return absl::InvalidArgumentError("checkpoint.every_iterations: set checkpoint.dir too");
  }
  if (const proto::ExportSpec& x = spec.exports(); x.every_minutes() != 0) {
    if (!(x.every_minutes() > 0) || std::isinf(x.every_minutes())) {
      return absl::InvalidArgumentError(
          absl::StrCat("exports.every_minutes: ", x.every_minutes(), ", want > 0"));
    }
    if (spec.checkpoint().every_iterations() == 0) {
      return absl::InvalidArgumentError(
          "exports.every_minutes: set checkpoint.every_iterations too (each export is made "
          "from a periodic checkpoint)");
    }
  }
  if (const proto::ExportSpec& x = spec.exports();
      x.every_iterations() > 0 || x.every_minutes() > 0) {
    const uint64_t every = spec.checkpoint().every_iterations();
    if (x.dir().empty() || x.dir()[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("exports.dir: \"", x.dir(), "\" is not an absolute path"));
    }
    if (x.every_iterations() > 0 && (every == 0 || x.every_iterations() % every != 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("exports.every_iterations: ", x.every_iterations(),
                       " must be a multiple of checkpoint.every_iterations (", every,
                       "): each export is made from that iteration's checkpoint"));
    }
  }
  if (!proto::DataPath_IsValid(spec.data_path())) {
    return absl::InvalidArgumentError(
        absl::StrCat("data_path: ", spec.data_path(), " is not a DataPath (0, 1 or 2)"));
  }
  const proto::EvalSpec& e = spec.eval();
  if (e.every_iterations() > 0 && !(d.eval_fraction() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("eval.every_iterations: ", e.every_iterations(),
                     " needs held-out samples: set data.eval_fraction > 0"));
  }
  if (e.each_file() && !d.follow()) {
    return absl::InvalidArgumentError(
        "eval.each_file: scores each new file of a followed directory; set data.follow");
  }
  constexpr uint32_t kMaxEvalBatch = 1 << 20;
  if (e.batch_size() > kMaxEvalBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("eval.batch_size: ", e.batch_size(), " is over ", kMaxEvalBatch));
  }
  return absl::OkStatus();
}

}  // namespace herald::scheduler
