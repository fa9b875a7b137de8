#include "worker/cache/step_validator.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace herald::worker {

// A set of one table's slots, emptied in O(1) (a generation stamp per slot);
// its memory is kept from one table and step to the next.
class PlanSlotSet {
 public:
  // Empties the set for a table of `capacity` slots.
  void Reset(uint32_t capacity) {
    if (stamps_.size() < capacity) stamps_.resize(capacity, 0);
    if (++generation_ == 0) {  // wrapped: every old stamp must go
      std::fill(stamps_.begin(), stamps_.end(), 0);
      generation_ = 1;
    }
  }
  // REQUIRES: slot < the capacity given to Reset.
  bool Insert(uint32_t slot) {
    if (stamps_[slot] == generation_) return false;
    stamps_[slot] = generation_;
    return true;
  }
  bool Contains(uint32_t slot) const {
    return slot < stamps_.size() && stamps_[slot] == generation_;
  }

 private:
  std::vector<uint32_t> stamps_;
  uint32_t generation_ = 0;
};

// The slots a table trains this step (owned, shared or remote), each marked
// once some sample uses it: one stamp per slot (generation · 2 + used), so
// the pass over every sample's slot reads and writes one word.
class TrainedSlotSet {
 public:
  void Reset(uint32_t capacity) {
    if (stamps_.size() < capacity) stamps_.resize(capacity, 0);
    if (++generation_ == (uint32_t{1} << 31)) {  // wrapped: every old stamp must go
      std::fill(stamps_.begin(), stamps_.end(), 0);
      generation_ = 1;
    }
  }
  // REQUIRES: slot < the capacity given to Reset. False if already trained.
  bool Insert(uint32_t slot) {
    if (stamps_[slot] >> 1 == generation_) return false;
    stamps_[slot] = generation_ << 1;
    return true;
  }
  // Marks a trained slot used; false if `slot` is not trained (or out of
  // range).
  bool MarkUsed(uint32_t slot) {
    if (slot >= stamps_.size() || stamps_[slot] >> 1 != generation_) return false;
    stamps_[slot] |= 1;
    return true;
  }
  bool Used(uint32_t slot) const {
    return slot < stamps_.size() && stamps_[slot] == (generation_ << 1 | 1);
  }

 private:
  std::vector<uint32_t> stamps_;
  uint32_t generation_ = 0;
};

// What StepValidator keeps between checks: the sets' memory.
struct CheckScratch {
  PlanSlotSet changed, evicted, landing_slots, shared, owned, written_back, handed_off, sent_back,
      flushed;
  TrainedSlotSet trained;
  std::vector<std::pair<Key, SlotState>> changed_to;  // by slot, where `changed` has it

  void Reset(uint32_t capacity) {
    for (PlanSlotSet* set : {&changed, &evicted, &landing_slots, &shared, &owned, &written_back,
                             &handed_off, &sent_back, &flushed}) {
      set->Reset(capacity);
    }
    trained.Reset(capacity);
    if (changed_to.size() < capacity) changed_to.resize(capacity);
  }
};

namespace {

// A table's slots as the plan leaves them: the cache plus the plan's changes.
class SlotView {
 public:
  SlotView(const EmbeddingCache::Table& table, CheckScratch& scratch)
      : table_(table), scratch_(scratch) {}

  struct Slot {
    Key key;
    SlotState state;
  };

  Slot At(uint32_t slot) const {
    if (scratch_.changed.Contains(slot)) {
      return {scratch_.changed_to[slot].first, scratch_.changed_to[slot].second};
    }
    return {table_.keys[slot], table_.states[slot]};
  }
  // The slot holding `key`, if any.
  std::optional<uint32_t> SlotOf(Key key) const {
    auto it = keys_.find(key);
    if (it != keys_.end()) return it->second;
    auto base = table_.slot_of.find(key);
    if (base == table_.slot_of.end()) return std::nullopt;
    return base->second;
  }
  void Set(uint32_t slot, Key key, SlotState state) {
    const Slot old = At(slot);
    scratch_.changed.Insert(slot);
    scratch_.changed_to[slot] = {key, state};
    // The same key in the same slot (a trained row turning dirty): where
    // each key is stays as it was.
    const bool same_key =
        old.state != SlotState::kEmpty && state != SlotState::kEmpty && old.key == key;
    if (same_key) return;
    if (old.state != SlotState::kEmpty) keys_[old.key] = std::nullopt;
    if (state != SlotState::kEmpty) keys_[key] = slot;
  }
  void Reserve(size_t changes) { keys_.reserve(2 * changes); }

