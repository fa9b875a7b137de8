#pragma once
// Where each row's newest version lives, as the planner knows it, for one
// table. Rows are addressed by a handle (a dense index) so the planner looks
// a key up once per batch, not once per operation: a batch index resolves
// every key of a batch to its handle (FindOrAdd) and pins it.
//
// A row without an entry is held by the PS alone and last changed at the
// PS at least kMaxEarlyDistance iterations ago. Entries exist while some
// worker caches the row or holds it dirty, while a batch in flight refers
// to it (pinned), or while it changed at the PS in one of the last
// kMaxEarlyDistance planned iterations (the next fetches' early distances
// need that); Sweep() erases the rest, so memory follows the caches' and
// batches' size, not the dataset's. A handle stays
// valid until its entry is erased.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "common/state_io.h"
#include "scheduler/planner/worker_set.h"

namespace herald::scheduler {

constexpr int16_t kPsHolder = -1;

// One cache line: the planner reads a row's entry in several passes per
// batch, so its size is what those passes cost. Static-asserted below.
struct alignas(64) RowState {
  int16_t holder = kPsHolder;  // the PS, or the one worker (< 256) holding it dirty
  // How many of the row's slots are kept outside the entry (in the
  // overflow map or the block) and its block of per-worker slots (kNoWide:
  // none): RowDirectory's bookkeeping of where the row's slots are kept.
  uint16_t out_of_line = 0;
  static constexpr uint32_t kNoWide = UINT32_MAX;
  uint32_t wide = kNoWide;
  // Workers 0..63 of the row's two sets: the workers whose cache holds a
  // copy (resident) and, of those, the ones whose copy is the newest.
  // Workers ≥ 64 of larger jobs are in RowDirectory's side words: read and
  // change the sets through RowDirectory (IsResident, AddCopy, ...).
  uint64_t resident_low = 0;
  uint64_t newest_low = 0;
  // 1 + the latest iteration whose batch index refers to the entry; a
  // batch index build for that iteration has seen the row and given it
  // `batch_id`.
  uint64_t pin_stamp = 0;
  // 1 + the iteration whose plan last changed the PS copy (pushed gradients
  // or a write-back), modulo 2^32; 0: not since the entry was made. A stamp
  // 2^32 iterations old can only read as a recent change: that makes a
  // fetch wait for the commit and an entry live one sweep longer, never
  // the reverse.
  uint32_t ps_changed_stamp = 0;
  uint32_t batch_id = 0;
  Key key = 0;
  // The row's slot in up to two resident workers' caches (worker
  // kNoWorker: unused); further ones are in RowDirectory's overflow map or,
  // once the row is cached widely, in a block of one slot per worker.
  static constexpr uint32_t kNoWorker = UINT32_MAX;
  uint32_t slot_worker[2] = {kNoWorker, kNoWorker};
  uint32_t slot[2] = {0, 0};

  // The PS copy changed during the plan of `iteration`.
  void MarkPsChanged(uint64_t iteration) {
    ps_changed_stamp = static_cast<uint32_t>(iteration + 1);
  }
  // The early distance of a fetch at `iteration` (plan::FetchRows::early):
  // how many iterations just before it left the PS copy unchanged, at most
  // kMaxEarlyDistance (for an entry made since, or a row never
  // changed, as many as were planned: nothing before the first iteration
  // matters, it committed before the run began).
  uint8_t EarlyDistance(uint64_t iteration) const {
    const uint32_t since = static_cast<uint32_t>(iteration) - ps_changed_stamp;
    return static_cast<uint8_t>(std::min<uint32_t>(since, kMaxEarlyDistance));
  }
};
static_assert(sizeof(RowState) == 64, "a row's entry is one cache line");

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
  RowState& at(uint32_t handle) { return rows_[ChunkOf(handle)][InChunk(handle)]; }
  const RowState& at(uint32_t handle) const { return rows_[ChunkOf(handle)][InChunk(handle)]; }

