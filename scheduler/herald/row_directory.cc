#include "scheduler/herald/row_directory.h"

namespace herald::scheduler {

uint32_t RowDirectory::FindOrAdd(Key key) {
  auto [it, inserted] = index_.try_emplace(key, 0);
  if (!inserted) return it->second;
  uint32_t handle;
  if (free_.empty()) {
    handle = static_cast<uint32_t>(rows_.size());
    rows_.emplace_back();
  } else {
    handle = free_.back();
    free_.pop_back();
    rows_[handle] = RowState();
  }
  rows_[handle].key = key;
  it->second = handle;
  return handle;
}

void RowDirectory::SetSlot(uint32_t handle, uint32_t w, uint32_t slot) {
  RowState& row = rows_[handle];
  for (int i = 0; i < 2; ++i) {
    if (row.slot_worker[i] == RowState::kNoWorker || row.slot_worker[i] == w) {
      row.slot_worker[i] = w;
      row.slot[i] = slot;
      return;
    }
  }
  overflow_[OverflowKey(handle, w)] = slot;
}

uint32_t RowDirectory::SlotOf(uint32_t handle, uint32_t w) const {
  const RowState& row = rows_[handle];
  for (int i = 0; i < 2; ++i) {
    if (row.slot_worker[i] == w) return row.slot[i];
  }
  return overflow_.at(OverflowKey(handle, w));
}

void RowDirectory::ClearSlot(uint32_t handle, uint32_t w) {
  RowState& row = rows_[handle];
  for (int i = 0; i < 2; ++i) {
    if (row.slot_worker[i] == w) {
      row.slot_worker[i] = RowState::kNoWorker;
      return;
    }
  }
  overflow_.erase(OverflowKey(handle, w));
}

void RowDirectory::Sweep(uint64_t iteration) {
  keep_.clear();
  for (uint32_t handle : release_) {
    RowState& row = rows_[handle];
    if (!row.resident.Empty() || row.holder != kPsHolder) continue;  // cached again
    if (row.pin_stamp > iteration + 1 || row.ps_changed_stamp == iteration + 1) {
      keep_.push_back(handle);  // still needed; look again at the next sweep
      continue;
    }
    auto it = index_.find(row.key);
    if (it == index_.end() || it->second != handle) continue;  // released twice
    index_.erase(it);
    free_.push_back(handle);
  }
  release_.swap(keep_);
}

}  // namespace herald::scheduler