 private:
  const EmbeddingCache::Table& table_;
  CheckScratch& scratch_;
  absl::flat_hash_map<Key, std::optional<uint32_t>> keys_;
};

class TableCheck {
 public:
  TableCheck(size_t t, const EmbeddingCache::Table& table, const plan::TablePlan& plan,
             const plan::TableSamples& samples, CheckScratch& scratch)
      : t_(t),
        table_(table),
        plan_(plan),
        samples_(samples),
        scratch_(scratch),
        view_(table, scratch) {
    scratch_.Reset(table.capacity);
    const size_t landings =
        plan.fetch.slots.size() + plan.init.slots.size() + plan.receive.slots.size();
    view_.Reserve(plan.evict.slots.size() + landings + plan.owned_slots.size());
    landing_keys_.reserve(landings);
  }

  absl::Status Run() {
    if (auto s = Drops(); !s.ok()) return s;
    if (auto s = Evictions(); !s.ok()) return s;
    if (auto s = CleanLandings(plan_.fetch.slots, plan_.fetch.keys, "fetch.slots", "fetch.keys");
        !s.ok()) {
      return s;
    }
    if (auto s = CleanLandings(plan_.init.slots, plan_.init.keys, "init.slots", "init.keys");
        !s.ok()) {
      return s;
    }
    if (auto s = Receives(); !s.ok()) return s;
    if (auto s = Training(); !s.ok()) return s;
    if (auto s = Flushes(); !s.ok()) return s;
    if (auto s = WriteBacks(); !s.ok()) return s;
    return Sends();
  }

 private:
  absl::Status Error(const std::string& list, size_t i, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("plan for table ", t_, ": ", list, "[", i, "]: ", what));
  }
  bool InRange(uint32_t slot) const { return slot < table_.capacity; }
  std::string OutOfRange(uint32_t slot) const {
    return absl::StrCat("slot ", slot, " out of range (", table_.capacity, " slots)");
  }

  // Expired rows: each slot held (clean or dirty; not holding gradients
  // the PS has not received) and freed unwritten. Their keys cannot come
  // back in this plan: the PS deletes them only at this iteration's commit.
  absl::Status Drops() {
    return FreeSlots(plan_.drop, "drop.slots", "dropped", [&](size_t i, const SlotView::Slot& s) {
      if (s.state == SlotState::kHeld) {
        return Error("drop.slots", i,
                     absl::StrCat("slot ", plan_.drop.slots[i], " holds gradients of key ", s.key,
                                  " the PS has not received"));
      }
      dropped_.insert(s.key);
      return absl::OkStatus();
    });
  }

  absl::Status Evictions() {
    return FreeSlots(plan_.evict, "evict.slots", "evicted", [&](size_t, const SlotView::Slot& s) {
      if (s.state == SlotState::kDirty) evicted_dirty_.insert(s.key);
      return absl::OkStatus();
    });
  }

  // The slots `rows` frees (a drop or evict list, `name` in errors, `verb`
  // what it does): each in range, once among the freed slots, holding its
  // key; `check(i, slot)` then sees what slot i held before it is freed.
  template <typename Check>
  absl::Status FreeSlots(const plan::SlotRows& rows, const char* name, const char* verb,
                         Check check) {
    PlanSlotSet& seen = scratch_.evicted;
    for (size_t i = 0; i < rows.slots.size(); ++i) {
      const uint32_t slot = rows.slots[i];
      const Key key = rows.keys[i];
      if (!InRange(slot)) return Error(name, i, OutOfRange(slot));
      if (!seen.Insert(slot)) {
        return Error(name, i, absl::StrCat("slot ", slot, " ", verb, " twice"));
      }
      const SlotView::Slot s = view_.At(slot);
      if (s.state == SlotState::kEmpty || s.key != key) {
        return Error(
            name, i,
            absl::StrCat(
                "slot ", slot, " does not hold key ", key,
                s.state == SlotState::kEmpty ? " (empty)" : absl::StrCat(" (holds ", s.key, ")")));
      }
      if (absl::Status checked = check(i, s); !checked.ok()) return checked;
      view_.Set(slot, key, SlotState::kEmpty);
    }
    return absl::OkStatus();
  }

