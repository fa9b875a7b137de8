#include "ps_server/service/shard_adaptor.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "common/status.h"

namespace herald::ps {
namespace {

// Owns the aligned copies of byte fields that could not be viewed in place.
class Copies {
 public:
  // `bytes` as a span of T. Errors name `where` and `field`.
  template <typename T>
  absl::StatusOr<absl::Span<const T>> View(const std::string& bytes, const std::string& where,
                                           const char* field) {
    if (bytes.size() % sizeof(T) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", field, " are ", bytes.size(),
                                                     " bytes, not a multiple of ", sizeof(T)));
    }
    const size_t n = bytes.size() / sizeof(T);
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) == 0) {
      return absl::Span<const T>(reinterpret_cast<const T*>(bytes.data()), n);
    }
    auto copy = std::make_unique<uint64_t[]>((bytes.size() + 7) / 8);
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    const T* data = reinterpret_cast<const T*>(copy.get());
    copies_.push_back(std::move(copy));
    return absl::Span<const T>(data, n);
  }

 private:
  std::vector<std::unique_ptr<uint64_t[]>> copies_;
};

}  // namespace

absl::Status ServeFetch(JobShard& shard, const proto::FetchRequest& request, absl::Time deadline,
                        proto::FetchResponse* response) {
  Copies copies;
  if (request.read_only() && request.early()) {
    return shard.Reject(
        absl::InvalidArgumentError("fetch: a read-only fetch (evaluation) cannot be early"));
  }
  if (request.early_distance() > kMaxEarlyDistance) {
    return shard.Reject(absl::InvalidArgumentError(absl::StrCat(
        "fetch: early_distance ", request.early_distance(), ", at most ", kMaxEarlyDistance)));
  }
  const uint32_t early = request.early() ? std::max<uint32_t>(request.early_distance(), 1) : 0;
  FetchIn in{request.iteration(), early, request.read_only(), {}};
  for (int i = 0; i < request.keys_size(); ++i) {
    const proto::KeyBlock& k = request.keys(i);
    auto keys = copies.View<Key>(k.keys(), absl::StrCat("keys[", i, "]"), "keys");
    if (!keys.ok()) return shard.Reject(keys.status());
    in.blocks.push_back({k.table_id(), *keys});
  }
  auto out = [&](size_t b, uint32_t row_floats) {
    proto::RowBlock* block = response->add_rows();
    const proto::KeyBlock& k = request.keys(static_cast<int>(b));
    const size_t n = in.blocks[b].keys.size();
    block->set_table_id(k.table_id());
    *block->mutable_keys() = k.keys();
    block->set_row_floats(row_floats);
    block->mutable_rows()->resize(n * row_floats * sizeof(float));
    block->mutable_versions()->resize(n * sizeof(uint64_t));
    return RowsOut{block->mutable_rows()->data(), block->mutable_versions()->data()};
  };
  absl::Status status = shard.Fetch(in, deadline, out);
  if (!status.ok()) response->Clear();
  return status;
}

absl::Status ServePush(JobShard& shard, const proto::PushGradientsRequest& request) {
  Copies copies;
  PushIn in{request.iteration(), request.worker_rank(), {}};
  for (int i = 0; i < request.grads_size(); ++i) {
    const proto::GradientBlock& g = request.grads(i);
    const std::string where = absl::StrCat("grads[", i, "]");
    auto keys = copies.View<Key>(g.keys(), where, "keys");
    if (!keys.ok()) return shard.Reject(keys.status());
    auto grads = copies.View<float>(g.grads(), where, "grads");
    if (!grads.ok()) return shard.Reject(grads.status());
    in.blocks.push_back({g.table_id(), g.dim(), *keys, *grads});
  }
  return shard.PushGradients(in);
}

absl::Status ServeWriteBack(JobShard& shard, const proto::WriteBackRequest& request) {
  Copies copies;
  WriteBackIn in{request.iteration(), request.worker_rank(), {}};
  for (int i = 0; i < request.rows_size(); ++i) {
    const proto::RowBlock& r = request.rows(i);
    const std::string where = absl::StrCat("rows[", i, "]");
    auto keys = copies.View<Key>(r.keys(), where, "keys");
    if (!keys.ok()) return shard.Reject(keys.status());
    auto rows = copies.View<float>(r.rows(), where, "rows");
    if (!rows.ok()) return shard.Reject(rows.status());
    auto versions = copies.View<uint64_t>(r.versions(), where, "versions");
    if (!versions.ok()) return shard.Reject(versions.status());
    in.blocks.push_back({r.table_id(), r.row_floats(), *keys, *rows, *versions});
  }
  return shard.WriteBack(in);
}

absl::Status ServeIterationDone(JobShard& shard, const proto::IterationDoneRequest& request,
                                proto::IterationDoneResponse* response) {
  DiskReads reads;
  Copies copies;
  std::vector<KeysIn> expire;
  for (int i = 0; i < request.expire_size(); ++i) {
    const proto::KeyBlock& k = request.expire(i);
    auto keys = copies.View<Key>(k.keys(), absl::StrCat("expire[", i, "]"), "keys");
    if (!keys.ok()) return shard.Reject(keys.status());
    expire.push_back({k.table_id(), *keys});
  }
  HERALD_ASSIGN_OR_RETURN(
      bool committed,
      shard.IterationDone(Iteration(request.iteration()), WorkerRank(request.worker_rank()),
                          request.num_workers(), &reads, expire));
  response->set_committed(committed);
  response->set_disk_rows_critical(reads.critical);
  response->set_disk_rows_ahead(reads.ahead);
  return absl::OkStatus();
}

absl::Status ServeCheckpoint(JobShard& shard, const proto::CheckpointRequest& request,
                             absl::Time deadline, proto::CheckpointResponse* response,
                             const CheckpointProgress& progress) {
  HERALD_ASSIGN_OR_RETURN(checkpoint::ShardFileInfo info,
                          shard.Checkpoint(request.dir(), request.iteration(), deadline, progress));
  response->set_path(info.path);
  response->set_bytes(info.bytes);
  response->set_checksum(absl::StrFormat("%08x", info.crc32));
  response->set_rows(info.rows);
  response->set_write_ms(info.write_ms);
  return absl::OkStatus();
}

}  // namespace herald::ps
