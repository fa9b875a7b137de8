#pragma once
// One iteration's work for one worker: its samples (categorical features
// given as cache slots) and the cache plan of every table. Built by the
// scheduler (scheduler/planner/step_builder.h), sent as a proto::WorkerStep
// (codec: plan/step_codec.h), executed by the worker's StepExecutor.

#include <cstdint>
#include <string>
#include <vector>

#include "plan/table_plan.h"

namespace herald::plan {

// A table's slots per sample, CSR: sample i uses slots[offsets[i] ..
// offsets[i + 1]).
struct TableSamples {
  std::vector<uint32_t> offsets;  // num_samples + 1, from 0, non-decreasing
  std::vector<uint32_t> slots;
  // A table several features look up: per sample, each feature's slot
  // count in feature order (num_samples × features; they sum to the
  // sample's). Empty for one feature.
  uint32_t features = 1;
  std::vector<uint32_t> feature_lengths;
  // Data with per-id weights: each entry of `slots`' weight. Empty: each
  // weighs 1.
  std::vector<float> weights;
};

struct Step {
  std::string job_id;
  uint64_t iteration = 0;
  uint32_t num_samples = 0;
  uint32_t global_batch_size = 0;
  uint32_t num_labels = 1;    // labels per sample
  std::vector<float> labels;  // num_samples × num_labels
  std::vector<float> dense;   // num_samples × num_dense
  // Each sample's index in the global batch (dropout masks are drawn by
  // it); empty: 0, 1, …, num_samples − 1.
  std::vector<uint32_t> sample_indices;
  std::vector<TableSamples> samples;  // one per table, in table order
  std::vector<TablePlan> plan;        // one per table (empty: no operation)
  // Set by the worker's StepExecutor, which checks a step ahead while the
  // device finishes the one before: a token unique in the process for that
  // check (0: not checked). A copy or move carries it; the executor that
  // checked it runs it without a second check only if its cache has not
  // changed since.
  mutable uint64_t checked_at = 0;
  // Set by the executor's StepUpload when it packs this step's lists ahead
  // (0: not packed); a copy or move carries it. Neither mark survives a
  // change of the step's content: change a step only before it is run or
  // given as the next one.
  mutable uint64_t staged_as = 0;
  // Set by the worker where it computed ahead, off the executing thread,
  // the initial values of the rows plan[t].init names
  // (StepExecutor::PrepareAhead): per table, those rows in init order
  // (empty for all tables: not computed, the executor computes them).
  std::vector<std::vector<float>> initial_rows;
};

}  // namespace herald::plan