  // A row the plan brings into `slot` (fetched from the PS, or received
  // from another worker): the slot and key appear once among all landings,
  // the key is not resident in another slot or evicted dirty by this plan,
  // and the slot is free or holds an outdated, clean copy of the same key.
  absl::Status CheckLanding(const char* slots_name, const char* keys_name, size_t i, uint32_t slot,
                            Key key) {
    if (!InRange(slot)) return Error(slots_name, i, OutOfRange(slot));
    if (!scratch_.landing_slots.Insert(slot)) {
      return Error(slots_name, i, absl::StrCat("slot ", slot, " used twice"));
    }
    if (!landing_keys_.insert(key).second) {
      return Error(
          keys_name, i,
          absl::StrCat("key ", key, " brought in twice (fetched, received or initialised)"));
    }
    if (dropped_.contains(key)) {
      return Error(keys_name, i,
                   absl::StrCat("key ", key,
                                " expires in this plan (dropped); its row is deleted at this "
                                "iteration's commit and cannot come back before it"));
    }
    if (evicted_dirty_.contains(key)) {
      return Error(keys_name, i,
                   absl::StrCat("key ", key,
                                " is evicted dirty by this plan; bringing it back in the same "
                                "iteration would read the PS before the write-back lands"));
    }
    const SlotView::Slot s = view_.At(slot);
    const std::optional<uint32_t> held = view_.SlotOf(key);
    if (held.has_value() && *held != slot) {
      return Error(keys_name, i, absl::StrCat("key ", key, " is already resident in slot ", *held));
    }
    if (s.state != SlotState::kEmpty) {
      if (s.key != key) {
        return Error(slots_name, i,
                     absl::StrCat("slot ", slot, " holds key ", s.key,
                                  "; the plan must evict it before bringing in key ", key));
      }
      if (s.state == SlotState::kDirty) {
        return Error(slots_name, i,
                     absl::StrCat("slot ", slot, " holds the newest (dirty) copy of key ", key,
                                  "; overwriting it would lose it"));
      }
      if (s.state == SlotState::kHeld) {
        return Error(slots_name, i,
                     absl::StrCat("slot ", slot, " holds gradients of key ", key,
                                  " the PS has not received; overwriting it would lose them"));
      }
    }
    return absl::OkStatus();
  }

