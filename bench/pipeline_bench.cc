// What Herald's pipeline costs per sample with a device that costs nothing:
// real herald_scheduler, herald_ps shards and herald_worker_with_test_hooks
// processes on 127.0.0.1 over the real transports, every worker on the
// null device (worker/device/null_device.h: no arithmetic, zero gradients;
// --device cuda:0 runs the same jobs with GPU workers on a GPU node).
// For each policy × worker count × global batch it trains one Wide&Deep job
// (26 tables × dim 64, MLP 512-256-128, Adam + Adagrad, entity-correlated
// rows generated once into a Herald binary file, read by the scheduler) and prints:
//   - samples/s over the whole job (submit to end: start-up and the cache
//     sizing pass included) and in the steady state (from the job's
//     history, without its first --warmup share of iterations);
//   - the CPU microseconds per sample of every process (from /proc/PID/stat,
//     over the whole job) and in total;
//   - every process's busiest thread in the steady state, named, in CPU
//     microseconds per sample (sampled from /proc/PID/task/*/stat): the
//     thread that bounds the process where cores are free;
//   - the workers' wall time per sample in each phase of their steps, and
//     the scheduler's (planning, building and encoding the steps).
// Thread counts are a deployed node's (--node_cores: the scheduler's
// planner threads, each shard's threads, each worker's check threads), not
// the test harness's pinned ones. With --baseline_dir (another build's binaries, e.g. the previous
// commit's: bench/pipeline_bench.sh) the same jobs run on those too, in the
// same run, and the ratios are printed.
//
//   bench/pipeline_bench.sh [flags]   (builds -c opt, then runs this)

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/thread_cpu.h"
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
ABSL_FLAG(int, node_cores, 0,
          "thread counts as a node of this many cores gets them by default (0: this machine's "
          "cores): the scheduler's --planner_threads and each shard's --threads = cores, each "
          "worker's --check_threads = cores / 4 (1 to 4)");
ABSL_FLAG(double, warmup, 0.2,
          "share of a job's iterations left out of its steady state (start-up, caches filling)");
ABSL_FLAG(std::string, scheduler_flags, "", "more herald_scheduler flags, comma-separated");
ABSL_FLAG(std::string, ps_and_worker_flags, "",
          "more flags of every herald_ps and worker, comma-separated (e.g. "
          "--ucx_shared_memory: one node's shards and workers over shared memory)");

