#include "common/math/optimizer_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/rng.h"

namespace herald::math {

absl::StatusOr<LearningRateSchedule> ScheduleFromSpec(const proto::LearningRateSchedule& spec,
                                                      const std::string& field) {
  constexpr uint64_t kMaxIterations = uint64_t{1} << 40;
  LearningRateSchedule s;
  s.warmup_iterations = spec.warmup_iterations();
  s.step_every = spec.step_every();
  s.step_factor = spec.step_factor();
  s.decay_iterations = spec.decay_iterations();
  s.min_factor = spec.min_factor();
  for (auto [name, value] : {std::pair{"warmup_iterations", spec.warmup_iterations()},
                             std::pair{"step_every", spec.step_every()},
                             std::pair{"decay_iterations", spec.decay_iterations()}}) {
    if (value > kMaxIterations) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".", name, ": must be <= 2^40, got ", value));
    }
  }
  switch (spec.decay()) {
    case proto::DECAY_CONSTANT:
      s.decay = LearningRateSchedule::Decay::kConstant;
      break;
    case proto::DECAY_STEP:
      s.decay = LearningRateSchedule::Decay::kStep;
      if (spec.step_every() == 0) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".step_every: must be > 0"));
      }
      if (!(spec.step_factor() > 0 && spec.step_factor() <= 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".step_factor: must be in (0, 1], got ", spec.step_factor()));
      }
      break;
    case proto::DECAY_COSINE:
      s.decay = LearningRateSchedule::Decay::kCosine;
      if (spec.decay_iterations() == 0) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".decay_iterations: must be > 0"));
      }
      if (!(spec.min_factor() >= 0 && spec.min_factor() <= 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".min_factor: must be in [0, 1], got ", spec.min_factor()));
      }
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(field, ".decay: unknown"));
  }
  return s;
}

absl::StatusOr<SparseOptimizerConfig> SparseOptimizerFromSpec(const proto::OptimizerSpec& spec,
                                                              const std::string& field) {
  SparseOptimizerConfig c;
  switch (spec.kind()) {
    case proto::OPTIMIZER_SGD:
      c.kind = SparseOptimizerKind::kSgd;
      break;
    case proto::OPTIMIZER_ADAGRAD:
      c.kind = SparseOptimizerKind::kAdagrad;
      break;
    case proto::OPTIMIZER_ROWWISE_ADAGRAD:
      c.kind = SparseOptimizerKind::kRowwiseAdagrad;
      break;
    case proto::OPTIMIZER_ADAM:
      c.kind = SparseOptimizerKind::kAdam;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".kind: must be OPTIMIZER_SGD, OPTIMIZER_ADAGRAD, ",
                       "OPTIMIZER_ROWWISE_ADAGRAD or OPTIMIZER_ADAM"));
  }
  if (!(spec.learning_rate() > 0) || !std::isfinite(spec.learning_rate())) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".learning_rate: must be a finite number > 0, got ", spec.learning_rate()));
  }
  c.learning_rate = spec.learning_rate();
  if (spec.epsilon() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".epsilon: must be >= 0"));
  }
  if (spec.epsilon() > 0) c.epsilon = spec.epsilon();
  for (auto [name, value] : {std::pair{"beta1", spec.beta1()}, std::pair{"beta2", spec.beta2()}}) {
    if (value < 0 || value >= 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".", name, ": must be in [0, 1), got ", value));
    }
  }
  if (spec.beta1() > 0) c.beta1 = spec.beta1();
  if (spec.beta2() > 0) c.beta2 = spec.beta2();
  if (spec.initial_accumulator() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".initial_accumulator: must be >= 0"));
  }
  c.initial_accumulator = spec.initial_accumulator();
  auto schedule = ScheduleFromSpec(spec.schedule(), field + ".schedule");
  if (!schedule.ok()) return schedule.status();
  c.schedule = *schedule;
  if (!(spec.weight_decay() >= 0) || !std::isfinite(spec.weight_decay())) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".weight_decay: must be a finite number >= 0, got ", spec.weight_decay()));
  }
  if (spec.weight_decay() != 0 && field != "dense_optimizer") {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".weight_decay: applies to dense_optimizer only"));
  }
  return c;
}

}  // namespace herald::math

namespace herald::math {

absl::StatusOr<SparseOptimizerConfig> TableOptimizerFromSpec(const proto::JobSpec& spec,
                                                             int table) {
  const proto::TableSpec& t = spec.tables(table);
  const bool own = t.has_optimizer() && t.optimizer().kind() != proto::OPTIMIZER_KIND_UNSPECIFIED;
  return own ? SparseOptimizerFromSpec(t.optimizer(),
                                       "tables[" + std::to_string(table) + "].optimizer")
             : SparseOptimizerFromSpec(spec.sparse_optimizer(), "sparse_optimizer");
}

float EffectiveInitScale(float init_scale, uint32_t dim) {
  return init_scale > 0 ? init_scale : 1.0f / std::sqrt(static_cast<float>(dim));
}

void InitialRow(uint64_t seed, uint32_t table, uint64_t key, uint32_t dim, float init_scale,
                const SparseOptimizerConfig& optimizer, float* row) {
  InitEmbeddingRow(seed, table, key, EffectiveInitScale(init_scale, dim), row, dim);
  InitOptimizerState(optimizer, dim, row + dim);
}

}  // namespace herald::math
