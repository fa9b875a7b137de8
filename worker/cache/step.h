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
  // Rows served by their owner (docs/worker.md): a row one worker holds
  // dirty that several workers train next stays with it; it sends the others
  // a copy of its values and applies their gradients. The *_served flags
  // (empty, or one per entry; 1 = a served copy, 0 = a hand-off) mark such
  // sends, incoming rows and receives; a received served copy lands as
  // SlotState::kServed. remote_*: rows trained here whose gradients go to
  // worker remote_to (their owner), not to the PS. gather_*: gradients the
  // owner receives for its rows in gather_slots, from worker gather_from, in
  // each sender's remote order; the owner lists those rows as owned and
  // applies the rank-ordered sum of every trainer's gradient, as the PS would.
  std::vector<uint8_t> receive_served;
  std::vector<uint8_t> send_served;
  std::vector<uint8_t> incoming_served;
  std::vector<uint32_t> remote_slots;
  std::vector<Key> remote_keys;
  std::vector<uint32_t> remote_to;
  std::vector<uint32_t> gather_slots;
  std::vector<Key> gather_keys;
  std::vector<uint32_t> gather_from;
  // Rows never trained (PlannerOptions::init_on_worker): the worker writes
  // their initial values (math::InitialRow, as the PS would create them)
  // into init_slots in the fetch phase instead of fetching them; clean,
  // version 0.
  std::vector<Key> init_keys;
  std::vector<uint32_t> init_slots;
};

// Flag i of a *_served list (empty: every flag 0).
inline bool Served(const std::vector<uint8_t>& flags, size_t i) {
  return !flags.empty() && flags[i] != 0;
}

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
