// Parameter-server benchmarks, each next to a baseline measured in the same
// run (docs/benchmarks.md):
//
//   memory  bytes held per row at --rows rows vs the raw bytes of values +
//           optimizer state (target: within 1.3x at 10M rows);
//   lookup  in-process Fetch (hash + copy, all stripes) vs a plain gather of
//           random rows from one flat array (this machine's random-access
//           memory limit), same row size, same row count;
//   rpc     fetch and gradient push of --batch keys over gRPC, UCX over TCP
//           and UCX over shared memory vs raw loopback TCP (a plain socket
//           sender/receiver), as a ratio (targets: UCX-over-TCP fetch >= 0.6
//           of raw, push >= 0.5; UCX over shared memory fetch >= 1.5x).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/rpc/server.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "ps_server/client/sharded_ps_client.h"
#include "ps_server/service/ps_core.h"
#include "ps_server/service/ps_service.h"
#include "ps_server/service/shard_adaptor.h"
#include "ps_server/service/ucx_ps_server.h"
#include "ps_server/shard/shard_table.h"

ABSL_FLAG(std::string, what, "memory,lookup,rpc", "which benchmarks to run");
ABSL_FLAG(uint64_t, rows, 10000000, "memory: rows per table");
ABSL_FLAG(uint64_t, lookup_rows, 2000000, "lookup: rows in the table");
ABSL_FLAG(int, batch, 4096, "keys per request");
ABSL_FLAG(double, seconds, 3.0, "time per throughput measurement");
ABSL_FLAG(int, threads, 2, "server threads");
ABSL_FLAG(std::string, transports, "in-process,grpc,ucx-tcp,ucx-shm",
          "rpc: the data paths measured (in-process: the same client and shard without a "
          "transport, the ceiling; grpc; ucx-tcp; ucx-shm)");

namespace herald::ps {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs fn repeatedly for about `seconds`; returns calls per second.
double Rate(double seconds, const std::function<void()>& fn) {
  fn();  // warm-up
  uint64_t calls = 0;
  auto t0 = Clock::now();
  while (Since(t0) < seconds) {
    fn();
    ++calls;
  }
  return calls / Since(t0);
}

TableOptions Table(uint32_t dim, math::SparseOptimizerKind kind) {
  TableOptions o;
  o.id = TableId(0);
  o.dim = dim;
  o.optimizer.kind = kind;
  o.seed = 1;
  return o;
}

void Memory(uint64_t rows) {
  std::printf("\n== memory: %llu rows per table, 16 stripes ==\n", (unsigned long long)rows);
  std::printf("%-22s %10s %12s %12s %8s\n", "table", "raw B/row", "held B/row", "insert Mrow/s",
              "ratio");
  struct Case {
    const char* name;
    uint32_t dim;
    math::SparseOptimizerKind kind;
  };
  for (const Case& c :
       {Case{"dim 16 adagrad", 16, math::SparseOptimizerKind::kAdagrad},
        Case{"dim 64 sgd", 64, math::SparseOptimizerKind::kSgd},
        Case{"dim 64 rowwise-adagrad", 64, math::SparseOptimizerKind::kRowwiseAdagrad},
        Case{"dim 16 sgd", 16, math::SparseOptimizerKind::kSgd}}) {
    auto table = std::make_unique<ShardTable>(Table(c.dim, c.kind), 16);
    auto t0 = Clock::now();
    std::mt19937_64 rng(7);
    for (uint64_t i = 0; i < rows; ++i) {
      const Key key = rng();
      ShardTable::Stripe& s = table->stripe(table->StripeOf(key));
      absl::MutexLock lock(&s.mu);
      table->FindOrCreate(s, key, 0).IgnoreError();
    }
    const double secs = Since(t0);
    const double raw = double(table->RawRowBytes()) / table->rows();
    const double held = double(table->MemoryBytes()) / table->rows();
    std::printf("%-22s %10.1f %12.1f %12.2f %8.3f\n", c.name, raw, held, table->rows() / secs / 1e6,
                held / raw);
  }
}

void Lookup(uint64_t rows, int batch, double seconds) {
  std::printf(
      "\n== lookup: %llu rows of 64 floats, batches of %d random keys, 1 request at a "
      "time ==\n",
      (unsigned long long)rows, batch);
  // Baseline: gather random rows from one flat array into a buffer.
  const uint32_t rf = 64;
  std::vector<float> flat(rows * rf, 1.0f);
  std::vector<float> out(size_t(batch) * rf);
  std::mt19937_64 rng(3);
  std::vector<uint64_t> idx(batch);
  const double gather = Rate(seconds, [&] {
    for (auto& i : idx) i = rng() % rows;
    for (int i = 0; i < batch; ++i) std::memcpy(&out[size_t(i) * rf], &flat[idx[i] * rf], rf * 4);
  });
  flat = {};
  // Herald: JobShard::Fetch on one shard through its protobuf adaptor (hash
  // lookup per key + copy into the response).
  ThreadPool pool(absl::GetFlag(FLAGS_threads));
  JobShardOptions o;
  o.job_id = "bench";
  o.tables = {Table(64, math::SparseOptimizerKind::kSgd)};
  auto shard = *JobShard::Create(o, &pool);
  std::vector<Key> all(rows);
  for (uint64_t i = 0; i < rows; ++i) all[i] = i * 0x9E3779B97F4A7C15ull;
  for (uint64_t begin = 0; begin < rows; begin += 65536) {
    proto::FetchRequest r;
    r.set_job_id("bench");
    auto* k = r.add_keys();
    const uint64_t n = std::min<uint64_t>(65536, rows - begin);
    k->set_keys(std::string(reinterpret_cast<const char*>(&all[begin]), n * 8));
    proto::FetchResponse resp;
    ServeFetch(*shard, r, absl::InfiniteFuture(), &resp).IgnoreError();
  }
  proto::FetchRequest r;
  r.set_job_id("bench");
  auto* k = r.add_keys();
  std::vector<Key> keys(batch);
  const double fetch = Rate(seconds, [&] {
    for (auto& key : keys) key = all[rng() % rows];
    k->set_keys(std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * 8));
    proto::FetchResponse resp;
    ServeFetch(*shard, r, absl::InfiniteFuture(), &resp).IgnoreError();
  });
  const double row_bytes = rf * 4;
  std::printf("%-34s %10.2f Mrows/s %8.2f GB/s\n", "baseline: gather from flat array",
              gather * batch / 1e6, gather * batch * row_bytes / 1e9);
  std::printf("%-34s %10.2f Mrows/s %8.2f GB/s\n", "herald: JobShard::Fetch in-process",
              fetch * batch / 1e6, fetch * batch * row_bytes / 1e9);
  std::printf("ratio fetch/gather: %.2f\n", fetch / gather);
}

