#include "scheduler/planner/eviction_order.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {

absl::StatusOr<EvictionKind> ParseEvictionKind(const std::string& name) {
  if (name == "lru") return EvictionKind::kLru;
  if (name == "lfu") return EvictionKind::kLfu;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown eviction '", name, "' (want lru or lfu)"));
}

const char* EvictionKindName(EvictionKind kind) {
  return kind == EvictionKind::kLru ? "lru" : "lfu";
}

std::unique_ptr<EvictionOrder> MakeEvictionOrder(EvictionKind kind, uint32_t slots) {
  if (kind == EvictionKind::kLfu) return std::make_unique<LfuOrder>(slots);
  return std::make_unique<LruOrder>(slots);
}

LruOrder::LruOrder(uint32_t slots, uint32_t renumber_at)
    : slot_(slots, SlotRecord{0, kQueue, 0}), renumber_at_(renumber_at) {}

void LruOrder::Use(uint32_t slot, uint64_t iteration) {
  if (iteration != iteration_) {
    iteration_ = iteration;
    first_use_of_iteration_ = uses_ + 1;
  }
  SlotRecord& r = slot_[slot];
  r.place = kQueue;  // a parked or cleaned entry is dead now: its use is old
  r.latest = ++uses_;
  queue_.push_back({slot, uses_});
  const size_t entries =
      queue_.size() - head_ + parked_.size() - parked_head_ + cleaned_.size() - cleaned_head_;
  if (entries > 2 * slot_.size() + 64 || uses_ >= renumber_at_) Compact();
}

void LruOrder::Remove(uint32_t slot) { slot_[slot] = SlotRecord{0, kQueue, 0}; }

void LruOrder::SetDirty(uint32_t slot, bool dirty) {
  SlotRecord& r = slot_[slot];
  if (r.dirty == dirty) return;
  r.dirty = dirty;
  // A slot turning dirty was just used: its entry is at the queue's back,
  // past every parked one, so the parked queue stays in use order.
  if (!dirty && r.place == kParked) {
    r.place = kCleaned;
    cleaned_.push_back({slot, r.latest});
  }
}

void LruOrder::MarkAllClean() {
  for (SlotRecord& r : slot_) r.dirty = 0;
  // The parked slots join the cleaned ones (sorted in at the next listing;
  // they are in use order already).
  for (size_t i = parked_head_; i < parked_.size(); ++i) {
    if (!LiveIn(parked_[i], kParked)) continue;
    slot_[parked_[i].slot].place = kCleaned;
    cleaned_.push_back(parked_[i]);
  }
  parked_.clear();
  parked_head_ = 0;
}

void LruOrder::Compact() {
  // Every live entry, renumbered in use order: the three lists are each in
  // use order (once the cleaned one is sorted), so a merge orders them all
  // (parked and cleaned slots are older than the queue's entries after
  // them, not than all of them).
  SortCleaned();
  auto by_use = [](const Entry& a, const Entry& b) { return a.use < b.use; };
  std::vector<Entry> parked, cleaned, older, live;
  parked.reserve(parked_.size() - parked_head_);
  cleaned.reserve(cleaned_.size() - cleaned_head_);
  for (size_t i = parked_head_; i < parked_.size(); ++i) {
    if (LiveIn(parked_[i], kParked)) parked.push_back(parked_[i]);
  }
  for (size_t i = cleaned_head_; i < cleaned_.size(); ++i) {
    if (LiveIn(cleaned_[i], kCleaned)) cleaned.push_back(cleaned_[i]);
  }
  older.resize(parked.size() + cleaned.size());
  std::merge(parked.begin(), parked.end(), cleaned.begin(), cleaned.end(), older.begin(), by_use);
  live.reserve(older.size() + queue_.size() - head_);
  size_t next_older = 0;
  for (size_t i = head_; i < queue_.size(); ++i) {
    if (!LiveIn(queue_[i], kQueue)) continue;
    while (next_older < older.size() && older[next_older].use < queue_[i].use) {
      live.push_back(older[next_older++]);
    }
    live.push_back(queue_[i]);
  }
  live.insert(live.end(), older.begin() + static_cast<std::ptrdiff_t>(next_older), older.end());
  parked_.clear();
  parked_head_ = 0;
  cleaned_.clear();
  cleaned_head_ = 0;
  queue_.clear();
  queue_.reserve(live.size());
  head_ = 0;
  uint32_t first_now = 0;  // the renumbered first use of iteration_, once seen
  for (size_t i = 0; i < live.size(); ++i) {
    const Entry e = live[i];
    const uint32_t renumbered = static_cast<uint32_t>(i + 1);
    if (first_now == 0 && e.use >= first_use_of_iteration_) first_now = renumbered;
    slot_[e.slot].latest = renumbered;
    switch (slot_[e.slot].place) {
      case kQueue:
        queue_.push_back({e.slot, renumbered});
        break;
      case kParked:
        parked_.push_back({e.slot, renumbered});
        break;
      case kCleaned:
        cleaned_.push_back({e.slot, renumbered});
        break;
    }
  }
  cleaned_sorted_ = cleaned_.size();
  first_use_of_iteration_ = first_now == 0 ? static_cast<uint32_t>(live.size()) + 1 : first_now;
  uses_ = static_cast<uint32_t>(live.size());
}

