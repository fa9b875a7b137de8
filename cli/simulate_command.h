#pragma once
// heraldctl simulate: runs a scheduling policy over a dataset without any PS
// or worker and reports the embedding rows it would move.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace herald::cli {

struct SimulateOptions {
  std::vector<std::string> data;  // files or directories
  std::string format = "auto";    // auto | tsv | bin
  std::string policy = "herald";
  uint32_t workers = 0;
  uint32_t batch_per_worker = 0;
  // Per-worker cache capacity as a fraction of the data's distinct keys, per table.
  double cache_ratio = 0.1;
  uint64_t iterations = 0;  // 0: every full global batch of the data
  std::string eviction = "lru";
  uint32_t dim = 64;  // embedding dimension for the byte figures
  uint64_t seed = 1;
  // herald-adaptive: score the top_k highest-DoI tables, or (top_k 0) as
  // many as the planning-time budget allows.
  uint32_t top_k = 0;
  // Frequency-aware warm start: the data's hottest keys (exact counts over
  // the simulated samples) fetched into every cache at iteration 0.
  bool warm_start = false;
  double budget_ms = 0;
  uint32_t threads = 1;  // planner threads (tables planned at once), 1..64
  bool check = true;     // replay every plan through the PlanReplay
  // The exact options, as in a job spec; unset (nullopt, 0) means the
  // policy's default, as for a job (common/scheduling_defaults.h).
  // Worker-to-worker hand-offs (PlannerOptions::handoff).
  std::optional<bool> handoff;
  // Rows served by their owner (PlannerOptions::serve).
  std::optional<bool> serve;
  // Rows never trained initialised by the workers (PlannerOptions::init_on_worker).
  std::optional<bool> init_on_worker;
  // Greedy passes of location-aware allocation (scheduling.allocation_passes).
  uint32_t allocation_passes = 0;
  // Policy het: HET's staleness threshold (scheduling.staleness), and whose
  // allocation: "default" (HET's) or "location-aware" (scheduling.allocation).
  uint32_t staleness = 0;
  std::string allocation = "default";
  // Every N iterations a flush writes back every dirty row, as a job with
  // checkpoint.every_iterations N does (0: never): its cost in rows.
  uint64_t flush_every = 0;
  // Id admission with this min_count on every table (tables[].admission;
  // 0 or 1: off): the batches are filtered as a job's training stream is.
  uint32_t admission = 0;
  // Row expiry after this many batches without a key on every table
  // (tables[].expiry; 0: off), decided as a job's training stream does.
  uint64_t expire_after = 0;
  bool json = false;
  // A predicted iteration time on a cluster (scheduler/planner/
  // network_cost.h) when link_gbps > 0: every NIC's rate each way, one-way
  // latency, PS hosts, floats per row (0: 2 × dim, Adagrad's), all-reduced
  // dense parameters and compute time per sample.
  double link_gbps = 0;
  double latency_us = 0;
  double host_gbps = 0;
  uint32_t ps_hosts = 1;
  uint32_t row_floats = 0;
  uint64_t dense_params = 0;
  double compute_ms_per_sample = 0;
};

// Errors: InvalidArgument for a bad option (named), the reader's errors for
// bad data, FailedPrecondition when the checker rejects a plan.
absl::Status RunSimulate(const SimulateOptions& options);

}  // namespace herald::cli
