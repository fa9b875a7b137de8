#pragma once
// The CPU time of every thread of a few processes, sampled while they run
// (/proc/PID/task/TID/stat), so that a benchmark can name each process's
// busiest thread over a window of its run: the thread whose CPU bounds the
// process's throughput where cores are free. Threads that start during the
// window count from 0; threads that end in it keep their last sample (up to
// one period of their CPU is lost).

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace herald::bench {

struct ThreadCpu {
  std::string name;        // the thread's name (comm)
  double cpu_seconds = 0;  // user + system
};

// A /proc stat file's name and user + system CPU seconds: a process's
// (/proc/PID/stat: every thread's, ended ones included) or a thread's
// (/proc/PID/task/TID/stat). Nothing if unreadable.
std::optional<ThreadCpu> ReadStat(const std::string& path);

// Every thread of `pid` now, by thread id; empty if the process is gone.
std::map<pid_t, ThreadCpu> ReadThreadCpu(pid_t pid);

// One process's busiest thread over a window.
struct BusiestThread {
  std::string name;
  double cpu_seconds = 0;
};

class ThreadCpuSampler {
 public:
  // Samples every thread of `pids` every `period` on a thread of its own
  // until Stop() (or destruction).
  ThreadCpuSampler(std::vector<pid_t> pids, absl::Duration period);
  ~ThreadCpuSampler();
  void Stop();

  // Per process (in the order of `pids`): the thread with the most CPU
  // between the samples nearest `from` and `to` (the last taken at or
  // before each).
  std::vector<BusiestThread> Busiest(absl::Time from, absl::Time to);

 private:
  struct Sample {
    absl::Time at;
    std::vector<std::map<pid_t, ThreadCpu>> threads;  // per process
  };
  void Run(absl::Duration period);
  // Per process, every thread seen at or before `at` with its last sample.
  std::vector<std::map<pid_t, ThreadCpu>> At(absl::Time at);

  const std::vector<pid_t> pids_;
  absl::Notification stop_;
  absl::Mutex mu_;
  std::vector<Sample> samples_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace herald::bench