void LruOrder::SortCleaned() const {
  if (cleaned_sorted_ == cleaned_.size()) return;
  auto by_use = [](const Entry& a, const Entry& b) { return a.use < b.use; };
  const auto sorted_end = cleaned_.begin() + static_cast<std::ptrdiff_t>(cleaned_sorted_);
  std::sort(sorted_end, cleaned_.end(), by_use);
  std::inplace_merge(cleaned_.begin() + static_cast<std::ptrdiff_t>(cleaned_head_), sorted_end,
                     cleaned_.end(), by_use);
  cleaned_sorted_ = cleaned_.size();
}

void LruOrder::DropDeadFront() const {
  while (head_ < queue_.size() && !LiveIn(queue_[head_], kQueue)) ++head_;
  if (head_ > 4096 && head_ * 2 > queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  while (parked_head_ < parked_.size() && !LiveIn(parked_[parked_head_], kParked)) {
    ++parked_head_;
  }
  if (parked_head_ > 4096 && parked_head_ * 2 > parked_.size()) {
    parked_.erase(parked_.begin(), parked_.begin() + static_cast<std::ptrdiff_t>(parked_head_));
    parked_head_ = 0;
  }
  // The cleaned slots: sort the new ones in, then drop the dead front.
  SortCleaned();
  while (cleaned_head_ < cleaned_.size() && !LiveIn(cleaned_[cleaned_head_], kCleaned)) {
    ++cleaned_head_;
  }
  if (cleaned_head_ == cleaned_.size()) {
    cleaned_.clear();
    cleaned_head_ = cleaned_sorted_ = 0;
  }
}

int64_t LruOrder::Coldest(uint64_t iteration) const {
  std::vector<uint32_t> one;
  ColdestN(iteration, 1, &one);
  return one.empty() ? -1 : static_cast<int64_t>(one[0]);
}

void LruOrder::ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const {
  // Live queue entries are each slot's latest use, so no slot appears
  // twice; the first slot used at `iteration` ends the queue's part (all
  // after it were too; parked and cleaned slots never were). The entries of
  // slots evicted since the last call are dead now: skip them once here,
  // not on every later call.
  DropDeadFront();
  // Clean slots: the queue's (parking the dirty ones passed) merged with
  // the cleaned ones by use number.
  size_t c = cleaned_head_;
  size_t i = head_;
  while (n > 0) {
    // The next clean queue slot not used now, parking the dirty ones passed.
    for (; i < queue_.size(); ++i) {
      const Entry e = queue_[i];
      if (!LiveIn(e, kQueue)) continue;
      if (UsedAt(e.use, iteration)) {
        i = queue_.size();  // the rest were used now too
        break;
      }
      if (!slot_[e.slot].dirty) break;
      parked_.push_back(e);  // after every slot parked so far: older than the rest
      slot_[e.slot].place = kParked;
    }
    while (c < cleaned_.size() && !LiveIn(cleaned_[c], kCleaned)) ++c;
    const bool from_queue = i < queue_.size();
    const bool from_cleaned = c < cleaned_.size();
    if (!from_queue && !from_cleaned) break;
    if (from_queue && (!from_cleaned || queue_[i].use < cleaned_[c].use)) {
      out->push_back(queue_[i++].slot);
    } else {
      out->push_back(cleaned_[c++].slot);
    }
    --n;
  }
  // Then the dirty ones: every clean one is listed, so the queue was read
  // up to its first slot used now and every dirty slot before it is parked.
  for (size_t p = parked_head_; n > 0 && p < parked_.size(); ++p) {
    if (!LiveIn(parked_[p], kParked)) continue;
    out->push_back(parked_[p].slot);
    --n;
  }
}

LfuOrder::LfuOrder(uint32_t slots) : uses_(slots, 0), last_use_(slots, 0), tracked_(slots, false) {}

void LfuOrder::Use(uint32_t slot, uint64_t iteration) {
  if (tracked_[slot]) order_.erase(Entry{uses_[slot], last_use_[slot], slot});
  ++uses_[slot];
  last_use_[slot] = iteration;
  tracked_[slot] = true;
  order_.insert(Entry{uses_[slot], last_use_[slot], slot});
}

void LfuOrder::Remove(uint32_t slot) {
  if (!tracked_[slot]) return;
  order_.erase(Entry{uses_[slot], last_use_[slot], slot});
  tracked_[slot] = false;
  uses_[slot] = 0;
}

int64_t LfuOrder::Coldest(uint64_t iteration) const {
  for (const Entry& e : order_) {
    if (std::get<1>(e) != iteration) return std::get<2>(e);
  }
  return -1;
}

void LfuOrder::ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const {
  for (const Entry& e : order_) {
    if (n == 0) return;
    if (std::get<1>(e) == iteration) continue;
    out->push_back(std::get<2>(e));
    --n;
  }
}

void LruOrder::Save(StateWriter* out) const {
  out->Vec(slot_);
  out->Pod(renumber_at_);
  out->Pod(uses_);
  out->Pod(iteration_);
  out->Pod(first_use_of_iteration_);
  out->Vec(queue_);
  out->Pod(head_);
  out->Vec(parked_);
  out->Pod(parked_head_);
  out->Vec(cleaned_);
  out->Pod(cleaned_head_);
  out->Pod(cleaned_sorted_);
}

bool LruOrder::Load(StateReader* in) {
  LruOrder read(0);
  if (!in->Vec("lru.slots", &read.slot_) || !in->Pod("lru.renumber_at", &read.renumber_at_) ||
      !in->Pod("lru.uses", &read.uses_) || !in->Pod("lru.iteration", &read.iteration_) ||
      !in->Pod("lru.first_use_of_iteration", &read.first_use_of_iteration_) ||
      !in->Vec("lru.queue", &read.queue_) || !in->Pod("lru.queue_head", &read.head_) ||
      !in->Vec("lru.parked", &read.parked_) || !in->Pod("lru.parked_head", &read.parked_head_) ||
      !in->Vec("lru.cleaned", &read.cleaned_) ||
      !in->Pod("lru.cleaned_head", &read.cleaned_head_) ||
      !in->Pod("lru.cleaned_sorted", &read.cleaned_sorted_)) {
    return false;
  }
  if (read.slot_.size() != slot_.size()) {
    return in->Invalid("lru.slots",
                       absl::StrCat(read.slot_.size(), " slots, the cache has ", slot_.size()));
  }
  if (read.head_ > read.queue_.size() || read.parked_head_ > read.parked_.size() ||
      read.cleaned_head_ > read.cleaned_sorted_ || read.cleaned_sorted_ > read.cleaned_.size()) {
    return in->Invalid("lru.queue_head", "a list's head is past its end");
  }
  for (const auto* list : {&read.queue_, &read.parked_, &read.cleaned_}) {
    for (const Entry& e : *list) {
      if (e.slot >= slot_.size()) {
        return in->Invalid("lru.queue", absl::StrCat("slot ", e.slot, " of ", slot_.size()));
      }
    }
  }
  for (const SlotRecord& r : read.slot_) {
    if (r.place > kCleaned) return in->Invalid("lru.slots", "a slot in no list");
  }
  *this = std::move(read);
  return true;
}

void LfuOrder::Save(StateWriter* out) const {
  out->Vec(uses_);
  out->Vec(last_use_);
  out->Vec(tracked_);
}

bool LfuOrder::Load(StateReader* in) {
  std::vector<uint64_t> uses, last_use;
  std::vector<bool> tracked;
  if (!in->Vec("lfu.uses", &uses) || !in->Vec("lfu.last_use", &last_use) ||
      !in->Vec("lfu.tracked", &tracked)) {
    return false;
  }
  if (uses.size() != uses_.size() || last_use.size() != uses_.size() ||
      tracked.size() != uses_.size()) {
    return in->Invalid("lfu.uses", absl::StrCat("not ", uses_.size(), " slots"));
  }
  uses_ = std::move(uses);
  last_use_ = std::move(last_use);
  tracked_ = std::move(tracked);
  // The ordered set holds exactly the tracked slots (Use, Remove).
  order_.clear();
  for (uint32_t slot = 0; slot < uses_.size(); ++slot) {
    if (tracked_[slot]) order_.insert(Entry{uses_[slot], last_use_[slot], slot});
  }
  return true;
}

}  // namespace herald::scheduler
