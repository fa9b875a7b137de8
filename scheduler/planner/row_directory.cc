#include "scheduler/planner/row_directory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {

RowDirectory::RowDirectory(uint32_t num_workers)
    : num_workers_(std::max<uint32_t>(num_workers, 1)),
      high_words_((num_workers_ + 63) / 64 - 1),
      wide_after_(std::max<uint32_t>(3, num_workers_ / 4)),
      narrow_at_(std::max<uint32_t>(2, wide_after_ / 2)) {}

uint32_t RowDirectory::FindOrAdd(Key key) {
  auto [it, inserted] = index_.try_emplace(key, 0);
  if (!inserted) return it->second;
  uint32_t handle;
  if (free_.empty()) {
    handle = num_handles_++;
    const uint32_t chunk = ChunkOf(handle);
    if (chunk == rows_.size()) {
      const size_t entries = size_t{1} << kChunkBits;
      rows_.emplace_back();
      rows_.back().reserve(entries);
      if (high_words_ > 0) {
        high_.emplace_back();
        high_.back().reserve(entries * 2 * high_words_);
      }
    }
    rows_[chunk].emplace_back();
    if ((handle & 63) == 0) trained_marks_.push_back(0);
    if (high_words_ > 0) high_[chunk].resize(high_[chunk].size() + 2 * high_words_, 0);
  } else {
    handle = free_.back();
    free_.pop_back();
    at(handle) = RowState();
    trained_marks_[handle >> 6] &= ~(uint64_t{1} << (handle & 63));
    if (high_words_ > 0) std::fill(High(handle), High(handle) + 2 * high_words_, 0);
  }
  at(handle).key = key;
  it->second = handle;
  return handle;
}

void RowDirectory::ClearHighNewest(uint32_t handle) {
  std::fill(High(handle) + high_words_, High(handle) + 2 * high_words_, 0);
}

void RowDirectory::SetSlot(uint32_t handle, uint32_t w, uint32_t slot) {
  RowState& row = at(handle);
  if (row.wide == RowState::kNoWide) {
    for (int i = 0; i < 2; ++i) {
      if (row.slot_worker[i] == w) {
        row.slot[i] = slot;
        return;
      }
    }
    if (row.out_of_line > 0) {
      auto it = overflow_.find(OverflowKey(handle, w));
      if (it != overflow_.end()) {
        it->second = slot;
        return;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (row.slot_worker[i] == RowState::kNoWorker) {
        row.slot_worker[i] = w;
        row.slot[i] = slot;
        return;
      }
    }
    if (row.out_of_line + 3 < wide_after_) {  // this is copy out_of_line + 3
      overflow_.emplace(OverflowKey(handle, w), slot);
      ++row.out_of_line;
      return;
    }
    MakeWide(handle);
  }
  uint32_t& entry = wide_[uint64_t{row.wide} * num_workers_ + w];
  if (entry == kNoSlot) ++row.out_of_line;
  entry = slot;
}

uint32_t RowDirectory::SlotOf(uint32_t handle, uint32_t w) const {
  const RowState& row = at(handle);
  if (row.wide != RowState::kNoWide) return wide_[uint64_t{row.wide} * num_workers_ + w];
  for (int i = 0; i < 2; ++i) {
    if (row.slot_worker[i] == w) return row.slot[i];
  }
  return overflow_.at(OverflowKey(handle, w));
}

void RowDirectory::ClearSlot(uint32_t handle, uint32_t w) {
  RowState& row = at(handle);
  if (row.wide != RowState::kNoWide) {
    uint32_t& entry = wide_[uint64_t{row.wide} * num_workers_ + w];
    if (entry == kNoSlot) return;
    entry = kNoSlot;
    if (--row.out_of_line <= narrow_at_) MakeNarrow(handle);
    return;
  }
  for (int i = 0; i < 2; ++i) {
    if (row.slot_worker[i] == w) {
      row.slot_worker[i] = RowState::kNoWorker;
      return;
    }
  }
  if (overflow_.erase(OverflowKey(handle, w)) > 0) --row.out_of_line;
}

void RowDirectory::MakeWide(uint32_t handle) {
  RowState& row = at(handle);
  if (wide_free_.empty()) {
    row.wide = static_cast<uint32_t>(wide_.size() / num_workers_);
    wide_.resize(wide_.size() + num_workers_, kNoSlot);
  } else {
    row.wide = wide_free_.back();
    wide_free_.pop_back();
  }
  uint32_t* block = &wide_[uint64_t{row.wide} * num_workers_];
  std::fill(block, block + num_workers_, kNoSlot);
  for (int i = 0; i < 2; ++i) {
    if (row.slot_worker[i] == RowState::kNoWorker) continue;
    block[row.slot_worker[i]] = row.slot[i];
    row.slot_worker[i] = RowState::kNoWorker;
    ++row.out_of_line;
  }
  uint32_t moved = 0;
  for (uint32_t w = 0; moved < row.out_of_line && w < num_workers_; ++w) {
    if (block[w] != kNoSlot) {
      ++moved;
      continue;
    }
    auto it = overflow_.find(OverflowKey(handle, w));
    if (it == overflow_.end()) continue;
    block[w] = it->second;
    overflow_.erase(it);
    ++moved;
  }
}

void RowDirectory::MakeNarrow(uint32_t handle) {
  RowState& row = at(handle);
  const uint32_t* block = &wide_[uint64_t{row.wide} * num_workers_];
  wide_free_.push_back(row.wide);
  row.wide = RowState::kNoWide;
  row.out_of_line = 0;
  int inline_used = 0;
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (block[w] == kNoSlot) continue;
    if (inline_used < 2) {
      row.slot_worker[inline_used] = w;
      row.slot[inline_used] = block[w];
      ++inline_used;
    } else {
      overflow_.emplace(OverflowKey(handle, w), block[w]);
      ++row.out_of_line;
    }
  }
}