// Raw loopback TCP: one sender thread writes `bytes` in 1 MiB writes, the
// receiver reads them. Returns bytes per second.
double RawLoopback(uint64_t bytes) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(listener, 1);
  std::thread sender([&] {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    std::vector<char> buf(1 << 20, 'x');
    for (uint64_t sent = 0; sent < bytes;) {
      ssize_t n = ::write(s, buf.data(), std::min<uint64_t>(buf.size(), bytes - sent));
      if (n <= 0) break;
      sent += n;
    }
    ::close(s);
  });
  int conn = ::accept(listener, nullptr, nullptr);
  std::vector<char> buf(1 << 20);
  auto t0 = Clock::now();
  uint64_t got = 0;
  while (got < bytes) {
    ssize_t n = ::read(conn, buf.data(), buf.size());
    if (n <= 0) break;
    got += n;
  }
  const double secs = Since(t0);
  sender.join();
  ::close(conn);
  ::close(listener);
  return got / secs;
}

// Fetch and push throughput of `client` for one table of `dim`.
void MeasureRows(PsClient& client, const std::string& label, uint32_t dim, int batch,
                 double seconds, double raw) {
  proto::JobSpec spec;
  spec.mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_SGD);
  spec.mutable_sparse_optimizer()->set_learning_rate(0.1f);
  spec.add_tables()->set_dim(dim);
  const std::string job = absl::StrCat("bench-", label, "-", dim);
  client.StartJob(job, spec, 1).IgnoreError();
  std::mt19937_64 rng(5);
  const uint64_t key_space = 1 << 20;
  auto draw = [&] {
    std::vector<Key> k;
    absl::flat_hash_set<Key> seen;
    while (k.size() < size_t(batch)) {
      Key key = rng() % key_space;
      if (seen.insert(key).second) k.push_back(key);
    }
    return k;
  };
  // Create the rows once so the measurement is the steady state.
  for (uint64_t b = 0; b < key_space; b += batch) {
    std::vector<Key> k(batch);
    for (int i = 0; i < batch; ++i) k[i] = b + i;
    client.Fetch(job, Iteration(0), {{TableId(0), k}}).IgnoreError();
  }
  const double fetch = Rate(seconds, [&] {
    auto rows = client.Fetch(job, Iteration(0), {{TableId(0), draw()}});
    if (!rows.ok()) std::printf("fetch failed: %s\n", std::string(rows.status().message()).c_str());
  });
  uint32_t worker_pushes = 0;
  std::vector<float> grads(size_t(batch) * dim, 0.001f);
  // Each push must carry new keys (a worker pushes a key once per
  // iteration), so every 256 pushes the iteration is committed.
  uint64_t iteration = 0;
  const double push = Rate(seconds, [&] {
    std::vector<Key> k(batch);
    for (int i = 0; i < batch; ++i) k[i] = (uint64_t(worker_pushes) * batch + i) % key_space;
    absl::Status s = client.PushGradients(job, Iteration(iteration), WorkerRank(0),
                                          {{TableId(0), k, dim, grads}});
    if (!s.ok()) std::printf("push failed: %s\n", std::string(s.message()).c_str());
    if (++worker_pushes * uint64_t(batch) >= key_space) {
      client.IterationDone(job, Iteration(iteration++), WorkerRank(0), 1).IgnoreError();
      worker_pushes = 0;
    }
  });
  const double fetch_bytes = batch * (dim * 4.0 + 16);  // rows + key + version
  const double push_bytes = batch * (dim * 4.0 + 8);    // grads + key
  std::printf("%-12s dim %-4u fetch %8.2f Mrows/s %7.2f GB/s  ratio to raw %.2f\n", label.c_str(),
              dim, fetch * batch / 1e6, fetch * fetch_bytes / 1e9, fetch * fetch_bytes / raw);
  std::printf("%-12s dim %-4u push  %8.2f Mrows/s %7.2f GB/s  ratio to raw %.2f\n", label.c_str(),
              dim, push * batch / 1e6, push * push_bytes / 1e9, push * push_bytes / raw);
  client.EndJob(job).IgnoreError();
}

