#include "ps_server/client/sharded_ps_client.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "checkpoint/manifest.h"
#include "common/logging.h"
#include "common/status.h"
#include "ps_server/client/grpc_shard_stub.h"
#include "ps_server/client/ucx_shard_stub.h"

namespace herald::ps {
namespace {

// `call` started as `launch` asks: on a thread of its own now, or inside
// Wait() on the waiting thread.
template <typename T>
PendingCall<T> Run(Launch launch, std::function<T()> call) {
  if (launch == Launch::kBackground) return StartOnThread<T>(std::move(call));
  return PendingCall<T>(std::move(call));
}

// Unique keys of one table and, for every input position, its unique index.
struct Dedup {
  std::vector<Key> unique;
  std::vector<uint32_t> index_of;  // per input position
};

Dedup Deduplicate(const std::vector<Key>& keys) {
  Dedup d;
  absl::flat_hash_map<Key, uint32_t> seen;
  seen.reserve(keys.size());
  d.index_of.reserve(keys.size());
  for (Key k : keys) {
    auto [it, inserted] = seen.try_emplace(k, static_cast<uint32_t>(d.unique.size()));
    if (inserted) d.unique.push_back(k);
    d.index_of.push_back(it->second);
  }
  return d;
}

// One block of one shard request: positions (into a table's unique keys)
// of the keys it carries.
struct Piece {
  size_t table;  // index into the caller's table list
  std::vector<uint32_t> positions;
};

// Which pieces each request to each shard carries: [shard][request] -> pieces.
using ShardRequests = std::vector<std::vector<std::vector<Piece>>>;

// Splits every table's keys by shard and into pieces of at most
// `max_keys(table)` keys, grouped into requests of at most `budget` bytes.
ShardRequests SplitIntoRequests(const KeyRouter& router, uint32_t num_shards,
                                const std::vector<TableId>& tables,
                                const std::vector<const std::vector<Key>*>& keys,
                                const std::vector<size_t>& bytes_per_key, size_t budget) {
  ShardRequests requests(num_shards);
  std::vector<size_t> used(num_shards, budget);  // bytes in each shard's last request
  for (size_t t = 0; t < tables.size(); ++t) {
    std::vector<std::vector<uint32_t>> by_shard(num_shards);
    for (uint32_t i = 0; i < keys[t]->size(); ++i) {
      by_shard[router.ShardOf(tables[t], (*keys[t])[i]).value()].push_back(i);
    }
    const size_t per_piece = std::max<size_t>(1, budget / std::max<size_t>(bytes_per_key[t], 1));
    for (uint32_t s = 0; s < num_shards; ++s) {
      for (size_t begin = 0; begin < by_shard[s].size(); begin += per_piece) {
        const size_t end = std::min(by_shard[s].size(), begin + per_piece);
        const size_t bytes = (end - begin) * bytes_per_key[t];
        if (used[s] + bytes > budget) {
          requests[s].emplace_back();
          used[s] = 0;
        }
        requests[s].back().push_back(
            {t, std::vector<uint32_t>(by_shard[s].begin() + begin, by_shard[s].begin() + end)});
        used[s] += bytes;
      }
    }
  }
  return requests;
}

// The entries at `positions` of an array of `width`-wide entries, as a
// span: straight over the array when the positions are consecutive (one
// shard, one piece: the common case), else gathered into `gathered`.
template <typename T>
absl::Span<const T> Gather(const T* array, size_t width, const std::vector<uint32_t>& positions,
                           std::vector<T>* gathered) {
  if (positions.empty()) return {};
  const uint32_t first = positions.front();
  if (positions.back() - first + 1 == positions.size()) {
    return absl::MakeConstSpan(array + size_t{first} * width, positions.size() * width);
  }
  gathered->reserve(positions.size() * width);
  for (uint32_t pos : positions) {
    gathered->insert(gathered->end(), array + size_t{pos} * width, array + size_t{pos + 1} * width);
  }
  return *gathered;
}

}  // namespace

ShardedPsClient::ShardedPsClient(std::vector<std::unique_ptr<ShardStub>> stubs,
                                 PsClientOptions options)
    : stubs_(std::move(stubs)),
      options_(std::move(options)),
      router_(*KeyRouter::Create(std::max<uint32_t>(stubs_.size(), 1))) {}

absl::Status ShardedPsClient::ForEachShard(const std::function<absl::Status(uint32_t)>& fn) {
  if (stubs_.empty()) return absl::FailedPreconditionError("ps client has no shards");
  std::vector<absl::Status> status(stubs_.size());
  absl::BlockingCounter helpers_done(static_cast<int>(stubs_.size() - 1));
  for (size_t s = 1; s < stubs_.size(); ++s) {
    helpers_.Run([&, s] {
      status[s] = fn(static_cast<uint32_t>(s));
      helpers_done.DecrementCount();
    });
  }
  status[0] = fn(0);
  helpers_done.Wait();
  for (size_t s = 0; s < status.size(); ++s) {
    if (!status[s].ok()) return ShardError(static_cast<uint32_t>(s), status[s]);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ShardedPsClient::StartJob(const std::string& job_id,
                                                   const proto::JobSpec& spec, uint32_t num_workers,
                                                   const std::string& restore_manifest,
                                                   const std::string& restore_job_id) {
  std::vector<uint64_t> next(stubs_.size());
  HERALD_RETURN_IF_ERROR(ForEachShard([&](uint32_t s) {
    proto::PsStartJobRequest r;
    r.set_job_id(job_id);
    r.set_run_id(options_.run_id);
    *r.mutable_spec() = spec;
    r.set_shard(s);
    r.set_num_shards(num_shards());
    r.set_num_workers(num_workers);
    r.set_restore_manifest(restore_manifest);
    r.set_restore_job_id(restore_job_id);
    proto::PsStartJobResponse out;
    absl::Status st = stubs_[s]->StartJob(r, &out, options_.data_timeout);
    next[s] = out.next_iteration();
    return st;
  }));
  for (uint64_t n : next) {
    if (n != next[0]) {
      return absl::DataLossError(absl::StrCat("job ", job_id,
                                              ": shards start at different "
                                              "iterations (",
                                              next[0], " and ", n, ")"));
    }
  }
  return next.empty() ? 0 : next[0];
}

absl::Status ShardedPsClient::EndJob(const std::string& job_id) {
  return ForEachShard([&](uint32_t s) {
    proto::PsEndJobRequest r;
    r.set_job_id(job_id);
    return stubs_[s]->EndJob(r, options_.control_timeout);
  });
}

// One fetch across the shards: the keys (deduplicated, unless they go to a
// caller's sink as given) planned into requests, and the rows written where
// they belong as the answers come: into the sink, or into this fetch's own
// buffers of unique rows (Result).
class ShardedFetch {
 public:
  // Into buffers of its own; Result() gives the rows.
  ShardedFetch(const KeyRouter& router, uint32_t num_shards, const std::vector<TableKeys>& keys,
               size_t budget)
      : keys_(keys), out_(keys.size()), own_rows_(keys.size()), own_versions_(keys.size()) {
    for (const TableKeys& t : keys) {
      dedup_.push_back(Deduplicate(t.keys));
      table_ids_.push_back(t.table);
    }
    Plan(router, num_shards, budget);
  }
  // Into `sink`, the keys sent as given.
  ShardedFetch(const KeyRouter& router, uint32_t num_shards, const std::vector<TableKeys>& keys,
               size_t budget, const RowSink& sink)
      : out_(keys.size()) {
    for (size_t t = 0; t < keys.size(); ++t) {
      dedup_.push_back({keys[t].keys, {}});
      table_ids_.push_back(keys[t].table);
      out_[t] = {sink.rows[t], sink.versions[t], sink.row_floats[t]};
    }
    Plan(router, num_shards, budget);
  }

  const ShardRequests& requests() const { return requests_; }

  // Request r of shard s; its key spans point into `gathered` (or the
  // deduplicated keys).
  FetchIn Request(uint32_t s, size_t r, uint64_t iteration, FetchMode mode,
                  std::vector<std::vector<Key>>* gathered) const {
    const std::vector<Piece>& pieces = requests_[s][r];
    FetchIn in{iteration, mode.early_distance, mode.kind == FetchMode::kReadOnly, {}};
    gathered->resize(pieces.size());
    for (size_t b = 0; b < pieces.size(); ++b) {
      const Piece& p = pieces[b];
      in.blocks.push_back({table_ids_[p.table].value(),
                           Gather(dedup_[p.table].unique.data(), 1, p.positions, &(*gathered)[b])});
    }
    return in;
  }

  // Places the answer to request r of shard s. Not thread-safe.
  absl::Status Fill(uint32_t s, size_t r, const FetchedRows& out) {
    const std::vector<Piece>& pieces = requests_[s][r];
    if (out.blocks.size() != pieces.size()) {
      return absl::DataLossError(
          absl::StrCat("answer has ", out.blocks.size(), " blocks for ", pieces.size(), " asked"));
    }
    for (size_t b = 0; b < pieces.size(); ++b) {
      const Piece& p = pieces[b];
      const FetchedRows::Block& block = out.blocks[b];
      const uint32_t rf = block.row_floats;
      const size_t n = p.positions.size();
      Destination& to = out_[p.table];
      if (to.row_floats == 0 && rf != 0 && block.count == n) {  // own buffers: sized now
        to.row_floats = rf;
        own_rows_[p.table].resize(dedup_[p.table].unique.size() * size_t{rf});
        own_versions_[p.table].resize(dedup_[p.table].unique.size());
        to.rows = own_rows_[p.table].data();
        to.versions = own_versions_[p.table].data();
      }
      if (rf == 0 || block.count != n || to.row_floats != rf) {
        return absl::DataLossError(absl::StrCat("malformed rows of table ",
                                                table_ids_[p.table].value(), ": ", block.count,
                                                " rows of ", rf, " floats for ", n, " keys",
                                                to.row_floats != rf && to.row_floats != 0
                                                    ? absl::StrCat(" of ", to.row_floats, " floats")
                                                    : ""));
      }
      const size_t row_bytes = size_t{rf} * sizeof(float);
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(to.rows + size_t{p.positions[i]} * rf, block.rows + i * row_bytes, row_bytes);
        std::memcpy(to.versions + p.positions[i], block.versions + i * sizeof(uint64_t),
                    sizeof(uint64_t));
      }
    }
    return absl::OkStatus();
  }

  // Every table's rows in the order of its keys (duplicates repeated).
  // REQUIRES: the fetch wrote into its own buffers.
  std::vector<TableRows> Result() {
    std::vector<TableRows> result(keys_.size());
    for (size_t t = 0; t < keys_.size(); ++t) {
      TableRows& out = result[t];
      out.table = keys_[t].table;
      out.keys = std::move(keys_[t].keys);
      out.row_floats = out_[t].row_floats;
      if (dedup_[t].unique.size() == out.keys.size()) {
        out.rows = std::move(own_rows_[t]);
        out.versions = std::move(own_versions_[t]);
        continue;
      }
      const uint32_t rf = out_[t].row_floats;
      out.rows.resize(out.keys.size() * size_t{rf});
      out.versions.resize(out.keys.size());
      for (size_t i = 0; i < out.keys.size(); ++i) {
        const uint32_t u = dedup_[t].index_of[i];
        std::memcpy(out.rows.data() + i * rf, own_rows_[t].data() + size_t{u} * rf,
                    rf * sizeof(float));
        out.versions[i] = own_versions_[t][u];
      }
    }
    return result;
  }

 private:
  void Plan(const KeyRouter& router, uint32_t num_shards, size_t budget) {
    std::vector<const std::vector<Key>*> unique;
    for (const Dedup& d : dedup_) unique.push_back(&d.unique);
    // An answer row is at most 8 (key) + 8 (version) + 4 * (4096 dim * 3)
    // bytes; assume a generous 1 KiB per key for planning and let the
    // budget split.
    const std::vector<size_t> bytes_per_key(dedup_.size(), 1024);
    requests_ = SplitIntoRequests(router, num_shards, table_ids_, unique, bytes_per_key, budget);
  }

  // Where table t's unique row u goes: rows + u * row_floats, versions + u
  // (row_floats 0: own buffers not yet sized).
  struct Destination {
    float* rows = nullptr;
    uint64_t* versions = nullptr;
    uint32_t row_floats = 0;
  };
  std::vector<TableKeys> keys_;  // a copy (own buffers): a started fetch outlives its caller's
  std::vector<Dedup> dedup_;     // into a sink: the keys as given, no index_of
  std::vector<TableId> table_ids_;
  ShardRequests requests_;
  std::vector<Destination> out_;
  std::vector<std::vector<float>> own_rows_;
  std::vector<std::vector<uint64_t>> own_versions_;
};

absl::Status ShardedPsClient::FetchByShard(const std::string& job_id, uint64_t iteration,
                                           FetchMode mode, ShardedFetch* fetch) {
  absl::Mutex fill_mu;
  return ForEachShard([&](uint32_t s) -> absl::Status {
    for (size_t r = 0; r < fetch->requests()[s].size(); ++r) {
      std::vector<std::vector<Key>> gathered;
      const FetchIn in = fetch->Request(s, r, iteration, mode, &gathered);
      HERALD_ASSIGN_OR_RETURN(FetchedRows out,
                              stubs_[s]->Fetch(Of(job_id), in, options_.data_timeout));
      absl::MutexLock lock(&fill_mu);
      HERALD_RETURN_IF_ERROR(fetch->Fill(s, r, out));
    }
    return absl::OkStatus();
  });
}

bool ShardedPsClient::StubsStartCalls() const {
  return !stubs_.empty() && std::all_of(stubs_.begin(), stubs_.end(),
                                        [](const auto& stub) { return stub->starts_calls(); });
}

PendingCall<absl::Status> ShardedPsClient::RunFetch(const std::string& job_id, uint64_t iteration,
                                                    FetchMode mode, Launch launch,
                                                    std::shared_ptr<ShardedFetch> fetch) {
  if (!StubsStartCalls()) {
    return Run<absl::Status>(launch, [this, job_id, iteration, mode, fetch] {
      return FetchByShard(job_id, iteration, mode, fetch.get());
    });
  }
  // Every request of every shard sent now; answered in the order waited for.
  struct Started {
    uint32_t shard;
    size_t request;
    PendingCall<absl::StatusOr<FetchedRows>> call;
  };
  auto start = [this, job_id, iteration, mode, fetch] {
    auto started = std::make_shared<std::vector<Started>>();
    for (uint32_t s = 0; s < num_shards(); ++s) {
      for (size_t r = 0; r < fetch->requests()[s].size(); ++r) {
        std::vector<std::vector<Key>> gathered;
        const FetchIn in = fetch->Request(s, r, iteration, mode, &gathered);
        started->push_back({s, r, stubs_[s]->StartFetch(Of(job_id), in, options_.data_timeout)});
      }
    }
    return PendingCall<absl::Status>([this, fetch, started]() -> absl::Status {
      absl::Status failed;
      for (Started& call : *started) {
        absl::StatusOr<FetchedRows> out = call.call.Wait();
        absl::Status placed = out.ok() ? fetch->Fill(call.shard, call.request, *out) : out.status();
        if (!placed.ok() && failed.ok()) failed = ShardError(call.shard, placed);
      }
      return failed;
    });
  };
  // In the background the replies are also placed as they arrive.
  return Launched(launch, start);
}

PendingCall<absl::Status> ShardedPsClient::Launched(
    Launch launch, const std::function<PendingCall<absl::Status>()>& start) {
  if (launch != Launch::kBackground) return start();
  return OnHelper([start] { return start().Wait(); });
}

PendingCall<absl::Status> ShardedPsClient::OnHelper(std::function<absl::Status()> work) {
  struct Outcome {
    absl::Notification done;
    absl::Status status;
  };
  // The last copy of the pending call waits for `work` when destroyed.
  struct Join {
    explicit Join(std::shared_ptr<Outcome> o) : outcome(std::move(o)) {}
    Join(const Join&) = delete;
    Join& operator=(const Join&) = delete;
    ~Join() { outcome->done.WaitForNotification(); }
    const std::shared_ptr<Outcome> outcome;
  };
  auto outcome = std::make_shared<Outcome>();
  helpers_.Run([outcome, work = std::move(work)] {
    outcome->status = work();
    outcome->done.Notify();
  });
  auto join = std::make_shared<Join>(outcome);
  return PendingCall<absl::Status>([join] {
    join->outcome->done.WaitForNotification();
    return join->outcome->status;
  });
}

PendingCall<absl::StatusOr<std::vector<TableRows>>> ShardedPsClient::StartFetch(
    const std::string& job_id, Iteration iteration, const std::vector<TableKeys>& keys,
    FetchMode mode, Launch launch) {
  auto fetch =
      std::make_shared<ShardedFetch>(router_, num_shards(), keys, options_.max_request_bytes);
  PendingCall<absl::Status> call = RunFetch(job_id, iteration.value(), mode, launch, fetch);
  return PendingCall<absl::StatusOr<std::vector<TableRows>>>(
      [fetch, call]() mutable -> absl::StatusOr<std::vector<TableRows>> {
        HERALD_RETURN_IF_ERROR(call.Wait());
        return fetch->Result();
      });
}

PendingCall<absl::Status> ShardedPsClient::StartFetchInto(const std::string& job_id,
                                                          Iteration iteration,
                                                          const std::vector<TableKeys>& keys,
                                                          FetchMode mode, Launch launch,
                                                          const RowSink& sink) {
  if (absl::Status s = CheckSink(keys, sink); !s.ok()) {
    return PendingCall<absl::Status>::Done(std::move(s));
  }
  auto fetch =
      std::make_shared<ShardedFetch>(router_, num_shards(), keys, options_.max_request_bytes, sink);
  return RunFetch(job_id, iteration.value(), mode, launch, std::move(fetch));
}

absl::Status ShardedPsClient::ShardError(uint32_t s, const absl::Status& status) const {
  return Annotate(status, absl::StrCat("ps shard ", s, " (", stubs_[s]->name(), ")"));
}

// A push across the shards: every table's gradients with duplicate keys
// summed in the order given (deterministic), planned into requests. The
// caller's gradients must outlive the requests built from it (Request).
class ShardedPush {
 public:
  // Errors: InvalidArgument for a table whose sizes do not match.
  static absl::StatusOr<std::unique_ptr<ShardedPush>> Make(const KeyRouter& router,
                                                           uint32_t num_shards,
                                                           const std::vector<TableGrads>& grads,
                                                           size_t budget) {
    std::unique_ptr<ShardedPush> push(new ShardedPush(grads));
    std::vector<TableId> tables;
    std::vector<const std::vector<Key>*> unique;
    std::vector<size_t> bytes_per_key;
    push->sums_.resize(grads.size());
    for (size_t t = 0; t < grads.size(); ++t) {
      const TableGrads& g = grads[t];
      if (g.dim == 0 || g.grads.size() != g.keys.size() * g.dim) {
        return absl::InvalidArgumentError(absl::StrCat("push of table ", g.table.value(), ": ",
                                                       g.grads.size(), " gradient floats for ",
                                                       g.keys.size(), " keys of dim ", g.dim));
      }
      tables.push_back(g.table);
      push->dedup_.push_back(Deduplicate(g.keys));
      bytes_per_key.push_back(sizeof(Key) + g.dim * sizeof(float));
      const Dedup& d = push->dedup_.back();
      if (d.unique.size() == g.keys.size()) continue;
      std::vector<float>& sum = push->sums_[t];
      sum.assign(d.unique.size() * g.dim, 0.0f);
      std::vector<bool> first(d.unique.size(), true);
      for (size_t i = 0; i < g.keys.size(); ++i) {
        const uint32_t u = d.index_of[i];
        for (uint32_t k = 0; k < g.dim; ++k) {
          float& acc = sum[size_t{u} * g.dim + k];
          acc = first[u] ? g.grads[i * g.dim + k] : acc + g.grads[i * g.dim + k];
        }
        first[u] = false;
      }
    }
    for (const Dedup& d : push->dedup_) unique.push_back(&d.unique);
    push->requests_ = SplitIntoRequests(router, num_shards, tables, unique, bytes_per_key, budget);
    return push;
  }

  const ShardRequests& requests() const { return requests_; }

  // Request r of shard s; its spans point into `keys` and `values` (or the
  // caller's gradients and the sums).
  PushIn Request(uint32_t s, size_t r, uint64_t iteration, uint32_t worker,
                 std::vector<std::vector<Key>>* keys,
                 std::vector<std::vector<float>>* values) const {
    const std::vector<Piece>& pieces = requests_[s][r];
    PushIn in{iteration, worker, {}};
    keys->resize(pieces.size());
    values->resize(pieces.size());
    for (size_t b = 0; b < pieces.size(); ++b) {
      const Piece& p = pieces[b];
      const TableGrads& g = grads_[p.table];
      const float* src = sums_[p.table].empty() ? g.grads.data() : sums_[p.table].data();
      in.blocks.push_back({g.table.value(), g.dim,
                           Gather(dedup_[p.table].unique.data(), 1, p.positions, &(*keys)[b]),
                           Gather(src, g.dim, p.positions, &(*values)[b])});
    }
    return in;
  }

 private:
  explicit ShardedPush(const std::vector<TableGrads>& grads) : grads_(grads) {}

  const std::vector<TableGrads>& grads_;
  std::vector<Dedup> dedup_;
  std::vector<std::vector<float>> sums_;
  ShardRequests requests_;
};

absl::Status ShardedPsClient::PushByShard(const std::string& job_id, uint64_t iteration,
                                          uint32_t worker, const std::vector<TableGrads>& grads) {
  HERALD_ASSIGN_OR_RETURN(
      std::unique_ptr<ShardedPush> push,
      ShardedPush::Make(router_, num_shards(), grads, options_.max_request_bytes));
  return ForEachShard([&](uint32_t s) -> absl::Status {
    for (size_t r = 0; r < push->requests()[s].size(); ++r) {
      std::vector<std::vector<Key>> keys;
      std::vector<std::vector<float>> values;
      const PushIn in = push->Request(s, r, iteration, worker, &keys, &values);
      HERALD_RETURN_IF_ERROR(stubs_[s]->PushGradients(Of(job_id), in, options_.data_timeout));
    }
    return absl::OkStatus();
  });
}

PendingCall<absl::Status> ShardedPsClient::StartPushGradients(const std::string& job_id,
                                                              Iteration iteration_id,
                                                              WorkerRank rank,
                                                              const std::vector<TableGrads>& grads,
                                                              Launch launch) {
  const uint64_t iteration = iteration_id.value();
  const uint32_t worker = rank.value();
  if (!StubsStartCalls()) {
    return Run<absl::Status>(launch, [this, job_id, iteration, worker, &grads] {
      return PushByShard(job_id, iteration, worker, grads);
    });
  }
  auto start = [this, job_id, iteration, worker, &grads] {
    absl::StatusOr<std::unique_ptr<ShardedPush>> push =
        ShardedPush::Make(router_, num_shards(), grads, options_.max_request_bytes);
    if (!push.ok()) return PendingCall<absl::Status>::Done(push.status());
    std::vector<std::pair<uint32_t, PendingCall<absl::Status>>> started;
    for (uint32_t s = 0; s < num_shards(); ++s) {
      for (size_t r = 0; r < (*push)->requests()[s].size(); ++r) {
        std::vector<std::vector<Key>> keys;
        std::vector<std::vector<float>> values;
        const PushIn in = (*push)->Request(s, r, iteration, worker, &keys, &values);
        started.push_back(
            {s, stubs_[s]->StartPushGradients(Of(job_id), in, options_.data_timeout)});
      }
    }
    return WaitForAll(std::move(started));
  };
  return Launched(launch, start);
}

namespace {

// The requests of a write-back of `rows` by shard. Errors: InvalidArgument
// for a table whose sizes do not match or that names a key twice.
absl::StatusOr<ShardRequests> WriteBackRequests(const KeyRouter& router, uint32_t num_shards,
                                                const std::vector<TableRows>& rows, size_t budget) {
  std::vector<TableId> tables;
  std::vector<const std::vector<Key>*> keys;
  std::vector<size_t> bytes_per_key;
  for (const TableRows& t : rows) {
    if (t.row_floats == 0 || t.rows.size() != t.keys.size() * t.row_floats ||
        t.versions.size() != t.keys.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("write-back of table ", t.table.value(), ": ", t.rows.size(), " floats and ",
                       t.versions.size(), " versions for ", t.keys.size(), " keys of ",
                       t.row_floats, " floats"));
    }
    if (Deduplicate(t.keys).unique.size() != t.keys.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("write-back of table ", t.table.value(), " names a key twice"));
    }
    tables.push_back(t.table);
    keys.push_back(&t.keys);
    bytes_per_key.push_back(2 * sizeof(uint64_t) + t.row_floats * sizeof(float));
  }
  return SplitIntoRequests(router, num_shards, tables, keys, bytes_per_key, budget);
}

// What a write-back request's spans point into where pieces are gathered.
struct GatheredRows {
  std::vector<std::vector<Key>> keys;
  std::vector<std::vector<float>> values;
  std::vector<std::vector<uint64_t>> versions;
};

WriteBackIn WriteBackRequest(const std::vector<TableRows>& rows, const std::vector<Piece>& pieces,
                             uint64_t iteration, uint32_t worker, GatheredRows* gathered) {
  WriteBackIn in{iteration, worker, {}};
  const size_t n = pieces.size();
  gathered->keys.resize(n);
  gathered->values.resize(n);
  gathered->versions.resize(n);
  for (size_t b = 0; b < n; ++b) {
    const Piece& p = pieces[b];
    const TableRows& t = rows[p.table];
    in.blocks.push_back({t.table.value(), t.row_floats,
                         Gather(t.keys.data(), 1, p.positions, &gathered->keys[b]),
                         Gather(t.rows.data(), t.row_floats, p.positions, &gathered->values[b]),
                         Gather(t.versions.data(), 1, p.positions, &gathered->versions[b])});
  }
  return in;
}

}  // namespace

