// Bounded memory with row expiry (docs/benchmarks.md, "Row expiry"): one
// PS shard with a disk tier trains a stream in which new ids keep
// appearing (a hot set drawn Zipf-like, and a long tail of ids each seen
// once), many times longer than its memory budget holds. The stream goes
// through the scheduler's own key lifecycle (scheduler/data/
// key_lifecycle.h), so the rows deleted are exactly those a job deletes.
//
// Two runs, each in a child process of its own (so each has its own RSS):
// the baseline without expiry and the run with --expire_after. Every
// --every batches each prints the shard's rows (memory and disk), the
// process's resident memory and the disk tier's bytes; at the end the
// ratios of the two runs, and each run's growth over its second half
// (expiry: about flat; without: linear).
//
//   bazel run -c opt //bench:expiry_bench -- --batches=600

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/rng.h"
#include "common/status.h"
#include "common/thread_pool.h"
#include "ps_server/shard/job_shard.h"
#include "scheduler/data/key_lifecycle.h"

ABSL_FLAG(uint64_t, batches, 600, "training batches (iterations)");
ABSL_FLAG(uint32_t, lookups, 4096, "lookups per table per batch");
ABSL_FLAG(uint32_t, tables, 4, "embedding tables");
ABSL_FLAG(uint32_t, dim, 16, "embedding dimension (Adagrad: 2 x dim floats per row)");
ABSL_FLAG(uint64_t, hot, 20000, "ids of the hot set, per table");
ABSL_FLAG(double, tail, 0.5, "share of lookups that are new ids, each seen once");
ABSL_FLAG(uint64_t, expire_after, 16, "the expiring run's tables[].expiry.after_iterations");
ABSL_FLAG(uint32_t, min_count, 0, "tables[].admission.min_count in both runs (0: none)");
ABSL_FLAG(uint64_t, budget_mb, 16, "the shard's memory budget for rows (its disk tier)");
ABSL_FLAG(uint64_t, every, 50, "batches between two samples");
ABSL_FLAG(std::string, dir, "", "where the disk tiers go (default: a directory under /tmp)");

namespace herald {
namespace {

struct Sample {
  uint64_t batch = 0, rows = 0, rss_bytes = 0, disk_bytes = 0;
};

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Table t's lookups of batch b: hot ids (a square of a uniform draw: small
// ids far more often) and new ids never seen before.
data::KeyBatch MakeBatch(uint64_t b) {
  const uint32_t n = absl::GetFlag(FLAGS_lookups);
  const uint64_t hot = absl::GetFlag(FLAGS_hot);
  const double tail = absl::GetFlag(FLAGS_tail);
  data::KeyBatch batch;
  batch.num_samples = n;
  batch.tables.resize(absl::GetFlag(FLAGS_tables));
  for (uint32_t t = 0; t < batch.tables.size(); ++t) {
    CounterRng rng(17, b, t);
    data::KeyBatch::Table& table = batch.tables[t];
    for (uint32_t i = 0; i < n; ++i) {
      const double u = rng.NextDouble();
      const Key key = rng.NextDouble() < tail
                          ? (uint64_t{1} << 40) + b * n + i  // new: seen here only
                          : static_cast<Key>(u * u * static_cast<double>(hot));
      table.keys.push_back(key);
      table.offsets.push_back(i + 1);
    }
  }
  return batch;
}

// One run in this process: the samples, or an error.
absl::StatusOr<std::vector<Sample>> Run(uint64_t expire_after, const std::string& dir) {
  const uint32_t tables = absl::GetFlag(FLAGS_tables);
  ps::JobShardOptions o;
  o.job_id = "expiry-bench";
  o.num_workers = 1;
  for (uint32_t t = 0; t < tables; ++t) {
    ps::TableOptions table;
    table.id = TableId(t);
    table.dim = absl::GetFlag(FLAGS_dim);
    table.seed = 3;
    table.optimizer.kind = math::SparseOptimizerKind::kAdagrad;
    table.optimizer.learning_rate = 0.05f;
    o.tables.push_back(table);
  }
  o.disk.memory_budget = absl::GetFlag(FLAGS_budget_mb) << 20;
  o.disk.path = dir;
  o.disk.owner = {o.job_id, 0, 1};
  ThreadPool pool(2);
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<ps::JobShard> shard,
                          ps::JobShard::Create(std::move(o), &pool));
  scheduler::KeyLifecycle lifecycle(std::vector<scheduler::KeyRule>(
      tables, scheduler::KeyRule{absl::GetFlag(FLAGS_min_count), expire_after}));
  const uint32_t dim = absl::GetFlag(FLAGS_dim);
  std::vector<Sample> samples;
  for (uint64_t b = 0; b < absl::GetFlag(FLAGS_batches); ++b) {
    data::KeyBatch batch = MakeBatch(b);
    lifecycle.Filter(b, &batch);
    // The batch's distinct rows: fetched, then one gradient each.
    std::vector<std::vector<Key>> keys(tables);
    std::vector<std::vector<float>> grads(tables);
    ps::FetchIn fetch{b, false, false, {}};
    ps::PushIn push{b, 0, {}};
    std::vector<ps::KeysIn> expire;
    for (uint32_t t = 0; t < tables; ++t) {
      absl::flat_hash_set<Key> seen;
      for (Key k : batch.tables[t].keys) {
        if (seen.insert(k).second) keys[t].push_back(k);
      }
      grads[t].assign(keys[t].size() * dim, 0.01f);
      fetch.blocks.push_back({t, keys[t]});
      push.blocks.push_back({t, dim, keys[t], grads[t]});
      if (!batch.tables[t].expired.empty()) expire.push_back({t, batch.tables[t].expired});
    }
    std::vector<std::vector<char>> out(tables);
    HERALD_RETURN_IF_ERROR(
        shard->Fetch(fetch, absl::Now() + absl::Minutes(1), [&](size_t i, uint32_t rf) {
          out[i].resize(keys[i].size() * (rf * sizeof(float) + sizeof(uint64_t)));
          return ps::RowsOut{out[i].data(), out[i].data() + keys[i].size() * rf * sizeof(float)};
        }));
    HERALD_RETURN_IF_ERROR(shard->PushGradients(push));
    HERALD_RETURN_IF_ERROR(
        shard->IterationDone(Iteration(b), WorkerRank(0), 1, nullptr, expire).status());
    if ((b + 1) % absl::GetFlag(FLAGS_every) == 0) {
      proto::PsStatsResponse stats;
      shard->Stats(&stats);
      Sample s{b + 1, 0, ResidentBytes(), stats.disk_tier().disk_bytes()};
      for (const proto::TableStats& t : stats.tables()) s.rows += t.rows();
      samples.push_back(s);
    }
  }
  return samples;
}

// Runs one configuration in a child process; its samples come back
// through a pipe.
std::vector<Sample> RunInChild(uint64_t expire_after, const std::string& dir) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<std::vector<Sample>> samples = Run(expire_after, dir);
    if (!samples.ok()) {
      std::fprintf(stderr, "run (expire_after %llu): %s\n",
                   static_cast<unsigned long long>(expire_after),
                   std::string(samples.status().message()).c_str());
      _exit(1);
    }
    const size_t bytes = samples->size() * sizeof(Sample);
    _exit(write(fds[1], samples->data(), bytes) == static_cast<ssize_t>(bytes) ? 0 : 1);
  }
  close(fds[1]);
  std::vector<Sample> samples;
  Sample s;
  while (read(fds[0], &s, sizeof(s)) == static_cast<ssize_t>(sizeof(s))) samples.push_back(s);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return samples;
}