void Rpc(int batch, double seconds) {
  std::printf(
      "\n== rpc: batches of %d keys, 1 shard on this host, 1 request at a time ==\n"
      "   grpc: everything over gRPC on 127.0.0.1; ucx-tcp: data calls over UCX\n"
      "   restricted to TCP (UCX_TLS=tcp, loopback); ucx-shm: UCX as it picks\n"
      "   for two processes of one host (shared memory: sysv + cma); in-process:\n"
      "   the same client and shard with no transport at all (the ceiling)\n",
      batch);
  const double raw = RawLoopback(4ull << 30);
  std::printf("%-34s %29.2f GB/s\n", "baseline: raw loopback TCP", raw / 1e9);
  PsCoreOptions core_options;
  core_options.threads = absl::GetFlag(FLAGS_threads);
  PsCore core(core_options);
  PsService service(&core);
  rpc::ServerOptions server_options;
  auto server = rpc::StartServer(server_options, {&service});
  if (!server.ok()) {
    std::printf("cannot start server: %s\n", std::string(server.status().message()).c_str());
    return;
  }
  for (const std::string& transport :
       std::vector<std::string>(absl::StrSplit(absl::GetFlag(FLAGS_transports), ','))) {
    PsClientOptions options;
    std::unique_ptr<UcxPsServer> ucx;
    if (transport == "ucx-tcp") setenv("UCX_TLS", "tcp", 1);
    if (transport == "ucx-tcp" || transport == "ucx-shm") {
      ucx::RpcServerOptions ucx_options;
      ucx_options.ucx.loopback_only = true;
      ucx_options.ucx.shared_memory = transport == "ucx-shm";
      auto started = UcxPsServer::Start(&core, ucx_options);
      if (!started.ok()) {
        std::printf("%s: UCX did not start: %s\n", transport.c_str(),
                    std::string(started.status().message()).c_str());
        continue;
      }
      ucx = std::move(*started);
      options.ucx_addresses = {ucx->address()};
      options.ucx_shared_memory = transport == "ucx-shm";
    }
    absl::StatusOr<std::unique_ptr<PsClient>> client;
    if (transport == "in-process") {  // the ceiling: the same client and shard, no transport
      std::vector<std::unique_ptr<ShardStub>> stubs;
      stubs.push_back(MakeInProcessShardStub(&core, "in-process"));
      client = std::unique_ptr<PsClient>(new ShardedPsClient(std::move(stubs), {}));
    } else {
      client = MakeGrpcPsClient({(*server)->address()}, options);
    }
    unsetenv("UCX_TLS");
    if (!client.ok()) {
      std::printf("%s: %s\n", transport.c_str(), std::string(client.status().message()).c_str());
      continue;
    }
    for (uint32_t dim : {64u, 128u}) MeasureRows(**client, transport, dim, batch, seconds, raw);
  }
}

}  // namespace
}  // namespace herald::ps

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::printf("threads=%d batch=%d seconds=%.1f hardware threads=%u\n",
              absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_batch),
              absl::GetFlag(FLAGS_seconds), std::thread::hardware_concurrency());
  for (absl::string_view what : absl::StrSplit(absl::GetFlag(FLAGS_what), ',')) {
    if (what == "memory") herald::ps::Memory(absl::GetFlag(FLAGS_rows));
    if (what == "lookup") {
      herald::ps::Lookup(absl::GetFlag(FLAGS_lookup_rows), absl::GetFlag(FLAGS_batch),
                         absl::GetFlag(FLAGS_seconds));
    }
    if (what == "rpc") herald::ps::Rpc(absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_seconds));
  }
  return 0;
}