  // Rows fetched from the PS, or never trained and initialised here: they
  // land clean.
  absl::Status CleanLandings(const std::vector<uint32_t>& slots, const std::vector<Key>& keys,
                             const char* slots_name, const char* keys_name) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (auto s = CheckLanding(slots_name, keys_name, i, slots[i], keys[i]); !s.ok()) return s;
      view_.Set(slots[i], keys[i], SlotState::kClean);
    }
    return absl::OkStatus();
  }

  // Rows handed to this worker: like fetches, but they land dirty; served
  // copies land as such.
  absl::Status Receives() {
    for (size_t i = 0; i < plan_.receive.slots.size(); ++i) {
      const uint32_t slot = plan_.receive.slots[i];
      const Key key = plan_.receive.keys[i];
      if (auto s = CheckLanding("receive.slots", "receive.keys", i, slot, key); !s.ok()) return s;
      view_.Set(slot, key, plan_.receive.Served(i) ? SlotState::kServed : SlotState::kDirty);
    }
    return absl::OkStatus();
  }

  // Rows sent to other workers after the write-backs, held dirty here:
  // served copies (to each worker once), then at most one hand-off, after
  // which the row is no longer this worker's.
  absl::Status Sends() {
    PlanSlotSet& written = scratch_.sent_back;
    for (uint32_t slot : plan_.writeback.slots) {
      if (InRange(slot)) written.Insert(slot);
    }
    PlanSlotSet& handed_off = scratch_.handed_off;
    absl::flat_hash_set<std::pair<uint32_t, uint32_t>> sent;  // (slot, to)
    for (size_t i = 0; i < plan_.send.slots.size(); ++i) {
      const uint32_t slot = plan_.send.slots[i];
      const Key key = plan_.send.keys[i];
      if (!InRange(slot)) return Error("send.slots", i, OutOfRange(slot));
      if (!sent.insert({slot, plan_.send.peers[i]}).second || handed_off.Contains(slot) ||
          written.Contains(slot)) {
        return Error("send.slots", i,
                     absl::StrCat("slot ", slot, " sent twice to worker ", plan_.send.peers[i],
                                  ", sent after its hand-off, or also written back"));
      }
      const SlotView::Slot s = view_.At(slot);
      if (s.key != key || s.state != SlotState::kDirty) {
        return Error("send.slots", i,
                     absl::StrCat("slot ", slot, " does not hold key ", key,
                                  " dirty; only rows this worker owns are sent"));
      }
      if (!plan_.send.Served(i)) handed_off.Insert(slot);
    }
    return absl::OkStatus();
  }

  absl::Status CheckTrained(const std::vector<uint32_t>& list, const char* name,
                            const std::vector<Key>* keys) {
    for (size_t i = 0; i < list.size(); ++i) {
      const uint32_t slot = list[i];
      if (!InRange(slot)) return Error(name, i, OutOfRange(slot));
      if (!scratch_.trained.Insert(slot)) {
        return Error(name, i, absl::StrCat("slot ", slot, " listed twice as owned/shared"));
      }
      const SlotView::Slot s = view_.At(slot);
      if (s.state == SlotState::kEmpty || s.state == SlotState::kStale) {
        return Error(name, i,
                     absl::StrCat("slot ", slot, " is ", SlotStateName(s.state),
                                  "; training needs a fetched or owned row"));
      }
      if (s.state == SlotState::kServed && keys != &plan_.remote.keys) {
        return Error(name, i,
                     absl::StrCat("slot ", slot,
                                  " holds a served copy; its gradients must go "
                                  "to its owner (remote.slots)"));
      }
      if (keys != nullptr && (*keys)[i] != s.key) {
        return Error(name, i,
                     absl::StrCat("slot ", slot, " holds key ", s.key, ", not ", (*keys)[i]));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Training() {
    if (auto s = CheckTrained(plan_.owned_slots, "owned_slots", nullptr); !s.ok()) return s;
    if (auto s = CheckTrained(plan_.push.slots, "push.slots", &plan_.push.keys); !s.ok()) {
      return s;
    }
    if (auto s = CheckTrained(plan_.remote.slots, "remote.slots", &plan_.remote.keys); !s.ok()) {
      return s;
    }
    if (auto s = CheckTrained(plan_.hold.slots, "hold.slots", &plan_.hold.keys); !s.ok()) {
      return s;
    }
    if (auto s = Gathers(); !s.ok()) return s;
    TrainedSlotSet& used = scratch_.trained;
    for (size_t j = 0; j < samples_.slots.size(); ++j) {
      const uint32_t slot = samples_.slots[j];
      if (!used.MarkUsed(slot)) {
        return absl::InvalidArgumentError(
            absl::StrCat("samples of table ", t_, ": slots[", j, "] = ", slot,
                         InRange(slot) ? " is neither owned, shared nor remote in the plan"
                                       : " is out of range"));
      }
    }
    for (size_t i = 0; i < plan_.owned_slots.size(); ++i) {
      if (!used.Used(plan_.owned_slots[i])) {
        return Error("owned_slots", i,
                     absl::StrCat("slot ", plan_.owned_slots[i], " is used by no sample"));
      }
      const uint32_t slot = plan_.owned_slots[i];
      view_.Set(slot, view_.At(slot).key, SlotState::kDirty);
    }
    for (size_t i = 0; i < plan_.hold.slots.size(); ++i) {
      const uint32_t slot = plan_.hold.slots[i];
      if (!used.Used(slot)) {
        return Error("hold.slots", i, absl::StrCat("slot ", slot, " is used by no sample"));
      }
      view_.Set(slot, view_.At(slot).key, SlotState::kHeld);
    }
    for (auto [list, name] : {std::pair{&plan_.push.slots, "push.slots"},
                              std::pair{&plan_.remote.slots, "remote.slots"}}) {
      for (size_t i = 0; i < list->size(); ++i) {
        if (!used.Used((*list)[i])) {
          return Error(name, i, absl::StrCat("slot ", (*list)[i], " is used by no sample"));
        }
        scratch_.shared.Insert((*list)[i]);
      }
    }
    return absl::OkStatus();
  }

  // Gradients other workers send for rows this worker owns this step: each
  // names an owned slot holding its key, once per sender.
  absl::Status Gathers() {
    if (plan_.gather.slots.empty()) return absl::OkStatus();
    PlanSlotSet& owned = scratch_.owned;
    for (uint32_t slot : plan_.owned_slots) owned.Insert(slot);  // in range: CheckTrained
    absl::flat_hash_set<std::pair<uint32_t, uint32_t>> seen;     // (slot, from)
    for (size_t i = 0; i < plan_.gather.slots.size(); ++i) {
      const uint32_t slot = plan_.gather.slots[i];
      if (!owned.Contains(slot)) {
        return Error("gather.slots", i, absl::StrCat("slot ", slot, " is not owned this step"));
      }
      if (view_.At(slot).key != plan_.gather.keys[i]) {
        return Error("gather.keys", i,
                     absl::StrCat("slot ", slot, " holds key ", view_.At(slot).key, ", not ",
                                  plan_.gather.keys[i]));
      }
      if (!seen.insert({slot, plan_.gather.peers[i]}).second) {
        return Error(
            "gather.peers", i,
            absl::StrCat("slot ", slot, " gathers from worker ", plan_.gather.peers[i], " twice"));
      }
    }
    return absl::OkStatus();
  }

  // Held gradients sent to the PS after training: slots holding them (held
  // before or this step, not pushed this step), each once.
  absl::Status Flushes() {
    PlanSlotSet& seen = scratch_.flushed;
    for (size_t i = 0; i < plan_.flush.slots.size(); ++i) {
      const uint32_t slot = plan_.flush.slots[i];
      const Key key = plan_.flush.keys[i];
      if (!InRange(slot)) return Error("flush.slots", i, OutOfRange(slot));
      if (!seen.Insert(slot)) {
        return Error("flush.slots", i, absl::StrCat("slot ", slot, " flushed twice"));
      }
      const SlotView::Slot s = view_.At(slot);
      if (s.key != key || s.state != SlotState::kHeld || scratch_.shared.Contains(slot)) {
        return Error("flush.slots", i,
                     absl::StrCat("slot ", slot, " holds no held gradients of key ", key));
      }
      view_.Set(slot, key, SlotState::kStale);
    }
    return absl::OkStatus();
  }

  absl::Status WriteBacks() {
    PlanSlotSet& seen = scratch_.written_back;
    for (size_t i = 0; i < plan_.writeback.slots.size(); ++i) {
      const uint32_t slot = plan_.writeback.slots[i];
      const Key key = plan_.writeback.keys[i];
      if (!InRange(slot)) return Error("writeback.slots", i, OutOfRange(slot));
      if (!seen.Insert(slot)) {
        return Error("writeback.slots", i, absl::StrCat("slot ", slot, " written back twice"));
      }
      const SlotView::Slot s = view_.At(slot);
      if (s.state == SlotState::kEmpty || s.key != key) {
        return Error("writeback.slots", i, absl::StrCat("slot ", slot, " does not hold key ", key));
      }
      if (scratch_.shared.Contains(slot)) {
        return Error("writeback.slots", i,
                     absl::StrCat("slot ", slot, " (key ", key,
                                  ") is shared or remote this iteration; the PS or its owner "
                                  "holds its newest copy"));
      }
      if (s.state != SlotState::kDirty) {
        return Error("writeback.slots", i,
                     absl::StrCat("slot ", slot, " (key ", key, ") is ", SlotStateName(s.state),
                                  "; only rows this worker owns are written back"));
      }
    }
    return absl::OkStatus();
  }

  size_t t_;
  const EmbeddingCache::Table& table_;
  const plan::TablePlan& plan_;
  const plan::TableSamples& samples_;
  CheckScratch& scratch_;  // slot sets: landing_slots (fetched or received), trained, shared
  SlotView view_;
  absl::flat_hash_set<Key> evicted_dirty_;
  absl::flat_hash_set<Key> dropped_;
  absl::flat_hash_set<Key> landing_keys_;
};

}  // namespace

StepValidator::StepValidator(int threads) {
  threads = std::max(threads, 1);
  for (int i = 0; i < threads; ++i) scratch_.push_back(std::make_unique<CheckScratch>());
  if (threads > 1)
    pool_ = std::make_unique<ThreadPool>(threads - 1, "plan-check");  // the caller is one
}
StepValidator::~StepValidator() = default;

absl::Status ValidatePlan(const EmbeddingCache& cache, const plan::Step& step) {
  return StepValidator().Check(cache, step);
}

absl::Status StepValidator::Check(const EmbeddingCache& cache, const plan::Step& step) {
  if (step.plan.size() != cache.num_tables() || step.samples.size() != cache.num_tables()) {
    return absl::InvalidArgumentError(
        absl::StrCat("step has ", step.plan.size(), " plans and ", step.samples.size(),
                     " sample tables; the job has ", cache.num_tables(), " tables"));
  }
  const size_t tables = cache.num_tables();
  if (pool_ == nullptr || tables < 2) {
    for (size_t t = 0; t < tables; ++t) {
      TableCheck check(t, cache.table(t), step.plan[t], step.samples[t], *scratch_[0]);
      if (auto s = check.Run(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // At most one chunk of tables per thread (ThreadPool::ParallelFor), each
  // with a scratch of its own.
  std::vector<absl::Status> status(tables);
  std::atomic<size_t> next_scratch{0};
  pool_->ParallelFor(tables, 1, [&](size_t begin, size_t end) {
    CheckScratch& scratch = *scratch_[next_scratch.fetch_add(1)];
    for (size_t t = begin; t < end; ++t) {
      status[t] = TableCheck(t, cache.table(t), step.plan[t], step.samples[t], scratch).Run();
      if (!status[t].ok()) return;
    }
  });
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace herald::worker
