#pragma once
// The reads a worker's plan makes of its cache for one table: for every
// sample it trains, each key of the sample with the slot the plan gives it.
// Shared by the plan checkers (plan_replay.h, staleness_checker.h), which
// judge each read by their own rules.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/data/key_batch.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

// Every sample of `batch` is given to exactly one worker of `plan`.
// Errors: InvalidArgument naming the first sample out of range, given
// twice, or given to no worker.
inline absl::Status CheckSamplePartition(const data::KeyBatch& batch, const IterationPlan& plan) {
  std::vector<uint8_t> seen(batch.num_samples, 0);
  for (size_t w = 0; w < plan.workers.size(); ++w) {
    for (uint32_t s : plan.workers[w].samples) {
      if (s >= batch.num_samples || seen[s]++) {
        return absl::InvalidArgumentError(
            absl::StrCat("worker ", w, ": sample ", s, " out of range or given twice"));
      }
    }
  }
  for (uint32_t s = 0; s < batch.num_samples; ++s) {
    if (!seen[s])
      return absl::InvalidArgumentError(absl::StrCat("sample ", s, " given to no worker"));
  }
  return absl::OkStatus();
}

// Calls read(sample, key, slot) for every key of every sample of `wp` in
// table `t` of `batch`, in sample order, and returns the first error it
// returns. Errors: InvalidArgument when the plan's per-sample slot lists do
// not match the samples' keys (the message says which sample).
template <typename Read>
absl::Status ForEachSampleRead(const data::KeyBatch& batch, const WorkerPlan& wp, uint32_t t,
                               Read&& read) {
  const plan::TableSamples& ts = wp.slots[t];
  const data::KeyBatch::Table& keys = batch.tables[t];
  if (ts.offsets.size() != wp.samples.size() + 1) {
    return absl::InvalidArgumentError("sample slot offsets do not match the samples");
  }
  for (size_t j = 0; j < wp.samples.size(); ++j) {
    const uint32_t s = wp.samples[j];
    const uint32_t n = keys.offsets[s + 1] - keys.offsets[s];
    if (ts.offsets[j + 1] - ts.offsets[j] != n || ts.offsets[j + 1] > ts.slots.size()) {
      return absl::InvalidArgumentError(absl::StrCat("sample ", s, " has ", n, " keys but ",
                                                     ts.offsets[j + 1] - ts.offsets[j], " slots"));
    }
    for (uint32_t i = 0; i < n; ++i) {
      absl::Status status = read(s, keys.keys[keys.offsets[s] + i], ts.slots[ts.offsets[j] + i]);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace herald::scheduler
