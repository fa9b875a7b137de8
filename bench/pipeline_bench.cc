// What Herald's pipeline costs per sample with a device that costs nothing:
// real herald_scheduler, herald_ps shards and herald_worker_with_test_hooks
// processes on 127.0.0.1 over the real transports, every worker on the
// null device (worker/device/null_device.h: no arithmetic, zero gradients;
// --device cuda:0 runs the same jobs with GPU workers on a GPU node).
// For each policy × worker count × global batch it trains one Wide&Deep job
// (26 tables × dim 64, MLP 512-256-128, Adam + Adagrad, entity-correlated
// rows generated once into a Herald binary file, read by the scheduler) and prints samples/s and
// the CPU microseconds per sample of every process (from /proc/PID/stat, over the job only) and in
// total. With --baseline_dir (another build's binaries, e.g. the previous
// commit's: bench/pipeline_bench.sh) the same jobs run on those too, in the
// same run, and the ratios are printed.
//
//   bench/pipeline_bench.sh [flags]   (builds -c opt, then runs this)

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/wide_and_deep_bench_job.h"
#include "tests/harness/local_cluster.h"

ABSL_FLAG(uint64_t, rows, 400000, "rows of the generated training data (without --data)");
ABSL_FLAG(std::string, data, "", "training data (Herald binary format) instead of generated rows");
ABSL_FLAG(std::string, batches, "4096,16384", "global batch sizes");
ABSL_FLAG(std::string, workers, "1,2", "worker counts");
ABSL_FLAG(std::string, policies, "herald,vanilla", "policies");
ABSL_FLAG(int, ps, 2, "PS shards");
ABSL_FLAG(int, repeat, 1, "runs of each job; the one with the least CPU per sample is printed");
ABSL_FLAG(int, dim, 64, "embedding dimension of every table");
ABSL_FLAG(std::string, device, "null",
          "every worker's --device: null (no arithmetic: the pipeline alone), or a real one "
          "(cuda:0 on a GPU node: the whole job with GPU workers; cpu)");
ABSL_FLAG(int, epochs, 1,
          "epochs of each job: more than one weighs the first epoch's one-off costs (the "
          "shards creating rows, the caches filling) less");
ABSL_FLAG(std::string, baseline_dir, "",
          "a directory with another build's herald_scheduler, herald_ps and "
          "herald_worker_with_test_hooks: the same jobs on them, and ratios");
ABSL_FLAG(std::string, scheduler_flags, "", "more herald_scheduler flags, comma-separated");
ABSL_FLAG(std::string, ps_and_worker_flags, "",
          "more flags of every herald_ps and worker, comma-separated (e.g. "
          "--ucx_shared_memory: one node's shards and workers over shared memory)");

