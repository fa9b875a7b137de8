#include "worker/cache/hand_offs.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "worker/cache/table_parallel.h"
#include "worker/collectives/row_packet.h"

namespace herald::worker {
namespace {

// A row as sent: values with optimizer state, a served copy values only.
uint32_t Width(const EmbeddingCache::Table& table, bool served) {
  return served ? table.dim : table.row_floats;
}

}  // namespace

HandOffs::HandOffs(EmbeddingCache* cache, SlotTransfer* transfer, RowExchanger* exchanger,
                   uint32_t rank, uint32_t num_workers, bool overlap, ThreadPool* tables)
    : cache_(cache),
      transfer_(transfer),
      tables_(tables),
      exchanger_(exchanger),
      rank_(rank),
      num_workers_(num_workers),
      overlap_(overlap),
      received_(cache->num_tables()) {}

absl::Status HandOffs::CheckPeers(const plan::Step& step, bool serve) const {
  bool hands_off = false, serves = false;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& p = step.plan[t];
    for (uint32_t to : p.send.peers) {
      if (to >= num_workers_ || to == rank_) {
        return absl::InvalidArgumentError(absl::StrCat("table ", t, ": hand-off to worker ", to,
                                                       " (this is ", rank_, " of ", num_workers_,
                                                       ")"));
      }
    }
    for (const auto& [peers, what] : {std::pair{&p.incoming.peers, "hand-off from"},
                                      std::pair{&p.remote.peers, "gradient to the owner"},
                                      std::pair{&p.gather.peers, "gradient gathered from"}}) {
      for (uint32_t peer : *peers) {
        if (peer >= num_workers_ || peer == rank_) {
          return absl::InvalidArgumentError(absl::StrCat("table ", t, ": ", what, " worker ", peer,
                                                         " (this is ", rank_, " of ", num_workers_,
                                                         ")"));
        }
      }
    }
    hands_off |= !p.send.slots.empty() || !p.incoming.keys.empty();
    serves |= !p.remote.slots.empty() || !p.gather.slots.empty() ||
              std::any_of(p.send.served.begin(), p.send.served.end(), [](uint8_t f) { return f; });
  }
  if (hands_off && exchanger_ == nullptr) {
    return absl::FailedPreconditionError(
        "the plan hands rows off between workers, but this executor has no row exchanger");
  }
  if (serve && exchanger_ == nullptr) {
    return absl::FailedPreconditionError("this executor serves rows but has no row exchanger");
  }
  if (serves && !serve) {
    return absl::FailedPreconditionError(
        "the plan serves rows from their owner, but this executor does not serve "
        "(the job's scheduling.serve is off)");
  }
  return absl::OkStatus();
}

absl::Status HandOffs::CheckReceived(const plan::Step& step) const {
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& p = step.plan[t];
    if (p.receive.keys.size() != received_[t].size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "table ", t, ": the plan receives ", p.receive.keys.size(), " rows handed off, ",
          received_[t].size(), " were received after the previous step"));
    }
    for (size_t i = 0; i < p.receive.keys.size(); ++i) {
      const Key key = p.receive.keys[i];
      auto got = received_[t].find(key);
      if (got == received_[t].end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("table ", t, ": the plan receives key ", key, ", which no worker sent"));
      }
      if (got->second.served != p.receive.Served(i)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "table ", t, ": the plan receives key ", key, " as ",
            got->second.served ? "handed off" : "served", ", but it was sent the other way"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status HandOffs::Place(const plan::Step& step) {
  // Per table, the rows handed off (values with optimizer state), then the
  // served copies (values only): every table's in one write.
  std::vector<std::vector<uint32_t>> slots(2 * cache_->num_tables());
  std::vector<std::vector<float>> rows(2 * cache_->num_tables());
  std::vector<SlotTransfer::WriteRows> writes;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    for (const bool served : {false, true}) {
      const size_t w = 2 * t + (served ? 1 : 0);
      for (size_t i = 0; i < plan.receive.slots.size(); ++i) {
        if (plan.receive.Served(i) != served) continue;
        const ReceivedRow& r = received_[t].at(plan.receive.keys[i]);
        slots[w].push_back(plan.receive.slots[i]);
        rows[w].insert(rows[w].end(), r.row.begin(), r.row.end());
      }
      if (slots[w].empty()) continue;
      writes.push_back({table.rows.data(), static_cast<int>(table.row_floats), &slots[w],
                        static_cast<int>(Width(table, served)), &rows[w]});
    }
  }
  transfer_->Write(writes);
  // The cache's bookkeeping, tables at once (each touches its own table).
  ForEachTable(tables_, cache_->num_tables(), [&](size_t t) {
    const plan::TablePlan& plan = step.plan[t];
    if (plan.receive.slots.empty()) return;
    for (size_t i = 0; i < plan.receive.slots.size(); ++i) {
      const Key key = plan.receive.keys[i];
      cache_->Load(t, plan.receive.slots[i], key, received_[t].at(key).version);
      // A handed-off row is this worker's now; a served copy is its owner's.
      cache_->SetState(t, plan.receive.slots[i],
                       plan.receive.Served(i) ? SlotState::kServed : SlotState::kDirty);
    }
    received_[t].clear();
  });
  return absl::OkStatus();
}

