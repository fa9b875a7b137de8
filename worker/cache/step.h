#pragma once
// One iteration's work for one worker, decoded from a proto::WorkerStep:
// the samples (categorical features given as cache slots) and the cache
// plan. Decoding checks every byte length and count; the plan's meaning is
// checked against the cache by ValidatePlan (plan_check.h).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"
#include "proto/scheduler.pb.h"

namespace herald::worker {

// Operations on one table's slot array, executed in this order (see
// proto/scheduler.proto CachePlan).
struct TablePlan {
  std::vector<uint32_t> evict_slots;
  std::vector<Key> evict_keys;
  std::vector<Key> fetch_keys;
  std::vector<uint32_t> fetch_slots;
  std::vector<uint8_t> fetch_early;  // empty or one per fetch
  std::vector<uint32_t> owned_slots;
  std::vector<uint32_t> shared_slots;
  std::vector<Key> shared_keys;
  std::vector<uint32_t> writeback_slots;
  std::vector<Key> writeback_keys;
  // Worker-to-worker hand-offs (docs/worker.md). receive_*: rows other
  // workers sent after the previous step, placed in the fetch phase as this
  // worker's dirty copies. send_*: rows sent after this step's write-backs,
  // from these slots to worker send_to. incoming_*: the rows other workers
  // send this worker after this step, in each sender's order.
  std::vector<uint32_t> receive_slots;
  std::vector<Key> receive_keys;
  std::vector<uint32_t> send_slots;
  std::vector<Key> send_keys;
  std::vector<uint32_t> send_to;
  std::vector<Key> incoming_keys;
  std::vector<uint32_t> incoming_from;
};

struct TableSamples {
  std::vector<uint32_t> offsets;  // num_samples + 1, from 0, non-decreasing
  std::vector<uint32_t> slots;
};

struct Step {
  std::string job_id;
  uint64_t iteration = 0;
  uint32_t num_samples = 0;
  uint32_t global_batch_size = 0;
  std::vector<float> labels;  // num_samples
  std::vector<float> dense;   // num_samples × num_dense
  std::vector<TableSamples> samples;  // one per table, in table order
  std::vector<TablePlan> plan;        // one per table (empty: no operation)
};

// Errors: InvalidArgument naming the field, e.g. "samples.tables[3].offsets:
// 20 bytes, want 4 × (num_samples + 1) = 36".
absl::StatusOr<Step> DecodeWorkerStep(const proto::WorkerStep& step, uint32_t num_tables,
                                      uint32_t num_dense);

// The inverse, for the scheduler and tests.
proto::WorkerStep EncodeWorkerStep(const Step& step);

}  // namespace herald::worker