void RowDirectory::Sweep(uint64_t iteration) {
  keep_.clear();
  // Released entries are scattered: start reading them, and then their
  // keys' places in the index, a few ahead.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < release_.size(); ++i) {
    if (i + 2 * kAhead < release_.size()) PrefetchRow(release_[i + 2 * kAhead]);
    if (i + kAhead < release_.size()) index_.prefetch(at(release_[i + kAhead]).key);
    const uint32_t handle = release_[i];
    RowState& row = at(handle);
    if (IsCached(handle) || row.holder != kPsHolder) continue;  // cached again
    // Kept while a fetch must be marked with a shorter distance than a
    // new entry (stamp 0) would give (RowState::EarlyDistance).
    if (row.pin_stamp > iteration + 1 ||
        (row.ps_changed_stamp != 0 && row.EarlyDistance(iteration + 1) < kMaxEarlyDistance)) {
      keep_.push_back(handle);  // still needed; look again at the next sweep
      continue;
    }
    auto it = index_.find(row.key);
    if (it == index_.end() || it->second != handle) continue;  // released twice
    index_.erase(it);
    if (row.wide != RowState::kNoWide) wide_free_.push_back(row.wide);
    row.wide = RowState::kNoWide;
    free_.push_back(handle);
  }
  release_.swap(keep_);
}

void RowDirectory::Save(StateWriter* out) const {
  out->Pod(num_workers_);
  out->Pod(num_handles_);
  out->Vecs(rows_);
  out->Vecs(high_);
  std::vector<Key> keys;
  std::vector<uint32_t> handles;
  keys.reserve(index_.size());
  handles.reserve(index_.size());
  for (const auto& [key, handle] : index_) {
    keys.push_back(key);
    handles.push_back(handle);
  }
  out->Vec(keys);
  out->Vec(handles);
  std::vector<uint64_t> overflow_keys;
  std::vector<uint32_t> overflow_slots;
  for (const auto& [key, slot] : overflow_) {
    overflow_keys.push_back(key);
    overflow_slots.push_back(slot);
  }
  out->Vec(overflow_keys);
  out->Vec(overflow_slots);
  out->Vec(wide_);
  out->Vec(wide_free_);
  out->Vec(free_);
  out->Vec(release_);
}

