#include "worker/cache/held_gradients.h"

#include <utility>

namespace herald::worker {

HeldGradients::HeldGradients(Device* device, EmbeddingCache* cache, SlotTransfer* transfer)
    : device_(device), cache_(cache), transfer_(transfer) {
  hold_slots_.Bind(device);
}

void HeldGradients::Hold(const plan::Step& step, std::vector<Device::RowUpdateTable>* updates) {
  // Every table's hold list in one upload; held += grads for every
  // table's rows at once (both gathered into one block each, added, the
  // sums scattered back), then the slots are updated as owned ones.
  std::vector<uint32_t> all;
  std::vector<size_t> at(cache_->num_tables() + 1, 0);
  size_t floats = 0;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    at[t] = all.size();
    const std::vector<uint32_t>& hold = step.plan[t].hold.slots;
    all.insert(all.end(), hold.begin(), hold.end());
    floats += hold.size() * cache_->table(t).dim;
  }
  if (all.empty()) return;
  hold_slots_.CopyFromHost(all);
  float* grads = transfer_->Scratch(2 * floats);  // once: no reallocation between the launches
  float* sums = grads + floats;
  std::vector<Device::RowsOfTable> gradient_rows, held_rows;
  size_t float_at = 0;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const int n = static_cast<int>(step.plan[t].hold.slots.size());
    if (n == 0) continue;
    const int dim = static_cast<int>(cache_->table(t).dim);
    const uint32_t* slots = hold_slots_.data() + at[t];
    gradient_rows.push_back({cache_->table(t).grads.data(), dim, slots, n, dim, grads + float_at});
    held_rows.push_back({cache_->HoldStorage(t).data(), dim, slots, n, dim, sums + float_at});
    float_at += static_cast<size_t>(n) * dim;
  }
  device_->GatherRowsOfTables(gradient_rows);
  device_->GatherRowsOfTables(held_rows);
  const int width = static_cast<int>(floats);  // one row of every float: elementwise
  device_->Add2D(grads, width, 1, width, sums, width);
  device_->ScatterRowsOfTables(held_rows);
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const int n = static_cast<int>(step.plan[t].hold.slots.size());
    if (n == 0) continue;
    EmbeddingCache::Table& table = cache_->table(t);
    const int dim = static_cast<int>(table.dim);
    const uint32_t* slots = hold_slots_.data() + at[t];
    Device::RowUpdateTable update;
    update.optimizer = math::AtIteration(table.optimizer, step.iteration);
    update.dim = dim;
    update.slots = slots;
    update.n = n;
    update.grads = table.grads.data();
    update.rows = table.rows.data();
    update.row_stride = static_cast<int>(table.row_floats);
    updates->push_back(update);
  }
}

std::vector<std::vector<float>> HeldGradients::Take(
    const std::vector<std::vector<uint32_t>>& slots) {
  std::vector<size_t> tables;
  std::vector<SlotTransfer::Rows> reads;
  for (size_t t = 0; t < slots.size(); ++t) {
    if (slots[t].empty()) continue;
    const int dim = static_cast<int>(cache_->table(t).dim);
    tables.push_back(t);
    reads.push_back({cache_->HoldStorage(t).data(), dim, &slots[t], dim});
  }
  std::vector<std::vector<float>> out(slots.size());
  if (tables.empty()) return out;
  std::vector<std::vector<float>> read = transfer_->Read(reads);
  transfer_->ZeroRead(reads);
  for (size_t i = 0; i < tables.size(); ++i) out[tables[i]] = std::move(read[i]);
  return out;
}

std::vector<ps::TableGrads> HeldGradients::Collect(const plan::Step& step,
                                                   plan::SlotRows plan::TablePlan::*listed_in,
                                                   StepResult* result) {
  std::vector<std::vector<uint32_t>> slots(cache_->num_tables());
  std::vector<std::vector<Key>> keys(cache_->num_tables());
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const EmbeddingCache::Table& table = cache_->table(t);
    if (!table.HoldsGradients()) continue;  // never held any (other policies)
    for (uint32_t slot : (step.plan[t].*listed_in).slots) {
      if (table.states[slot] != SlotState::kHeld) continue;
      slots[t].push_back(slot);
      keys[t].push_back(table.keys[slot]);
    }
  }
  std::vector<std::vector<float>> held = Take(slots);
  std::vector<ps::TableGrads> grads;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    if (slots[t].empty()) continue;
    ps::TableGrads g;
    g.table = TableId(static_cast<uint32_t>(t));
    g.keys = std::move(keys[t]);
    g.dim = cache_->table(t).dim;
    g.grads = std::move(held[t]);
    result->rows_pushed += g.keys.size();
    result->bytes_moved += g.keys.size() * (g.dim * sizeof(float) + 8);
    grads.push_back(std::move(g));
    if (listed_in == &plan::TablePlan::flush) {
      for (uint32_t slot : slots[t]) cache_->SetState(t, slot, SlotState::kStale);
    }
  }
  return grads;
}

}  // namespace herald::worker
