#pragma once
// Where each row's newest version lives, as the planner knows it, for one
// table. Rows are addressed by a handle (a dense index) so the planner looks
// a key up once per batch, not once per operation: a batch index resolves
// every key of a batch to its handle (FindOrAdd) and pins it.
//
// A row without an entry is held by the PS alone and changed at the PS
// before the previous iteration. Entries exist while some worker caches the
// row or holds it dirty, while a batch in flight refers to it (pinned), or
// while it changed at the PS in the latest planned iteration (the next
// iteration's fetch_early needs that); Sweep() erases the rest, so memory
// follows the caches' and batches' size, not the dataset's. A handle stays
// valid until its entry is erased.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "scheduler/herald/worker_set.h"

namespace herald::scheduler {

constexpr int32_t kPsHolder = -1;

struct RowState {
  int32_t holder = kPsHolder;  // the PS, or the one worker holding it dirty
  // RowDirectory's bookkeeping of where the row's slots are kept: its block
  // of per-worker slots (kNoWide: none) and how many of its slots are kept
  // outside the entry (in the overflow map or the block).
  static constexpr uint32_t kNoWide = UINT32_MAX;
  uint32_t wide = kNoWide;
  WorkerSet resident;          // workers whose cache holds a copy
  WorkerSet newest;            // of those, the ones whose copy is the newest
  // 1 + the iteration whose plan last changed the PS copy (pushed gradients
  // or a write-back); 0: not since the entry was made.
  uint64_t ps_changed_stamp = 0;
  // 1 + the latest iteration whose batch index refers to the entry.
  uint64_t pin_stamp = 0;
  // Scratch for BatchIndex::Build: the build that last saw the row and the
  // batch-local id it gave it.
  uint64_t seen_by_build = 0;
  uint32_t batch_id = 0;
  uint32_t out_of_line = 0;
  Key key = 0;
  // The row's slot in up to two resident workers' caches (worker
  // kNoWorker: unused); further ones are in RowDirectory's overflow map or,
  // once the row is cached widely, in a block of one slot per worker.
  static constexpr uint32_t kNoWorker = UINT32_MAX;
  uint32_t slot_worker[2] = {kNoWorker, kNoWorker};
  uint32_t slot[2] = {0, 0};

  // The PS copy changed during the plan of `iteration`.
  void MarkPsChanged(uint64_t iteration) { ps_changed_stamp = iteration + 1; }
  // True when the PS copy changed during the plan of iteration - 1 (never
  // for iteration 0: nothing was planned before it).
  bool PsChangedBefore(uint64_t iteration) const {
    return iteration != 0 && ps_changed_stamp == iteration;
  }
};

class RowDirectory {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // For jobs of up to `num_workers` workers (1..WorkerSet::kMaxWorkers).
  explicit RowDirectory(uint32_t num_workers = WorkerSet::kMaxWorkers);

  // The handle of `key`, or kNone.
  uint32_t Find(Key key) const {
    auto it = index_.find(key);
    return it == index_.end() ? kNone : it->second;
  }
  // The handle of `key`, adding a PS-held entry if there is none.
  uint32_t FindOrAdd(Key key);
  // Hints that `key` will be looked up soon (memory prefetch only).
  void Prefetch(Key key) const { index_.prefetch(key); }
  void PrefetchRow(uint32_t handle) const { __builtin_prefetch(&at(handle)); }
  RowState& at(uint32_t handle) {
    const uint32_t chunk = ChunkOf(handle);
    return rows_[chunk][handle - ChunkBegin(chunk)];
  }
  const RowState& at(uint32_t handle) const {
    const uint32_t chunk = ChunkOf(handle);
    return rows_[chunk][handle - ChunkBegin(chunk)];
  }

  // Where the row sits in worker w's cache. SlotOf REQUIRES a SetSlot for
  // (handle, w) not cleared since. Two copies' slots are kept in the entry;
  // a row cached by more workers keeps the rest in a hash map until it has
  // max(3, num_workers / 4) copies, then all of them in a block of
  // num_workers slots (an array read instead of a hash lookup for the hot
  // rows many workers cache), until it drops to half that. So a block
  // serves at least num_workers / 8 copies: the blocks together take no
  // more than 32 bytes per cache slot of the job.
  void SetSlot(uint32_t handle, uint32_t w, uint32_t slot);
  uint32_t SlotOf(uint32_t handle, uint32_t w) const;
  void ClearSlot(uint32_t handle, uint32_t w);

  // The entry may have become unneeded (its last cached copy left); the next
  // Sweep() erases it if it still is.
  void MaybeRelease(uint32_t handle) { release_.push_back(handle); }
  // At the end of the plan of `iteration`: erases the released entries that
  // no cache holds, no worker holds dirty, no batch after `iteration` refers
  // to and whose PS copy did not change during `iteration`.
  void Sweep(uint64_t iteration);

  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }

 private:
  static uint64_t OverflowKey(uint32_t handle, uint32_t w) {
    return (uint64_t{handle} << 8) | w;  // w < WorkerSet::kMaxWorkers = 256
  }

  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // Move the row's slots into a block of its own, and back.
  void MakeWide(uint32_t handle);
  void MakeNarrow(uint32_t handle);

  uint32_t num_workers_;
  uint32_t wide_after_;   // copies from which a row gets a block
  uint32_t narrow_at_;    // copies at which it gives it up
  absl::flat_hash_map<Key, uint32_t> index_;
  absl::flat_hash_map<uint64_t, uint32_t> overflow_;  // slots beyond the inline two
  std::vector<uint32_t> wide_;       // blocks of num_workers_ slots (kNoSlot: none)
  std::vector<uint32_t> wide_free_;  // released blocks
  // Entries live in chunks of doubling size: chunk c holds the handles
  // [ChunkBegin(c), ChunkBegin(c + 1)), 2^(kFirstChunkBits + c) of them,
  // reserved when the chunk is opened and filled as handles are made. So
  // the directory grows without ever copying or re-touching what it holds
  // (a growing vector would stall one plan for a copy of the whole
  // directory), and a small one stays small.
  static constexpr uint32_t kFirstChunkBits = 6;
  static uint32_t ChunkOf(uint32_t handle) {
    return 31 - static_cast<uint32_t>(__builtin_clz((handle >> kFirstChunkBits) + 1));
  }
  static uint32_t ChunkBegin(uint32_t chunk) {
    return ((1u << chunk) - 1) << kFirstChunkBits;
  }
  std::vector<std::vector<RowState>> rows_;
  uint32_t num_handles_ = 0;  // handles ever made
  std::vector<uint32_t> free_;
  std::vector<uint32_t> release_, keep_;
};

}  // namespace herald::scheduler