absl::Status ShardedPsClient::WriteBackByShard(const std::string& job_id, uint64_t iteration,
                                               uint32_t worker,
                                               const std::vector<TableRows>& rows) {
  HERALD_ASSIGN_OR_RETURN(
      auto requests, WriteBackRequests(router_, num_shards(), rows, options_.max_request_bytes));
  return ForEachShard([&](uint32_t s) -> absl::Status {
    for (const std::vector<Piece>& pieces : requests[s]) {
      GatheredRows gathered;
      const WriteBackIn in = WriteBackRequest(rows, pieces, iteration, worker, &gathered);
      HERALD_RETURN_IF_ERROR(stubs_[s]->WriteBack(Of(job_id), in, options_.data_timeout));
    }
    return absl::OkStatus();
  });
}

PendingCall<absl::Status> ShardedPsClient::StartWriteBack(const std::string& job_id,
                                                          Iteration iteration_id, WorkerRank rank,
                                                          const std::vector<TableRows>& rows,
                                                          Launch launch) {
  const uint64_t iteration = iteration_id.value();
  const uint32_t worker = rank.value();
  if (!StubsStartCalls()) {
    return Run<absl::Status>(launch, [this, job_id, iteration, worker, &rows] {
      return WriteBackByShard(job_id, iteration, worker, rows);
    });
  }
  auto start = [this, job_id, iteration, worker, &rows] {
    absl::StatusOr<ShardRequests> requests =
        WriteBackRequests(router_, num_shards(), rows, options_.max_request_bytes);
    if (!requests.ok()) return PendingCall<absl::Status>::Done(requests.status());
    std::vector<std::pair<uint32_t, PendingCall<absl::Status>>> started;
    for (uint32_t s = 0; s < num_shards(); ++s) {
      for (const std::vector<Piece>& pieces : (*requests)[s]) {
        GatheredRows gathered;
        const WriteBackIn in = WriteBackRequest(rows, pieces, iteration, worker, &gathered);
        started.push_back({s, stubs_[s]->StartWriteBack(Of(job_id), in, options_.data_timeout)});
      }
    }
    return WaitForAll(std::move(started));
  };
  return Launched(launch, start);
}