bool RowDirectory::Load(StateReader* in) {
  uint32_t num_workers, num_handles;
  std::vector<std::vector<RowState>> rows;
  std::vector<std::vector<uint64_t>> high;
  std::vector<Key> keys;
  std::vector<uint32_t> handles, overflow_slots, wide, wide_free, free, release;
  std::vector<uint64_t> overflow_keys;
  if (!in->Pod("directory.num_workers", &num_workers) ||
      !in->Pod("directory.num_handles", &num_handles) || !in->Vecs("directory.rows", &rows) ||
      !in->Vecs("directory.high", &high) || !in->Vec("directory.keys", &keys) ||
      !in->Vec("directory.handles", &handles) ||
      !in->Vec("directory.overflow_keys", &overflow_keys) ||
      !in->Vec("directory.overflow_slots", &overflow_slots) || !in->Vec("directory.wide", &wide) ||
      !in->Vec("directory.wide_free", &wide_free) || !in->Vec("directory.free", &free) ||
      !in->Vec("directory.release", &release)) {
    return false;
  }
  if (num_workers != num_workers_) {
    return in->Invalid("directory.num_workers",
                       absl::StrCat(num_workers, ", the planner has ", num_workers_));
  }
  // Chunks of 2^kChunkBits entries, the last one partly filled.
  const size_t chunk = size_t{1} << kChunkBits;
  if (rows.size() != (num_handles + chunk - 1) / chunk ||
      (high_words_ > 0 && high.size() != rows.size()) || (high_words_ == 0 && !high.empty())) {
    return in->Invalid("directory.rows",
                       absl::StrCat(rows.size(), " chunks for ", num_handles, " handles"));
  }
  for (size_t c = 0; c < rows.size(); ++c) {
    const size_t want = std::min(chunk, num_handles - c * chunk);
    if (rows[c].size() != want || (high_words_ > 0 && high[c].size() != want * 2 * high_words_)) {
      return in->Invalid("directory.rows", absl::StrCat("chunk ", c, " is not ", want, " entries"));
    }
    rows[c].reserve(chunk);  // entries stay put as the chunk fills (FindOrAdd)
    if (high_words_ > 0) high[c].reserve(chunk * 2 * high_words_);
  }
  if (keys.size() != handles.size() || overflow_keys.size() != overflow_slots.size()) {
    return in->Invalid("directory.keys", "keys and handles differ in number");
  }
  if (wide.size() % num_workers_ != 0) {
    return in->Invalid("directory.wide", "not whole blocks of one slot per worker");
  }
  for (const auto* list : {&handles, &free, &release}) {
    for (uint32_t h : *list) {
      if (h >= num_handles) {
        return in->Invalid("directory.handles", absl::StrCat("handle ", h, " of ", num_handles));
      }
    }
  }
  for (const auto& chunk_rows : rows) {
    for (const RowState& row : chunk_rows) {
      if (row.wide != RowState::kNoWide && uint64_t{row.wide} >= wide.size() / num_workers_) {
        return in->Invalid("directory.rows", absl::StrCat("wide block ", row.wide, " of ",
                                                          wide.size() / num_workers_));
      }
    }
  }
  index_.clear();
  index_.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) index_.emplace(keys[i], handles[i]);
  overflow_.clear();
  for (size_t i = 0; i < overflow_keys.size(); ++i) {
    overflow_.emplace(overflow_keys[i], overflow_slots[i]);
  }
  num_handles_ = num_handles;
  trained_marks_.assign((size_t{num_handles} + 63) / 64, 0);
  rows_ = std::move(rows);
  high_ = std::move(high);
  wide_ = std::move(wide);
  wide_free_ = std::move(wide_free);
  free_ = std::move(free);
  release_ = std::move(release);
  keep_.clear();
  return true;
}

}  // namespace herald::scheduler
