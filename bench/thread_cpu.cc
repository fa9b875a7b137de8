#include "bench/thread_cpu.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace herald::bench {
namespace {

// One thread's stat line: its name and user + system CPU seconds.
bool ParseStat(const std::string& stat, ThreadCpu* out) {
  const size_t open = stat.find('(');
  const size_t close = stat.rfind(')');  // the name may hold spaces and parentheses
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  out->name = stat.substr(open + 1, close - open - 1);
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14 && !absl::SimpleAtod(field, &utime)) return false;
    if (i == 15 && !absl::SimpleAtod(field, &stime)) return false;
  }
  out->cpu_seconds = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return true;
}

}  // namespace

std::optional<ThreadCpu> ReadStat(const std::string& path) {
  // read(2), not a stream: a thread that ends while its file is read fails
  // the read (ESRCH), which libstdc++'s filebuf throws as an exception.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string stat;
  char buffer[1024];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) stat.append(buffer, n);
  close(fd);
  ThreadCpu cpu;
  if (!ParseStat(stat, &cpu)) return std::nullopt;
  return cpu;
}

std::map<pid_t, ThreadCpu> ReadThreadCpu(pid_t pid) {
  std::map<pid_t, ThreadCpu> out;
  std::error_code error;  // the process gone: no entries, no exception
  for (std::filesystem::directory_iterator it(absl::StrCat("/proc/", pid, "/task"), error), end;
       !error && it != end; it.increment(error)) {
    pid_t tid = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &tid)) continue;
    std::optional<ThreadCpu> cpu = ReadStat(it->path() / "stat");
    if (cpu.has_value()) out[tid] = std::move(*cpu);  // a thread gone meanwhile: skipped
  }
  return out;
}

ThreadCpuSampler::ThreadCpuSampler(std::vector<pid_t> pids, absl::Duration period)
    : pids_(std::move(pids)), thread_([this, period] { Run(period); }) {}

ThreadCpuSampler::~ThreadCpuSampler() { Stop(); }

void ThreadCpuSampler::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void ThreadCpuSampler::Run(absl::Duration period) {
  do {
    Sample sample;
    sample.at = absl::Now();
    for (pid_t pid : pids_) sample.threads.push_back(ReadThreadCpu(pid));
    absl::MutexLock lock(&mu_);
    samples_.push_back(std::move(sample));
  } while (!stop_.WaitForNotificationWithTimeout(period));
}

std::vector<std::map<pid_t, ThreadCpu>> ThreadCpuSampler::At(absl::Time at) {
  std::vector<std::map<pid_t, ThreadCpu>> out(pids_.size());
  absl::MutexLock lock(&mu_);
  for (const Sample& sample : samples_) {
    if (sample.at > at) break;
    for (size_t p = 0; p < pids_.size(); ++p) {
      for (const auto& [tid, cpu] : sample.threads[p]) out[p][tid] = cpu;
    }
  }
  return out;
}

std::vector<BusiestThread> ThreadCpuSampler::Busiest(absl::Time from, absl::Time to) {
  const std::vector<std::map<pid_t, ThreadCpu>> start = At(from);
  const std::vector<std::map<pid_t, ThreadCpu>> end = At(to);
  std::vector<BusiestThread> out(pids_.size());
  for (size_t p = 0; p < pids_.size(); ++p) {
    for (const auto& [tid, cpu] : end[p]) {
      const auto before = start[p].find(tid);
      const double used =
          cpu.cpu_seconds - (before == start[p].end() ? 0 : before->second.cpu_seconds);
      if (used > out[p].cpu_seconds) out[p] = {cpu.name, used};
    }
  }
  return out;
}

}  // namespace herald::bench