PendingCall<absl::Status> ShardedPsClient::WaitForAll(
    std::vector<std::pair<uint32_t, PendingCall<absl::Status>>> started) {
  auto calls = std::make_shared<std::vector<std::pair<uint32_t, PendingCall<absl::Status>>>>(
      std::move(started));
  return PendingCall<absl::Status>([this, calls] {
    absl::Status failed;
    for (auto& [s, call] : *calls) {
      absl::Status done = call.Wait();
      if (!done.ok() && failed.ok()) failed = ShardError(s, done);
    }
    return failed;
  });
}

absl::StatusOr<bool> ShardedPsClient::IterationDone(const std::string& job_id, Iteration iteration,
                                                    WorkerRank worker, uint32_t num_workers,
                                                    PsDiskReads* disk_reads,
                                                    const std::vector<TableKeys>* expire) {
  std::vector<char> committed(stubs_.size(), 0);
  std::vector<PsDiskReads> reads(stubs_.size());
  std::vector<proto::IterationDoneRequest> requests(stubs_.size());
  for (proto::IterationDoneRequest& r : requests) {
    r.set_job_id(job_id);
    r.set_run_id(options_.run_id);
    r.set_iteration(iteration.value());
    r.set_worker_rank(worker.value());
    r.set_num_workers(num_workers);
  }
  if (expire != nullptr) {
    std::vector<std::vector<Key>> of_shard(stubs_.size());
    for (const TableKeys& t : *expire) {
      for (auto& k : of_shard) k.clear();
      for (Key key : t.keys) of_shard[router_.ShardOf(t.table, key).value()].push_back(key);
      for (size_t s = 0; s < stubs_.size(); ++s) {
        if (of_shard[s].empty()) continue;
        proto::KeyBlock* block = requests[s].add_expire();
        block->set_table_id(t.table.value());
        block->set_keys(std::string(reinterpret_cast<const char*>(of_shard[s].data()),
                                    of_shard[s].size() * sizeof(Key)));
      }
    }
  }
  HERALD_RETURN_IF_ERROR(ForEachShard([&](uint32_t s) {
    const proto::IterationDoneRequest& r = requests[s];
    proto::IterationDoneResponse out;
    absl::Status st = stubs_[s]->IterationDone(r, &out, options_.data_timeout);
    committed[s] = out.committed();
    reads[s] = {out.disk_rows_critical(), out.disk_rows_ahead()};
    return st;
  }));
  if (disk_reads != nullptr) {
    for (const PsDiskReads& r : reads) {
      disk_reads->critical += r.critical;
      disk_reads->ahead += r.ahead;
    }
  }
  return std::all_of(committed.begin(), committed.end(), [](char c) { return c != 0; });
}

