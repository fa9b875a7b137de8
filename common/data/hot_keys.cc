#include "common/data/hot_keys.h"

#include <algorithm>
#include <utility>

namespace herald::data {

HotKeys::HotKeys(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

bool HotKeys::Less(uint32_t a, uint32_t b) const {
  if (counts_[a] != counts_[b]) return counts_[a] < counts_[b];
  return keys_[a] > keys_[b];  // the larger key goes first among equals
}

void HotKeys::Swap(size_t a, size_t b) {
  std::swap(heap_[a], heap_[b]);
  pos_[heap_[a]] = static_cast<uint32_t>(a);
  pos_[heap_[b]] = static_cast<uint32_t>(b);
}

void HotKeys::SiftUp(size_t pos) {
  while (pos > 0) {
    const size_t parent = (pos - 1) / 2;
    if (!Less(heap_[pos], heap_[parent])) return;
    Swap(pos, parent);
    pos = parent;
  }
}

void HotKeys::SiftDown(size_t pos) {
  for (;;) {
    size_t least = pos;
    for (size_t child : {2 * pos + 1, 2 * pos + 2}) {
      if (child < heap_.size() && Less(heap_[child], heap_[least])) least = child;
    }
    if (least == pos) return;
    Swap(pos, least);
    pos = least;
  }
}

void HotKeys::Add(Key key) {
  auto [it, inserted] = entry_of_.try_emplace(key, 0);
  if (!inserted) {
    ++counts_[it->second];
    SiftDown(pos_[it->second]);
    return;
  }
  if (keys_.size() < capacity_) {
    const uint32_t entry = static_cast<uint32_t>(keys_.size());
    it->second = entry;
    keys_.push_back(key);
    counts_.push_back(1);
    pos_.push_back(static_cast<uint32_t>(heap_.size()));
    heap_.push_back(entry);
    SiftUp(heap_.size() - 1);
    return;
  }
  const uint32_t entry = heap_[0];  // the least counted key gives way
  entry_of_.erase(keys_[entry]);
  it = entry_of_.find(key);  // erase may have moved the new element
  it->second = entry;
  keys_[entry] = key;
  ++counts_[entry];
  SiftDown(0);
}

std::vector<Key> HotKeys::Top(size_t n) const {
  std::vector<uint32_t> entries(keys_.size());
  for (uint32_t e = 0; e < entries.size(); ++e) entries[e] = e;
  n = std::min(n, entries.size());
  std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(n),
                    entries.end(), [&](uint32_t a, uint32_t b) {
                      if (counts_[a] != counts_[b]) return counts_[a] > counts_[b];
                      return keys_[a] < keys_[b];
                    });
  std::vector<Key> top(n);
  for (size_t i = 0; i < n; ++i) top[i] = keys_[entries[i]];
  return top;
}

uint64_t HotKeys::Count(Key key) const {
  auto it = entry_of_.find(key);
  return it == entry_of_.end() ? 0 : counts_[it->second];
}

}  // namespace herald::data
