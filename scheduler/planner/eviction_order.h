#pragma once
// The order in which one worker's cache gives up its rows. LRU: clean rows
// before dirty ones (evicting a dirty row costs a write-back), least
// recently used first within each. LFU: fewest uses since the row entered
// the cache first, least recently used among equals (dirtiness ignored).
// Slots used at the current iteration are never offered (a plan never
// evicts a row it trains).

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/status/statusor.h"
#include "common/state_io.h"

namespace herald::scheduler {

enum class EvictionKind { kLru, kLfu };

// "lru" or "lfu". Errors: InvalidArgument naming the value.
absl::StatusOr<EvictionKind> ParseEvictionKind(const std::string& name);
const char* EvictionKindName(EvictionKind kind);

class EvictionOrder {
 public:
  virtual ~EvictionOrder() = default;
  // `slot` (resident) was used at `iteration`; a new row counts as a use.
  // REQUIRES: `iteration` no smaller than that of any earlier use.
  virtual void Use(uint32_t slot, uint64_t iteration) = 0;
  // `slot` left the cache (and is clean again).
  virtual void Remove(uint32_t slot) = 0;
  // `slot` holds a row the worker alone has the newest version of (dirty)
  // or not. Slots start clean. REQUIRES (dirty): `slot` was used at the
  // latest iteration of any use (rows turn dirty when they are trained).
  virtual void SetDirty(uint32_t slot, bool dirty) = 0;
  // SetDirty(slot, false) for every slot, at once (the final flush).
  virtual void MarkAllClean() = 0;
  // Hints that `slot` is used soon (memory prefetch only).
  virtual void Prefetch(uint32_t slot) const = 0;
  // The coldest resident slot not used at `iteration`, or -1 when none.
  // `iteration` is the current one: no smaller than any use's.
  virtual int64_t Coldest(uint64_t iteration) const = 0;
  // Appends to `out` the up to `n` coldest resident slots not used at
  // `iteration`, coldest first: the slots n rounds of Coldest and Remove
  // would give, without removing them (so a caller can start reading what
  // it knows about them before evicting them one by one).
  virtual void ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const = 0;
  // An independent copy in the same state.
  virtual std::unique_ptr<EvictionOrder> Clone() const = 0;
  // Writes the order's whole state (Planner::SaveState). Load reads it back
  // into an order of the same kind and number of slots, replacing its state;
  // false (in->status() names the field) for a stream that does not fit.
  virtual void Save(StateWriter* out) const = 0;
  virtual bool Load(StateReader* in) = 0;
};

std::unique_ptr<EvictionOrder> MakeEvictionOrder(EvictionKind kind, uint32_t slots);

// Amortised O(1) per operation (O(log n) for a parked slot turning clean,
// once it is sorted in), with sequential memory access: every use appends
// (slot, use number) to a queue; an entry is live while it is its slot's
// latest use and the slot is resident, so the oldest live entry is the least
// recently used slot. Dead entries are dropped from the front as Coldest()
// passes them and by compaction when they outnumber the slots. A dirty slot
// passed while looking for clean ones is parked (moved to a second queue,
// which stays in use order); a parked slot that turns clean moves to a
// third list, sorted by use number when victims are next listed, and clean
// victims are the queue's and that list's merged by use number.
class LruOrder : public EvictionOrder {
 public:
  // Use numbers are renumbered (Compact) once they reach `renumber_at`
  // (smaller values only to test that). REQUIRES: slots < 2^28,
  // renumber_at ≤ 2^28.
  explicit LruOrder(uint32_t slots, uint32_t renumber_at = uint32_t{1} << 28);
  void Use(uint32_t slot, uint64_t iteration) override;
  void Remove(uint32_t slot) override;
  void SetDirty(uint32_t slot, bool dirty) override;
  void MarkAllClean() override;
  void Prefetch(uint32_t slot) const override { __builtin_prefetch(&slot_[slot], 1); }
  int64_t Coldest(uint64_t iteration) const override;
  void ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const override;
  std::unique_ptr<EvictionOrder> Clone() const override {
    return std::make_unique<LruOrder>(*this);
  }
  void Save(StateWriter* out) const override;
  bool Load(StateReader* in) override;

 private:
  struct Entry {
    uint32_t slot;
    uint32_t use;  // the use number; live iff the slot's latest use, in its list
  };
  // Where a resident slot's live entry is.
  enum Place : uint8_t { kQueue, kParked, kCleaned };
  // Keeps the live entries only, renumbered 1, 2, ... in order (so use
  // numbers stay below max(renumber_at, slots) + 1: 29 bits suffice).
  void Compact();
  // Drops the dead entries before the oldest live one (and the queue's
  // memory before it, once that is most of the queue), in each list.
  void DropDeadFront() const;
  // Sorts the cleaned slots added since the last call in.
  void SortCleaned() const;
  bool LiveIn(const Entry& e, Place place) const {
    const SlotRecord r = slot_[e.slot];
    return r.latest == e.use && r.place == place;
  }
  // True when the slot's latest use (resident) was at `iteration`.
  bool UsedAt(uint32_t latest, uint64_t iteration) const {
    return iteration == iteration_ && latest >= first_use_of_iteration_;
  }
  // Per slot, in one word (one memory access): its latest use number (0:
  // not resident; whether that use was at the current iteration follows
  // from the numbers, as uses come in iterations that do not decrease),
  // which list holds its live entry, and whether it is dirty. 8 bytes per
  // list entry.
  struct SlotRecord {
    uint32_t latest : 29;
    uint32_t place : 2;  // a Place
    uint32_t dirty : 1;
  };
  mutable std::vector<SlotRecord> slot_;
  uint32_t renumber_at_;
  uint32_t uses_ = 0;
  uint64_t iteration_ = 0;               // the iteration of the latest use
  uint32_t first_use_of_iteration_ = 1;  // the first use number at iteration_
  mutable std::vector<Entry> queue_;     // oldest first from head_
  mutable size_t head_ = 0;
  // Dirty slots passed in queue_, oldest first from parked_head_ (all older
  // than the entries left in queue_ after them).
  mutable std::vector<Entry> parked_;
  mutable size_t parked_head_ = 0;
  // Parked slots that turned clean, in use order up to cleaned_sorted_ from
  // cleaned_head_ (ColdestN sorts in the later ones).
  mutable std::vector<Entry> cleaned_;
  mutable size_t cleaned_head_ = 0, cleaned_sorted_ = 0;
};

// O(log n) per operation: an ordered set of (uses, last use, slot).
class LfuOrder : public EvictionOrder {
 public:
  explicit LfuOrder(uint32_t slots);
  void Use(uint32_t slot, uint64_t iteration) override;
  void Remove(uint32_t slot) override;
  void SetDirty(uint32_t, bool) override {}
  void MarkAllClean() override {}
  void Prefetch(uint32_t) const override {}  // the ordered set's path is not known ahead
  int64_t Coldest(uint64_t iteration) const override;
  void ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const override;
  std::unique_ptr<EvictionOrder> Clone() const override {
    return std::make_unique<LfuOrder>(*this);
  }
  void Save(StateWriter* out) const override;
  bool Load(StateReader* in) override;

 private:
  using Entry = std::tuple<uint64_t, uint64_t, uint32_t>;
  std::vector<uint64_t> uses_, last_use_;
  std::vector<bool> tracked_;
  absl::btree_set<Entry> order_;
};

}  // namespace herald::scheduler