  // The row's worker sets (see RowState). A "copy" is a resident one.
  bool IsResident(uint32_t handle, uint32_t w) const {
    return w < 64 ? (at(handle).resident_low >> w) & 1 : HighHas(handle, 0, w);
  }
  bool IsNewest(uint32_t handle, uint32_t w) const {
    return w < 64 ? (at(handle).newest_low >> w) & 1 : HighHas(handle, high_words_, w);
  }
  // Some cache holds a copy / the newest version.
  bool IsCached(uint32_t handle) const {
    return at(handle).resident_low != 0 || HighAny(handle, 0);
  }
  bool IsNewestAnywhere(uint32_t handle) const {
    return at(handle).newest_low != 0 || HighAny(handle, high_words_);
  }
  // Worker w now caches the newest version.
  void AddCopy(uint32_t handle, uint32_t w) {
    SetBit(handle, 0, w, true);
    SetBit(handle, 1, w, true);
  }
  // Worker w's copy (which it keeps) is the newest again.
  void MarkNewest(uint32_t handle, uint32_t w) { SetBit(handle, 1, w, true); }
  // Worker w no longer caches the row.
  void RemoveCopy(uint32_t handle, uint32_t w) {
    SetBit(handle, 0, w, false);
    SetBit(handle, 1, w, false);
  }
  // No copy is the newest (the PS's or another worker's is).
  void ClearNewest(uint32_t handle) {
    at(handle).newest_low = 0;
    if (high_words_ > 0) ClearHighNewest(handle);
  }
  // The workers caching the newest version, in kWords words. REQUIRES:
  // the job's workers fit (num_workers ≤ 64·kWords).
  template <int kWords>
  BasicWorkerSet<kWords> Newest(uint32_t handle) const {
    BasicWorkerSet<kWords> out;
    out.set_word(0, at(handle).newest_low);
    for (uint32_t i = 0; i < high_words_ && i + 1 < kWords; ++i) {
      out.set_word(static_cast<int>(i + 1), High(handle)[high_words_ + i]);
    }
    return out;
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

  // The caller's note that the row's key is in its trained filter
  // (TrainedFilter), so the planner adds each trained key to the filter
  // once per entry instead of once per batch, and answers "trained" for a
  // marked row without reading the filter. A new entry starts unmarked;
  // marks are not saved (a loaded directory starts unmarked: the filter is
  // asked again, with the same answer).
  void MarkTrained(uint32_t handle) { trained_marks_[handle >> 6] |= uint64_t{1} << (handle & 63); }
  bool MarkedTrained(uint32_t handle) const {
    return (trained_marks_[handle >> 6] >> (handle & 63)) & 1;
  }

  // The entry may have become unneeded (its last cached copy left); the next
  // Sweep() erases it if it still is.
  void MaybeRelease(uint32_t handle) { release_.push_back(handle); }
  // At the end of the plan of `iteration`: erases the released entries that
  // no cache holds, no worker holds dirty, no batch after `iteration` refers
  // to and whose PS copy did not change during the last
  // kMaxEarlyDistance iterations up to `iteration`.
  void Sweep(uint64_t iteration);

  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  // Handles ever made: every handle in use is below it.
  uint32_t num_handles() const { return num_handles_; }

  // Writes the directory's whole state (Planner::SaveState). Load reads it
  // back into a directory made for the same number of workers, replacing
  // its state; false (in->status() names the field) for a stream that does
  // not fit.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in);

 private:
  static uint64_t OverflowKey(uint32_t handle, uint32_t w) {
    return (uint64_t{handle} << 8) | w;  // w < WorkerSet::kMaxWorkers = 256
  }

  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // Move the row's slots into a block of its own, and back.
  void MakeWide(uint32_t handle);
  void MakeNarrow(uint32_t handle);

  // The side words of workers ≥ 64: per handle, high_words_ words of the
  // resident set, then high_words_ of the newest set (chunked like rows_).
  const uint64_t* High(uint32_t handle) const {
    return &high_[ChunkOf(handle)][uint64_t{InChunk(handle)} * 2 * high_words_];
  }
  uint64_t* High(uint32_t handle) {
    return const_cast<uint64_t*>(std::as_const(*this).High(handle));
  }
  // Bit w (≥ 64) of the set starting at side word `first`.
  bool HighHas(uint32_t handle, uint32_t first, uint32_t w) const {
    return (High(handle)[first + (w >> 6) - 1] >> (w & 63)) & 1;
  }
  bool HighAny(uint32_t handle, uint32_t first) const {
    if (high_words_ == 0) return false;
    const uint64_t* words = High(handle) + first;
    uint64_t any = 0;
    for (uint32_t i = 0; i < high_words_; ++i) any |= words[i];
    return any != 0;
  }
  void ClearHighNewest(uint32_t handle);
  // Sets or clears worker w in the resident (set 0) or newest (set 1) set.
  void SetBit(uint32_t handle, int set, uint32_t w, bool on) {
    uint64_t* word;
    if (w < 64) {
      RowState& row = at(handle);
      word = set == 0 ? &row.resident_low : &row.newest_low;
    } else {
      word = &High(handle)[set * high_words_ + (w >> 6) - 1];
    }
    const uint64_t bit = uint64_t{1} << (w & 63);
    *word = on ? *word | bit : *word & ~bit;
  }

  uint32_t num_workers_;
  uint32_t high_words_;  // side words per set: ceil(num_workers / 64) - 1
  uint32_t wide_after_;  // copies from which a row gets a block
  uint32_t narrow_at_;   // copies at which it gives it up
  absl::flat_hash_map<Key, uint32_t> index_;
  absl::flat_hash_map<uint64_t, uint32_t> overflow_;  // slots beyond the inline two
  std::vector<uint32_t> wide_;       // blocks of num_workers_ slots (kNoSlot: none)
  std::vector<uint32_t> wide_free_;  // released blocks
  // Entries live in chunks of 2^kChunkBits (64 KiB), handle h at
  // rows_[h >> kChunkBits][h & mask], each chunk reserved when it is opened
  // and filled as handles are made. So the directory grows without ever
  // copying or re-touching what it holds (a growing vector would stall one
  // plan for a copy of the whole directory), and finding an entry is a
  // shift, a mask and two loads (this runs several times per row and
  // batch).
  static constexpr uint32_t kChunkBits = 10;
  static uint32_t ChunkOf(uint32_t handle) { return handle >> kChunkBits; }
  static uint32_t InChunk(uint32_t handle) { return handle & ((1u << kChunkBits) - 1); }
  std::vector<std::vector<RowState>> rows_;
  std::vector<std::vector<uint64_t>> high_;  // chunks of side words, none when ≤ 64 workers
  uint32_t num_handles_ = 0;                 // handles ever made
  std::vector<uint64_t> trained_marks_;      // a bit per handle (MarkTrained)
  std::vector<uint32_t> free_;
  std::vector<uint32_t> release_, keep_;
};

}  // namespace herald::scheduler