double Mb(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// Growth per 100 batches over the second half of a run.
double Slope(const std::vector<Sample>& s, uint64_t Sample::*field) {
  const Sample& a = s[s.size() / 2];
  const Sample& b = s.back();
  if (b.batch == a.batch) return 0;
  return 100.0 * (static_cast<double>(b.*field) - static_cast<double>(a.*field)) /
         static_cast<double>(b.batch - a.batch);
}

int Main() {
  std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) dir = absl::StrCat("/tmp/expiry_bench.", getpid());
  std::filesystem::create_directories(dir);
  const uint64_t expire_after = absl::GetFlag(FLAGS_expire_after);
  std::printf(
      "expiry_bench: %llu batches x %u tables x %u lookups (%.0f%% new ids), hot set %llu, "
      "dim %u, memory budget %llu MB, admission min_count %u\n",
      static_cast<unsigned long long>(absl::GetFlag(FLAGS_batches)), absl::GetFlag(FLAGS_tables),
      absl::GetFlag(FLAGS_lookups), 100 * absl::GetFlag(FLAGS_tail),
      static_cast<unsigned long long>(absl::GetFlag(FLAGS_hot)), absl::GetFlag(FLAGS_dim),
      static_cast<unsigned long long>(absl::GetFlag(FLAGS_budget_mb)),
      absl::GetFlag(FLAGS_min_count));
  const std::vector<Sample> off = RunInChild(0, dir + "/off");
  const std::vector<Sample> on = RunInChild(expire_after, dir + "/on");
  std::filesystem::remove_all(dir);
  if (off.empty() || on.size() != off.size()) {
    std::fprintf(stderr, "expiry_bench: a run failed\n");
    return 1;
  }
  std::printf("%8s | %12s %12s | %9s %9s | %9s %9s\n", "batch", "rows", "rows(exp)", "RSS MB",
              "RSS(exp)", "disk MB", "disk(exp)");
  for (size_t i = 0; i < off.size(); ++i) {
    std::printf("%8llu | %12llu %12llu | %9.1f %9.1f | %9.1f %9.1f\n",
                static_cast<unsigned long long>(off[i].batch),
                static_cast<unsigned long long>(off[i].rows),
                static_cast<unsigned long long>(on[i].rows), Mb(off[i].rss_bytes),
                Mb(on[i].rss_bytes), Mb(off[i].disk_bytes), Mb(on[i].disk_bytes));
  }
  const Sample& a = off.back();
  const Sample& b = on.back();
  std::printf("at the end, expiry after %llu / none: rows %.3f, RSS %.3f, disk %.3f\n",
              static_cast<unsigned long long>(expire_after),
              static_cast<double>(b.rows) / static_cast<double>(a.rows),
              static_cast<double>(b.rss_bytes) / static_cast<double>(a.rss_bytes),
              a.disk_bytes == 0
                  ? 0.0
                  : static_cast<double>(b.disk_bytes) / static_cast<double>(a.disk_bytes));
  std::printf(
      "second half, growth per 100 batches: rows %.0f (none) vs %.0f (expiry); disk MB %.1f vs "
      "%.1f; RSS MB %.1f vs %.1f\n",
      Slope(off, &Sample::rows), Slope(on, &Sample::rows),
      Slope(off, &Sample::disk_bytes) / (1 << 20), Slope(on, &Sample::disk_bytes) / (1 << 20),
      Slope(off, &Sample::rss_bytes) / (1 << 20), Slope(on, &Sample::rss_bytes) / (1 << 20));
  return 0;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::Main();
}
