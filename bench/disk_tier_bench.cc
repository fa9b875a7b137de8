// Tables larger than the parameter servers' memory (docs/parameter-server.md,
// "Tables larger than memory"): one Wide&Deep job (26 tables, Adagrad,
// entity-correlated rows generated once into a Herald binary file) on real
// herald_scheduler, herald_ps and herald_worker_with_test_hooks processes
// (--device null: no arithmetic, so the parameter servers' costs show in
// full; --device cpu: the workers train on the CPU)
// runs three times, each on a fresh cluster:
//   1. all in memory (the baseline, in the same run);
//   2. each shard's memory budget a quarter (--ratio) of the bytes its rows
//      took in run 1, the rest on disk, with the scheduler's look-ahead;
//   3. the same without the look-ahead (ps.no_look_ahead).
// It prints samples/s and the ratio to run 1, the rows read from disk on
// the critical path against the rows fetched, and each shard's peak RSS
// (VmHWM from /proc) against its budget.
//
//   bazel run -c opt //bench:disk_tier_bench -- [flags]

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/wide_and_deep_bench_job.h"
#include "ps_server/client/sharded_ps_client.h"
#include "tests/harness/local_cluster.h"

ABSL_FLAG(uint64_t, rows, 300000, "rows of the generated training data");
ABSL_FLAG(uint32_t, batch, 4096, "global batch size");
ABSL_FLAG(uint32_t, workers, 2, "workers");
ABSL_FLAG(int, ps, 2, "PS shards");
ABSL_FLAG(int, dim, 32, "embedding dimension of every table");
ABSL_FLAG(double, ratio, 4, "the shards' rows over their memory budget");
ABSL_FLAG(std::string, policy, "herald", "herald or vanilla");
ABSL_FLAG(std::string, device, "null",
          "the workers' device: null (no arithmetic: the parameter servers' costs in full) or cpu");

namespace herald {
namespace {

using testing::ClusterFlags;
using testing::LocalCluster;

// Peak resident set (VmHWM) of a process in bytes; 0 if unreadable.
uint64_t PeakRssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    uint64_t kb = 0;
    if (line.rfind("VmHWM:", 0) == 0 &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(6, line.size() - 6 - 3)), &kb)) {
      return kb << 10;
    }
  }
  return 0;
}

proto::JobSpec Spec(const std::string& data, uint64_t budget, bool look_ahead) {
  proto::JobSpec spec = bench::WideAndDeepBenchJob(
      budget == 0  ? "in-memory"
      : look_ahead ? "on-disk"
                   : "on-disk-no-look-ahead",
      data, static_cast<uint32_t>(absl::GetFlag(FLAGS_dim)), absl::GetFlag(FLAGS_policy),
      absl::GetFlag(FLAGS_workers), absl::GetFlag(FLAGS_batch));
  spec.mutable_ps()->set_memory_budget_bytes(budget);
  spec.mutable_ps()->set_no_look_ahead(!look_ahead);
  return spec;
}

struct Outcome {
  bool ok = false;
  std::string error;
  double samples_per_second = 0;
  std::vector<uint64_t> peak_rss;     // per shard
  std::vector<uint64_t> table_bytes;  // per shard: rows x bytes per row (all rows)
  uint64_t rows_fetched = 0, critical = 0, ahead = 0, evicted = 0, written = 0;
  double commit_ms_mean = 0;  // over the shards
  double eviction_ms = 0;     // summed over the shards
};