absl::StatusOr<std::vector<proto::CheckpointShard>> ShardedPsClient::CheckpointShards(
    const std::string& job_id, uint64_t iteration, const std::string& dir) {
  std::vector<proto::CheckpointResponse> out(stubs_.size());
  HERALD_RETURN_IF_ERROR(ForEachShard([&](uint32_t s) {
    proto::CheckpointRequest r;
    r.set_job_id(job_id);
    r.set_iteration(iteration);
    r.set_dir(dir);
    return stubs_[s]->Checkpoint(r, &out[s], options_.data_timeout);
  }));
  std::vector<proto::CheckpointShard> shards(stubs_.size());
  for (uint32_t s = 0; s < num_shards(); ++s) {
    shards[s].set_shard(s);
    shards[s].set_file(checkpoint::ShardFileName(s, num_shards()));
    shards[s].set_bytes(out[s].bytes());
    shards[s].set_checksum(out[s].checksum());
    shards[s].set_rows(out[s].rows());
    shards[s].set_write_ms(out[s].write_ms());
  }
  return shards;
}

absl::StatusOr<std::vector<proto::PsStatsResponse>> ShardedPsClient::Stats(
    const std::string& job_id) {
  std::vector<proto::PsStatsResponse> out(stubs_.size());
  HERALD_RETURN_IF_ERROR(ForEachShard([&](uint32_t s) {
    proto::PsStatsRequest r;
    r.set_job_id(job_id);
    return stubs_[s]->Stats(r, &out[s], options_.control_timeout);
  }));
  return out;
}

