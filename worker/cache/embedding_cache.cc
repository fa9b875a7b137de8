#include "worker/cache/embedding_cache.h"

namespace herald::worker {

const char* SlotStateName(SlotState state) {
  switch (state) {
    case SlotState::kEmpty:
      return "empty";
    case SlotState::kClean:
      return "clean";
    case SlotState::kDirty:
      return "dirty";
    case SlotState::kStale:
      return "stale";
    case SlotState::kServed:
      return "served";
    case SlotState::kHeld:
      return "held";
  }
  return "?";
}

EmbeddingCache::EmbeddingCache(Device* device, const std::vector<CacheTableConfig>& tables)
    : device_(device) {
  tables_.resize(tables.size());
  for (size_t t = 0; t < tables.size(); ++t) {
    Table& table = tables_[t];
    table.dim = tables[t].dim;
    table.row_floats = math::RowFloats(tables[t].optimizer.kind, tables[t].dim);
    table.capacity = tables[t].slots;
    table.optimizer = tables[t].optimizer;
    table.rows = DeviceArray<float>(device, static_cast<size_t>(table.capacity) * table.row_floats);
    table.grads = DeviceArray<float>(device, static_cast<size_t>(table.capacity) * table.dim);
    table.keys.assign(table.capacity, 0);
    table.states.assign(table.capacity, SlotState::kEmpty);
    table.versions.assign(table.capacity, 0);
  }
}

void EmbeddingCache::Evict(size_t t, uint32_t slot) {
  Table& table = tables_[t];
  table.slot_of.erase(table.keys[slot]);
  table.states[slot] = SlotState::kEmpty;
  ++table.changes;
}

uint64_t EmbeddingCache::changes() const {
  uint64_t sum = 0;
  for (const Table& t : tables_) sum += t.changes;
  return sum;
}

void EmbeddingCache::EvictSlots(size_t t, const std::vector<uint32_t>& slots) {
  Table& table = tables_[t];
  for (uint32_t slot : slots) {
    table.slot_of.erase(table.keys[slot]);
    table.states[slot] = SlotState::kEmpty;
  }
  table.changes += slots.size();
}

void EmbeddingCache::LoadSlots(size_t t, const std::vector<uint32_t>& slots, const Key* keys,
                               const uint64_t* versions) {
  Table& table = tables_[t];
  for (size_t i = 0; i < slots.size(); ++i) {
    table.keys[slots[i]] = keys[i];
    table.states[slots[i]] = SlotState::kClean;
    table.versions[slots[i]] = versions[i];
    table.slot_of[keys[i]] = slots[i];
  }
  table.changes += slots.size();
}

void EmbeddingCache::Load(size_t t, uint32_t slot, Key key, uint64_t version) {
  Table& table = tables_[t];
  table.keys[slot] = key;
  table.states[slot] = SlotState::kClean;
  table.versions[slot] = version;
  table.slot_of[key] = slot;
  ++table.changes;
}

DeviceArray<float>& EmbeddingCache::HoldStorage(size_t t) {
  Table& table = tables_[t];
  if (table.held.size() == 0) {
    const size_t n = static_cast<size_t>(table.capacity) * table.dim;
    table.held = DeviceArray<float>(device_, n);
    device_->Fill(table.held.data(), n, 0.0f);
  }
  return table.held;
}

uint64_t EmbeddingCache::DeviceBytes() const {
  uint64_t bytes = 0;
  for (const Table& t : tables_) {
    bytes += (t.rows.size() + t.grads.size() + t.held.size()) * sizeof(float);
  }
  return bytes;
}

}  // namespace herald::worker