namespace herald {
namespace {

using testing::ClusterFlags;
using testing::LocalCluster;

// CPU seconds (user + system) a process has used so far; -1 if unreadable.
double CpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

proto::JobSpec Spec(const std::string& data, const std::string& policy, uint32_t workers,
                    uint32_t batch) {
  proto::JobSpec spec = bench::WideAndDeepBenchJob(
      absl::StrCat("pipeline-", policy, "-", workers, "w-", batch), data,
      static_cast<uint32_t>(absl::GetFlag(FLAGS_dim)), policy, workers, batch);
  spec.set_epochs(static_cast<uint32_t>(std::max(absl::GetFlag(FLAGS_epochs), 1)));
  return spec;
}

struct Outcome {
  bool ok = false;
  std::string error;
  double samples_per_second = 0;
  std::vector<double> us_per_sample;  // scheduler, PS shards, workers
  double total_us_per_sample = 0;
  // The workers' wall time per sample, summed over workers: waiting for
  // the scheduler's steps, fetching (mostly waiting for the PS), on the
  // device.
  double step_wait_us = 0, fetch_us = 0, compute_us = 0;
};

Outcome RunJobOnce(const std::string& data, const std::string& binary_dir,
                   const std::string& policy, uint32_t workers, uint32_t batch) {
  Outcome out;
  ClusterFlags flags;
  flags.worker_binary = "worker/herald_worker_with_test_hooks";
  flags.binary_dir = binary_dir;
  for (absl::string_view f :
       absl::StrSplit(absl::GetFlag(FLAGS_scheduler_flags), ',', absl::SkipEmpty())) {
    flags.scheduler.emplace_back(f);
  }
  for (absl::string_view f :
       absl::StrSplit(absl::GetFlag(FLAGS_ps_and_worker_flags), ',', absl::SkipEmpty())) {
    flags.ps_and_workers.emplace_back(f);
  }
  const int ps = absl::GetFlag(FLAGS_ps);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start("pipeline_bench", ps, static_cast<int>(workers), nullptr,
                          std::vector<std::string>(workers, absl::GetFlag(FLAGS_device)), flags);
  if (!cluster.ok()) {
    out.error = std::string(cluster.status().message());
    return out;
  }
  LocalCluster& c = **cluster;
  std::vector<pid_t> pids = {c.scheduler().pid()};
  for (int s = 0; s < ps; ++s) pids.push_back(c.ps(s).pid());
  for (uint32_t w = 0; w < workers; ++w) pids.push_back(c.worker(static_cast<int>(w)).pid());
  std::vector<double> before;
  for (pid_t pid : pids) before.push_back(CpuSeconds(pid));
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> job = c.Submit(Spec(data, policy, workers, batch));
  if (!job.ok()) {
    out.error = std::string(job.status().message());
    return out;
  }
  const proto::JobStatus end = c.Watch(*job);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (end.state() != proto::JOB_SUCCEEDED) {
    out.error = absl::StrCat("job ended ", proto::JobState_Name(end.state()), ": ", end.reason(),
                             " (the processes' logs are in ", c.dir(), ")");
    return out;
  }
  const double samples = static_cast<double>(end.progress().iteration()) * batch;
  out.samples_per_second = samples / seconds;
  out.step_wait_us = end.progress().worker_step_wait_ms() * 1e3 / samples;
  out.fetch_us = end.progress().worker_fetch_ms() * 1e3 / samples;
  out.compute_us = end.progress().worker_compute_ms() * 1e3 / samples;
  for (size_t i = 0; i < pids.size(); ++i) {
    const double us = (CpuSeconds(pids[i]) - before[i]) * 1e6 / samples;
    out.us_per_sample.push_back(us);
    out.total_us_per_sample += us;
  }
  out.ok = true;
  // A run that worked leaves nothing behind (a failed one keeps its logs).
  const std::string dir = c.dir();
  cluster->reset();  // stops the processes
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return out;
}

// --repeat runs; the one with the least CPU per sample (the least disturbed
// by the rest of the machine), or the first failure.
Outcome RunJob(const std::string& data, const std::string& binary_dir, const std::string& policy,
               uint32_t workers, uint32_t batch) {
  Outcome best;
  for (int r = 0; r < std::max(1, absl::GetFlag(FLAGS_repeat)); ++r) {
    Outcome o = RunJobOnce(data, binary_dir, policy, workers, batch);
    if (!o.ok) return o;
    if (!best.ok || o.total_us_per_sample < best.total_us_per_sample) best = std::move(o);
  }
  return best;
}

std::string Row(const std::string& build, const Outcome& o) {
  if (!o.ok) return absl::StrCat(build, ": FAILED: ", o.error);
  std::string row = absl::StrFormat("%-9s %10.0f   %6.2f |", build.c_str(), o.samples_per_second,
                                    o.total_us_per_sample);
  for (double us : o.us_per_sample) absl::StrAppendFormat(&row, " %6.2f", us);
  absl::StrAppendFormat(&row,
                        "   (workers' wall us/sample: scheduler %.2f, fetch %.2f, device %.2f)",
                        o.step_wait_us, o.fetch_us, o.compute_us);
  return row;
}

std::vector<uint32_t> Numbers(const std::string& list) {
  std::vector<uint32_t> out;
  for (absl::string_view s : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    uint32_t n = 0;
    if (absl::SimpleAtoi(s, &n) && n > 0) out.push_back(n);
  }
  return out;
}

// The training data: --data, or --rows generated (heraldctl gen-data,
// entity-correlated, Criteo cardinalities × 0.05) into a temporary file.
absl::StatusOr<std::string> TrainingData() {
  if (!absl::GetFlag(FLAGS_data).empty()) return absl::GetFlag(FLAGS_data);
  return bench::GenerateBenchData("pipeline_bench_data", absl::GetFlag(FLAGS_rows));
}

int Main() {
  const std::string baseline = absl::GetFlag(FLAGS_baseline_dir);
  absl::StatusOr<std::string> training_data = TrainingData();
  if (!training_data.ok()) {
    std::fprintf(stderr, "pipeline_bench: %s\n",
                 std::string(training_data.status().message()).c_str());
    return 2;
  }
  const std::string& data = *training_data;
  std::printf("pipeline_bench: data %s, %d epoch(s), %d PS shards, dim %d, device %s%s\n",
              data.c_str(), std::max(absl::GetFlag(FLAGS_epochs), 1), absl::GetFlag(FLAGS_ps),
              absl::GetFlag(FLAGS_dim), absl::GetFlag(FLAGS_device).c_str(),
              baseline.empty() ? ", no baseline" : (", baseline " + baseline).c_str());
  std::printf("%-9s %10s   %6s | CPU us/sample: scheduler, PS 0..n, workers 0..n\n", "build",
              "samples/s", "total");
  bool failed = false;
  const std::vector<std::string> policies =
      absl::StrSplit(absl::GetFlag(FLAGS_policies), ',', absl::SkipEmpty());
  for (const std::string& policy : policies) {
    for (uint32_t workers : Numbers(absl::GetFlag(FLAGS_workers))) {
      for (uint32_t batch : Numbers(absl::GetFlag(FLAGS_batches))) {
        std::printf("-- %s, %u worker(s), global batch %u\n", policy.c_str(), workers, batch);
        const Outcome current = RunJob(data, "", policy, workers, batch);
        std::printf("%s\n", Row("this", current).c_str());
        failed = failed || !current.ok;
        if (baseline.empty()) continue;
        const Outcome base = RunJob(data, baseline, policy, workers, batch);
        std::printf("%s\n", Row("baseline", base).c_str());
        if (current.ok && base.ok) {
          std::printf("ratio     samples/s %.2fx, CPU us/sample %.2fx\n",
                      current.samples_per_second / base.samples_per_second,
                      current.total_us_per_sample / base.total_us_per_sample);
        }
      }
    }
  }
  if (absl::GetFlag(FLAGS_data).empty()) {  // generated here: removed with its directory
    std::error_code ignored;
    std::filesystem::remove_all(std::filesystem::path(data).parent_path(), ignored);
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::Main();
}