namespace herald {
namespace {

using testing::ClusterFlags;
using testing::LocalCluster;

// CPU seconds (user + system) a process has used so far, its ended
// threads' included; -1 if unreadable.
double CpuSeconds(pid_t pid) {
  const std::optional<bench::ThreadCpu> process =
      bench::ReadStat(absl::StrCat("/proc/", pid, "/stat"));
  return process.has_value() ? process->cpu_seconds : -1;
}

int NodeCores() {
  const int cores = absl::GetFlag(FLAGS_node_cores);
  return cores > 0 ? cores : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

proto::JobSpec Spec(const std::string& data, const std::string& policy, uint32_t workers,
                    uint32_t batch) {
  proto::JobSpec spec = bench::WideAndDeepBenchJob(
      absl::StrCat("pipeline-", policy, "-", workers, "w-", batch), data,
      static_cast<uint32_t>(absl::GetFlag(FLAGS_dim)), policy, workers, batch);
  spec.set_epochs(static_cast<uint32_t>(std::max(absl::GetFlag(FLAGS_epochs), 1)));
  return spec;
}

// A worker phase's name and its sum over workers in the job's progress.
struct Phase {
  const char* name;
  double (proto::JobProgress::*ms)() const;
};
constexpr Phase kPhases[] = {
    {"step_wait", &proto::JobProgress::worker_step_wait_ms},
    {"decode", &proto::JobProgress::worker_decode_ms},
    {"stage", &proto::JobProgress::worker_stage_ms},
    {"fetch", &proto::JobProgress::worker_fetch_ms},
    {"compute", &proto::JobProgress::worker_compute_ms},
    {"allreduce", &proto::JobProgress::worker_allreduce_ms},
    {"push", &proto::JobProgress::worker_push_ms},
    {"writeback", &proto::JobProgress::worker_writeback_ms},
    {"commit", &proto::JobProgress::worker_commit_ms},
    {"report", &proto::JobProgress::worker_report_ms},
    {"device", &proto::JobProgress::worker_device_ms},
};
// The scheduler's own phases (its job thread, per planned iteration).
constexpr Phase kSchedulerPhases[] = {
    {"plan", &proto::JobProgress::scheduler_plan_ms},
    {"encode", &proto::JobProgress::scheduler_encode_ms},
};

struct Outcome {
  bool ok = false;
  std::string error;
  double samples_per_second = 0;         // submit to end
  double steady_samples_per_second = 0;  // the history's steady state
  std::vector<double> us_per_sample;     // scheduler, PS shards, workers
  double total_us_per_sample = 0;
  // Per process, its busiest thread in the steady state: name, CPU us/sample.
  std::vector<bench::BusiestThread> busiest;
  std::vector<double> busiest_us_per_sample;
  // The workers' wall time per sample in each phase (kPhases), summed over
  // workers, over the whole job.
  std::vector<double> phase_us;
  // The scheduler's wall time per sample in each of kSchedulerPhases.
  std::vector<double> scheduler_phase_us;
};

// The steady state of a job from its history: the window from the point at
// or after the first --warmup share of its iterations to the last point.
struct Steady {
  absl::Time from, to;
  double samples = 0;
};
std::optional<Steady> SteadyWindow(const proto::JobStatus& status, uint32_t batch) {
  const auto& h = status.history();
  if (h.size() < 2) return std::nullopt;
  const uint64_t first = h[0].iteration(), last = h[h.size() - 1].iteration();
  const double skip =
      std::clamp(absl::GetFlag(FLAGS_warmup), 0.0, 0.9) * static_cast<double>(last - first);
  int start = 0;
  while (start + 2 < h.size() && static_cast<double>(h[start].iteration() - first) < skip) ++start;
  const proto::HistoryPoint& a = h[start];
  const proto::HistoryPoint& b = h[h.size() - 1];
  if (b.unix_ms() <= a.unix_ms()) return std::nullopt;
  return Steady{absl::FromUnixMillis(a.unix_ms()), absl::FromUnixMillis(b.unix_ms()),
                static_cast<double>(b.iteration() - a.iteration()) * batch};
}

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
  // A deployed node's thread counts (the harness pins them low for tests).
  const int cores = NodeCores();
  flags.scheduler.push_back(absl::StrCat("--planner_threads=", cores));
  flags.ps.push_back(absl::StrCat("--threads=", cores));
  flags.workers.push_back(absl::StrCat("--check_threads=", std::clamp(cores / 4, 1, 4)));
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
  // Every 250 ms: reading ~100 threads' /proc files every 50 ms took about
  // 5% of a 2-core machine's CPU away from the processes measured.
  bench::ThreadCpuSampler threads(pids, absl::Milliseconds(250));
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> job = c.Submit(Spec(data, policy, workers, batch));
  if (!job.ok()) {
    out.error = std::string(job.status().message());
    return out;
  }
  const proto::JobStatus end = c.Watch(*job);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  threads.Stop();
  if (end.state() != proto::JOB_SUCCEEDED) {
    out.error = absl::StrCat("job ended ", proto::JobState_Name(end.state()), ": ", end.reason(),
                             " (the processes' logs are in ", c.dir(), ")");
    return out;
  }
  const double samples = static_cast<double>(end.progress().iteration()) * batch;
  out.samples_per_second = samples / seconds;
  for (const Phase& phase : kPhases) {
    out.phase_us.push_back((end.progress().*phase.ms)() * 1e3 / samples);
  }
  for (const Phase& phase : kSchedulerPhases) {
    out.scheduler_phase_us.push_back((end.progress().*phase.ms)() * 1e3 / samples);
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    const double us = (CpuSeconds(pids[i]) - before[i]) * 1e6 / samples;
    out.us_per_sample.push_back(us);
    out.total_us_per_sample += us;
  }
  const absl::StatusOr<proto::JobStatus> history = c.Status(*job, false, true);
  const std::optional<Steady> steady = history.ok() ? SteadyWindow(*history, batch) : std::nullopt;
  if (!steady.has_value()) {
    out.error = absl::StrCat("no steady state in the job's history (",
                             history.ok() ? "too few points" : history.status().ToString(), ")");
    return out;
  }
  out.steady_samples_per_second =
      steady->samples / absl::ToDoubleSeconds(steady->to - steady->from);
  out.busiest = threads.Busiest(steady->from, steady->to);
  for (const bench::BusiestThread& t : out.busiest) {
    out.busiest_us_per_sample.push_back(t.cpu_seconds * 1e6 / steady->samples);
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
  std::string row =
      absl::StrFormat("%-9s %10.0f %10.0f   %6.2f |", build.c_str(), o.samples_per_second,
                      o.steady_samples_per_second, o.total_us_per_sample);
  for (double us : o.us_per_sample) absl::StrAppendFormat(&row, " %6.2f", us);
  absl::StrAppend(&row, "\n          busiest thread, CPU us/sample (steady):");
  for (size_t i = 0; i < o.busiest.size(); ++i) {
    absl::StrAppendFormat(&row, " %s %.2f", o.busiest[i].name.c_str(), o.busiest_us_per_sample[i]);
  }
  absl::StrAppend(&row, "\n          workers' wall us/sample (summed over workers):");
  for (size_t i = 0; i < o.phase_us.size(); ++i) {
    absl::StrAppendFormat(&row, " %s %.2f", kPhases[i].name, o.phase_us[i]);
  }
  absl::StrAppend(&row, "\n          scheduler's wall us/sample (job thread):");
  for (size_t i = 0; i < o.scheduler_phase_us.size(); ++i) {
    absl::StrAppendFormat(&row, " %s %.2f", kSchedulerPhases[i].name, o.scheduler_phase_us[i]);
  }
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
  std::printf("pipeline_bench: threads as on a %d-core node\n", NodeCores());
  std::printf("%-9s %10s %10s   %6s | CPU us/sample: scheduler, PS 0..n, workers 0..n\n", "build",
              "samples/s", "steady", "total");
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
          const auto max_of = [](const std::vector<double>& v) {
            return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
          };
          std::printf(
              "ratio     samples/s %.2fx, steady %.2fx, CPU us/sample %.2fx, busiest thread "
              "%.2fx\n",
              current.samples_per_second / base.samples_per_second,
              current.steady_samples_per_second / base.steady_samples_per_second,
              current.total_us_per_sample / base.total_us_per_sample,
              max_of(current.busiest_us_per_sample) / max_of(base.busiest_us_per_sample));
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
