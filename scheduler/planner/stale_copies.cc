#include "scheduler/planner/stale_copies.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {

StaleCopies::StaleCopies(uint32_t num_workers, uint32_t slots, uint32_t staleness)
    : staleness_(staleness), copies_(num_workers, std::vector<Copy>(slots)) {}

bool StaleCopies::Valid(uint32_t w, uint32_t slot, Key key) const {
  const Copy& c = copies_[w][slot];
  if (c.state != State::kClean && c.state != State::kHeld) return false;
  return uint64_t{c.current} <= uint64_t{c.start} + staleness_ &&
         uint64_t{GlobalClock(key)} <= uint64_t{c.current} + staleness_;
}

uint32_t StaleCopies::Behind(uint32_t w, uint32_t slot, Key key) const {
  const uint32_t global = GlobalClock(key);
  const uint32_t current = copies_[w][slot].current;
  return global > current ? global - current : 0;
}

void StaleCopies::Fetched(uint32_t w, uint32_t slot, Key key, bool in_place) {
  Row& row = rows_[key];
  if (!in_place) ++row.copies;
  copies_[w][slot] = Copy{row.clock, row.clock, State::kClean};
}

StaleCopies::Write StaleCopies::Train(uint32_t w, uint32_t slot, Key key) {
  Copy& c = copies_[w][slot];
  ++c.current;
  if (uint64_t{c.current} > uint64_t{c.start} + staleness_) {
    c.state = State::kOutdated;
    Pushed(key, c.current);
    return Write::kPush;
  }
  c.state = State::kHeld;
  return Write::kHold;
}

void StaleCopies::Flush(uint32_t w, uint32_t slot, Key key) {
  Copy& c = copies_[w][slot];
  c.state = State::kOutdated;
  Pushed(key, c.current);
}

bool StaleCopies::Evict(uint32_t w, uint32_t slot, Key key) {
  Copy& c = copies_[w][slot];
  const bool held = c.state == State::kHeld;
  if (held) Pushed(key, c.current);
  c = Copy{};
  auto it = rows_.find(key);
  // A row with a pushed clock stays until Commit moves it.
  if (it != rows_.end() && --it->second.copies == 0 && it->second.pending == 0) rows_.erase(it);
  return held;
}

void StaleCopies::Pushed(Key key, uint32_t clock) {
  // Pushed clocks are ≥ 1 (a copy's clock after at least one update), so
  // pending == 0 means the key is not in pushed_ yet.
  Row& row = rows_[key];
  if (row.pending == 0) pushed_.push_back(key);
  row.pending = std::max(row.pending, clock);
}

void StaleCopies::Commit() {
  for (Key key : pushed_) {
    auto it = rows_.find(key);
    Row& row = it->second;
    row.clock = std::max(row.clock, row.pending);
    row.pending = 0;
    if (row.copies == 0) rows_.erase(it);
  }
  pushed_.clear();
}

void StaleCopies::Save(StateWriter* out) const {
  out->Pod(staleness_);
  out->Pod<uint64_t>(copies_.size());
  for (const std::vector<Copy>& slots : copies_) out->Vec(slots);
  // Rows in key order: the same state saves as the same bytes.
  std::vector<Key> keys;
  for (const auto& [key, row] : rows_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  std::vector<Row> rows;
  for (Key key : keys) rows.push_back(rows_.at(key));
  out->Vec(keys);
  out->Vec(rows);
}

bool StaleCopies::Load(StateReader* in) {
  uint32_t staleness;
  uint64_t workers;
  if (!in->Pod("stale.staleness", &staleness) || !in->Pod("stale.workers", &workers)) return false;
  if (staleness != staleness_ || workers != copies_.size()) {
    return in->Invalid("stale",
                       absl::StrCat("staleness ", staleness, " and ", workers, " workers, want ",
                                    staleness_, " and ", copies_.size()));
  }
  for (std::vector<Copy>& slots : copies_) {
    const size_t want = slots.size();
    if (!in->Vec("stale.copies", &slots)) return false;
    if (slots.size() != want) {
      return in->Invalid("stale.copies", absl::StrCat(slots.size(), " slots, want ", want));
    }
    for (const Copy& c : slots) {
      if (c.state > State::kOutdated) return in->Invalid("stale.copies", "a state out of range");
    }
  }
  std::vector<Key> keys;
  std::vector<Row> rows;
  if (!in->Vec("stale.keys", &keys) || !in->Vec("stale.rows", &rows)) return false;
  if (keys.size() != rows.size()) {
    return in->Invalid("stale.rows", absl::StrCat(rows.size(), " rows for ", keys.size(), " keys"));
  }
  rows_.clear();
  for (size_t i = 0; i < keys.size(); ++i) rows_[keys[i]] = rows[i];
  pushed_.clear();
  return true;
}

}  // namespace herald::scheduler