absl::Status HandOffs::Send(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  // Per destination: rows in table order, each table's in plan order, with
  // their versions.
  std::vector<RowPacketWriter> send(num_workers_);
  std::vector<size_t> expect(num_workers_, 0);
  Exchange exchange;
  // Every table's rows to send, in one read.
  std::vector<size_t> sending;
  std::vector<SlotTransfer::Rows> reads;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    exchange.incoming.push_back({plan.incoming, table.dim, table.row_floats});
    for (size_t i = 0; i < plan.incoming.peers.size(); ++i) {
      expect[plan.incoming.peers[i]] +=
          RowPacketWriter::RowBytes(Width(table, plan.incoming.Served(i)));
    }
    if (plan.send.slots.empty()) continue;
    const int row_floats = static_cast<int>(table.row_floats);
    sending.push_back(t);
    reads.push_back({table.rows.data(), row_floats, &plan.send.slots, row_floats});
  }
  const std::vector<std::vector<float>> read = transfer_->Read(reads);
  for (size_t k = 0; k < sending.size(); ++k) {
    const size_t t = sending[k];
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    const std::vector<float>& rows = read[k];
    for (size_t i = 0; i < plan.send.slots.size(); ++i) {
      const uint32_t slot = plan.send.slots[i];
      const bool served = plan.send.Served(i);
      send[plan.send.peers[i]].AddRow(
          table.versions[slot],
          absl::MakeConstSpan(rows.data() + i * table.row_floats, Width(table, served)));
      // A served row stays this worker's; a handed-off one is the receiver's now.
      if (!served) cache_->SetState(t, slot, SlotState::kClean);
      result->bytes_moved += RowPacketWriter::RowBytes(Width(table, served));
    }
    result->rows_handed_off += plan.send.slots.size();
  }
  std::vector<std::string> packets;
  for (RowPacketWriter& w : send) packets.push_back(w.Take());
  exchange.call =
      exchanger_->Start(std::move(packets), std::move(expect), absl::Now() + exchanger_->timeout());
  exchange_ = std::move(exchange);
  // With overlap the next step waits for the rows after its fetch while
  // this worker moves on; the rows sent were read from the cache above.
  absl::Status received = overlap_ ? absl::OkStatus() : Receive();
  result->times.writeback_ms += MillisSince(start);
  return received;
}

absl::Status HandOffs::Receive() {
  Exchange exchange = std::move(*exchange_);
  exchange_.reset();
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> got, exchange.call.Wait());
  std::vector<RowPacketReader> from;
  for (uint32_t r = 0; r < got.size(); ++r) from.emplace_back(got[r], static_cast<int>(r));
  for (size_t t = 0; t < exchange.incoming.size(); ++t) {
    const Incoming& in = exchange.incoming[t];
    for (size_t i = 0; i < in.rows.keys.size(); ++i) {
      ReceivedRow row;
      row.served = in.rows.Served(i);
      row.row.resize(row.served ? in.dim : in.row_floats);
      HERALD_RETURN_IF_ERROR(from[in.rows.peers[i]].ReadRow(&row.version, absl::MakeSpan(row.row)));
      received_[t][in.rows.keys[i]] = std::move(row);
    }
  }
  for (const RowPacketReader& r : from) HERALD_RETURN_IF_ERROR(r.Finish());
  return absl::OkStatus();
}

}  // namespace herald::worker