absl::Status ShardedPsClient::LookAhead(const std::string& job_id, Iteration iteration,
                                        const std::vector<TableKeys>& keys) {
  // Each shard's keys, in requests of at most max_request_bytes of keys.
  const size_t keys_per_request = std::max<size_t>(options_.max_request_bytes / sizeof(Key), 1);
  std::vector<std::vector<proto::LookAheadRequest>> requests(stubs_.size());
  std::vector<std::vector<Key>> of_shard(stubs_.size());
  for (const TableKeys& t : keys) {
    for (auto& k : of_shard) k.clear();
    for (Key key : t.keys) of_shard[router_.ShardOf(t.table, key).value()].push_back(key);
    for (size_t s = 0; s < stubs_.size(); ++s) {
      for (size_t begin = 0; begin < of_shard[s].size(); begin += keys_per_request) {
        const size_t n = std::min(keys_per_request, of_shard[s].size() - begin);
        if (requests[s].empty() ||
            requests[s].back().ByteSizeLong() + n * sizeof(Key) > options_.max_request_bytes) {
          proto::LookAheadRequest& r = requests[s].emplace_back();
          r.set_job_id(job_id);
          r.set_iteration(iteration.value());
          r.set_run_id(options_.run_id);
        }
        proto::KeyBlock* block = requests[s].back().add_keys();
        block->set_table_id(t.table.value());
        block->set_keys(std::string(reinterpret_cast<const char*>(of_shard[s].data() + begin),
                                    n * sizeof(Key)));
      }
    }
  }
  return ForEachShard([&](uint32_t s) -> absl::Status {
    for (const proto::LookAheadRequest& r : requests[s]) {
      HERALD_RETURN_IF_ERROR(stubs_[s]->LookAhead(r, options_.control_timeout));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::unique_ptr<PsClient>> MakeGrpcPsClient(
    const std::vector<std::string>& addresses, const PsClientOptions& options) {
  if (addresses.empty()) return absl::InvalidArgumentError("no parameter-server addresses");
  std::shared_ptr<ucx::UcxRpcClient> rows;
  if (!options.ucx_addresses.empty()) {
    if (options.ucx_addresses.size() != addresses.size()) {
      return absl::InvalidArgumentError(absl::StrCat(options.ucx_addresses.size(),
                                                     " UCX addresses for ", addresses.size(),
                                                     " parameter-server shards"));
    }
    ucx::UcxWorker::Options ucx;
    ucx.loopback_only = true;  // every shard on this host: the loopback interface only
    for (const std::string& a : addresses) {
      ucx.loopback_only = ucx.loopback_only && absl::StartsWith(a, "127.");
    }
    ucx.shared_memory = options.ucx_shared_memory;
    HERALD_ASSIGN_OR_RETURN(
        rows, ucx::UcxRpcClient::Connect(options.ucx_addresses, addresses, options.token,
                                         options.control_timeout, ucx));
    size_t shared = 0;
    for (size_t s = 0; s < addresses.size(); ++s) shared += rows->SharedMemory(s);
    HLOG_INFO(
        "UCX to {} PS shard(s): {} over shared memory (their processes watched), {} over "
        "TCP or verbs",
        addresses.size(), shared, addresses.size() - shared);
  }
  std::vector<std::unique_ptr<ShardStub>> stubs;
  for (size_t s = 0; s < addresses.size(); ++s) {
    HERALD_ASSIGN_OR_RETURN(auto stub, MakeGrpcShardStub(addresses[s], options.channel));
    if (rows) stub = MakeUcxShardStub(std::move(stub), rows, s);
    stubs.push_back(std::move(stub));
  }
  return std::unique_ptr<PsClient>(new ShardedPsClient(std::move(stubs), options));
}

}  // namespace herald::ps
