#include "worker/cache/served_gradients.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/clock.h"
#include "common/math/rank_ordered_sum.h"
#include "common/status.h"
#include "worker/collectives/row_packet.h"

namespace herald::worker {

ServedGradients::ServedGradients(Device* /*device: rows move through `transfer`*/,
                                 EmbeddingCache* cache, SlotTransfer* transfer,
                                 RowExchanger* exchanger, uint32_t rank, uint32_t num_workers)
    : cache_(cache),
      transfer_(transfer),
      exchanger_(exchanger),
      rank_(rank),
      num_workers_(num_workers) {}

absl::Status ServedGradients::Exchange(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  // Per destination: the gradients of its rows, in table order, each
  // table's in plan (remote) order, `dim` floats each.
  std::vector<RowPacketWriter> send(num_workers_);
  std::vector<size_t> expect(num_workers_, 0);
  // Every table's gradients of rows served to this worker, in one read,
  // then zeroed.
  std::vector<size_t> remote;
  std::vector<SlotTransfer::Rows> reads;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    const int dim = static_cast<int>(table.dim);
    for (uint32_t from : plan.gather.peers) expect[from] += table.dim * sizeof(float);
    if (plan.remote.slots.empty()) continue;
    remote.push_back(t);
    reads.push_back({table.grads.data(), dim, &plan.remote.slots, dim});
  }
  const std::vector<std::vector<float>> read = transfer_->Read(reads);
  transfer_->ZeroRead(reads);
  for (size_t k = 0; k < remote.size(); ++k) {
    const size_t t = remote[k];
    const plan::TablePlan& plan = step.plan[t];
    const int dim = static_cast<int>(cache_->table(t).dim);
    const int n = static_cast<int>(plan.remote.slots.size());
    const std::vector<float>& grads = read[k];
    for (int i = 0; i < n; ++i) {
      send[plan.remote.peers[i]].AddFloats(absl::MakeConstSpan(grads.data() + i * dim, dim));
      cache_->SetState(t, plan.remote.slots[i], SlotState::kStale);  // its owner updates it
    }
    result->rows_handed_off += n;
    result->bytes_moved += static_cast<uint64_t>(n) * dim * sizeof(float);
  }
  std::vector<std::string> packets;
  for (RowPacketWriter& w : send) packets.push_back(w.Take());
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> got,
                          exchanger_->Exchange(std::move(packets), std::move(expect)));
  std::vector<RowPacketReader> from;
  for (uint32_t r = 0; r < got.size(); ++r) from.emplace_back(got[r], static_cast<int>(r));
  // Per table, the owned rows gathered into, each once (`rows`), and this
  // worker's gradients of them: every table's in one read.
  const size_t tables = cache_->num_tables();
  std::vector<std::vector<uint32_t>> rows_of(tables);
  std::vector<absl::flat_hash_map<uint32_t, size_t>> index_of(tables);  // slot -> index in rows
  std::vector<size_t> gathering;
  std::vector<SlotTransfer::Rows> own_reads;
  for (size_t t = 0; t < tables; ++t) {
    const plan::TablePlan& plan = step.plan[t];
    if (plan.gather.slots.empty()) continue;
    for (uint32_t slot : plan.gather.slots) {
      if (index_of[t].try_emplace(slot, rows_of[t].size()).second) rows_of[t].push_back(slot);
    }
    const int dim = static_cast<int>(cache_->table(t).dim);
    gathering.push_back(t);
    own_reads.push_back({cache_->table(t).grads.data(), dim, &rows_of[t], dim});
  }
  std::vector<std::vector<float>> owns = transfer_->Read(own_reads);
  std::vector<SlotTransfer::WriteRows> writes;
  for (size_t k = 0; k < gathering.size(); ++k) {
    const size_t t = gathering[k];
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    const uint32_t dim = table.dim;
    const std::vector<uint32_t>& rows = rows_of[t];
    const absl::flat_hash_map<uint32_t, size_t>& row_of = index_of[t];
    std::vector<float>& own = owns[k];
    // Every trainer's gradient per row, by rank: this worker's, then the
    // ones received.
    std::vector<std::vector<std::pair<uint32_t, std::vector<float>>>> parts(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      parts[r].emplace_back(rank_,
                            std::vector<float>(own.begin() + r * dim, own.begin() + (r + 1) * dim));
    }
    for (size_t i = 0; i < plan.gather.slots.size(); ++i) {
      const uint32_t peer = plan.gather.peers[i];
      std::vector<float> grad(dim);
      HERALD_RETURN_IF_ERROR(from[peer].ReadFloats(absl::MakeSpan(grad)));
      parts[row_of.at(plan.gather.slots[i])].emplace_back(peer, std::move(grad));
    }
    // The PS's sum, in rank order.
    using Part = std::pair<uint32_t, std::vector<float>>;
    for (size_t r = 0; r < rows.size(); ++r) {
      math::RankOrderedSum(
          parts[r], dim, [](const Part& p) { return p.first; },
          [](const Part& p) { return p.second.data(); }, own.data() + r * dim);
    }
    writes.push_back(
        {table.grads.data(), static_cast<int>(dim), &rows, static_cast<int>(dim), &own});
  }
  transfer_->Write(writes);
  for (const RowPacketReader& r : from) HERALD_RETURN_IF_ERROR(r.Finish());
  result->times.push_ms += MillisSince(start);
  return absl::OkStatus();
}

}  // namespace herald::worker