Outcome Run(const std::string& data, uint64_t budget, bool look_ahead) {
  Outcome out;
  ClusterFlags flags;
  flags.worker_binary = "worker/herald_worker_with_test_hooks";
  const int ps = absl::GetFlag(FLAGS_ps);
  const uint32_t workers = absl::GetFlag(FLAGS_workers);
  auto cluster =
      LocalCluster::Start("disk_tier_bench", ps, static_cast<int>(workers), nullptr,
                          std::vector<std::string>(workers, absl::GetFlag(FLAGS_device)), flags);
  if (!cluster.ok()) {
    out.error = std::string(cluster.status().message());
    return out;
  }
  LocalCluster& c = **cluster;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> job = c.Submit(Spec(data, budget, look_ahead));
  if (!job.ok()) {
    out.error = std::string(job.status().message());
    return out;
  }
  const proto::JobStatus end = c.Watch(*job);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (end.state() != proto::JOB_SUCCEEDED) {
    out.error = absl::StrCat("job ended ", proto::JobState_Name(end.state()), ": ", end.reason());
    return out;
  }
  out.samples_per_second = end.progress().iteration() * absl::GetFlag(FLAGS_batch) / seconds;
  auto client = ps::MakeGrpcPsClient(c.PsAddresses());
  auto stats = client.ok() ? (*client)->Stats(*job)
                           : absl::StatusOr<std::vector<proto::PsStatsResponse>>(client.status());
  if (!stats.ok()) {
    out.error = std::string(stats.status().message());
    return out;
  }
  for (int s = 0; s < ps; ++s) {
    const proto::PsStatsResponse& st = (*stats)[s];
    out.peak_rss.push_back(PeakRssBytes(c.ps(s).pid()));
    uint64_t bytes = 0;
    for (const proto::TableStats& t : st.tables()) {
      // Bytes per row as the disk tier counts them: floats, 24 bytes of
      // metadata, 8 of index (EmbeddingTable::BytesPerRow).
      const uint64_t floats = t.rows() == 0 ? 0 : t.raw_bytes() / t.rows() / 4;
      bytes += t.rows() * (floats * 4 + 32);
    }
    out.table_bytes.push_back(bytes);
    out.rows_fetched += st.rows_fetched();
    out.critical += st.disk_tier().rows_read_on_critical_path();
    out.ahead += st.disk_tier().rows_loaded_ahead();
    out.evicted += st.disk_tier().rows_evicted();
    out.written += st.disk_tier().rows_written();
    out.commit_ms_mean += st.commit_latency_ms_mean() / ps;
    out.eviction_ms += st.disk_tier().eviction_ms_total();
  }
  out.ok = true;
  return out;
}

void Print(const char* name, const Outcome& o, const Outcome& base, uint64_t budget) {
  if (!o.ok) {
    std::printf("%-22s FAILED: %s\n", name, o.error.c_str());
    return;
  }
  std::printf("%-22s %10.0f  %5.2fx  %9llu  %9llu  %6.3f%%  %9llu  %9llu |", name,
              o.samples_per_second, o.samples_per_second / base.samples_per_second,
              static_cast<unsigned long long>(o.rows_fetched),
              static_cast<unsigned long long>(o.critical),
              o.rows_fetched ? 100.0 * o.critical / o.rows_fetched : 0.0,
              static_cast<unsigned long long>(o.ahead), static_cast<unsigned long long>(o.evicted));
  for (size_t s = 0; s < o.peak_rss.size(); ++s) {
    std::printf(" %.1f", o.peak_rss[s] / 1048576.0);
    if (budget > 0) std::printf(" (+%.1f)", (double(o.peak_rss[s]) - double(budget)) / 1048576.0);
  }
  std::printf(" | commit %.2f ms, evicting %.0f ms in all\n", o.commit_ms_mean, o.eviction_ms);
}

int Main() {
  absl::StatusOr<std::string> data =
      bench::GenerateBenchData("disk_tier_bench_data", absl::GetFlag(FLAGS_rows));
  if (!data.ok()) {
    std::fprintf(stderr, "disk_tier_bench: %s\n", std::string(data.status().message()).c_str());
    return 2;
  }
  const Outcome base = Run(*data, 0, true);
  if (!base.ok) {
    std::fprintf(stderr, "disk_tier_bench: in memory: %s\n", base.error.c_str());
    return 1;
  }
  uint64_t most = 0;
  for (uint64_t b : base.table_bytes) most = std::max(most, b);
  const uint64_t budget = static_cast<uint64_t>(most / absl::GetFlag(FLAGS_ratio));
  std::printf(
      "disk_tier_bench: %llu rows, batch %u, %u workers (%s device), %d PS shards, dim %d, "
      "%s; the largest shard's rows take %.1f MiB in memory: budget %.1f MiB per shard (1/%.0f)\n",
      static_cast<unsigned long long>(absl::GetFlag(FLAGS_rows)), absl::GetFlag(FLAGS_batch),
      absl::GetFlag(FLAGS_workers), absl::GetFlag(FLAGS_device).c_str(), absl::GetFlag(FLAGS_ps),
      absl::GetFlag(FLAGS_dim), absl::GetFlag(FLAGS_policy).c_str(), most / 1048576.0,
      budget / 1048576.0, absl::GetFlag(FLAGS_ratio));
  std::printf("%-22s %10s  %6s  %9s  %9s  %7s  %9s  %9s | peak RSS MiB per shard (over budget)\n",
              "run", "samples/s", "ratio", "fetched", "disk crit", "of fet.", "ahead", "evicted");
  std::printf("%-22s %s\n", "", "(then: mean commit latency per shard, eviction passes' time)");
  Print("all in memory", base, base, 0);
  const Outcome ahead = Run(*data, budget, true);
  Print("on disk, look-ahead", ahead, base, budget);
  const Outcome no_ahead = Run(*data, budget, false);
  Print("on disk, no look-ahead", no_ahead, base, budget);
  return ahead.ok && no_ahead.ok ? 0 : 1;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::Main();
}
