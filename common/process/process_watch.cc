#include "common/process/process_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/thread_name.h"

namespace herald {
namespace {

int PidfdOpen(int32_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

ProcessWatch::ProcessWatch() : self_(ProcessIdentity::Self()) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] {
    NameThisThread("process-watch");
    Run();
  });
}

ProcessWatch::~ProcessWatch() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Wake();
  thread_.join();
  for (auto& [id, w] : watched_) {
    if (w.pidfd >= 0) ::close(w.pidfd);
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

absl::StatusOr<uint64_t> ProcessWatch::Watch(const ProcessIdentity& process,
                                             std::function<void()> on_exit) {
  if (!self_.SameHostAs(process)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "process ", process.Encode(), " is not on this host and namespace (", self_.Encode(), ")"));
  }
  if (wake_fd_ < 0) return absl::UnavailableError("process watch: no eventfd");
  Watched w;
  w.on_exit = std::move(on_exit);
  w.pidfd = PidfdOpen(process.pid);
  if (w.pidfd < 0) {
    if (errno != ESRCH) {
      return absl::UnavailableError(
          absl::StrCat("pidfd_open(", process.pid, "): ", std::strerror(errno)));
    }
    w.exited = true;  // no such process
  } else if (const std::optional<uint64_t> start = ProcessStartTime(process.pid); !start) {
    // A live pid whose /proc entry this process cannot read (hidepid):
    // it cannot tell whether the pid is still the watched process's.
    ::close(w.pidfd);
    return absl::UnavailableError(
        absl::StrCat("process watch: /proc/", process.pid, "/stat cannot be read"));
  } else if (*start != process.start_time) {
    // The pid belongs to a later process: the watched one is gone.
    w.exited = true;
  }
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  watched_.emplace(id, std::move(w));
  Wake();
  return id;
}

void ProcessWatch::Unwatch(uint64_t id) {
  absl::MutexLock callbacks(&callback_mu_);  // waits for a running callback
  absl::MutexLock lock(&mu_);
  auto it = watched_.find(id);
  if (it == watched_.end()) return;
  if (it->second.pidfd >= 0) ::close(it->second.pidfd);
  watched_.erase(it);
  Wake();
}

void ProcessWatch::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
}

void ProcessWatch::Run() {
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    std::vector<uint64_t> ids{0};
    std::vector<uint64_t> exited;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      for (const auto& [id, w] : watched_) {
        if (w.exited) {
          exited.push_back(id);
        } else {
          fds.push_back({w.pidfd, POLLIN, 0});
          ids.push_back(id);
        }
      }
    }
    if (exited.empty()) {
      // A pidfd turns readable when its process exits; the eventfd when the
      // watch set changes.
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
      if (fds[0].revents != 0) {
        uint64_t count;
        (void)!::read(wake_fd_, &count, sizeof(count));
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) exited.push_back(ids[i]);
      }
    }
    for (uint64_t id : exited) {
      absl::MutexLock callbacks(&callback_mu_);
      std::function<void()> on_exit;
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) return;
        auto it = watched_.find(id);
        if (it == watched_.end()) continue;  // unwatched meanwhile
        if (it->second.pidfd >= 0) ::close(it->second.pidfd);
        on_exit = std::move(it->second.on_exit);
        watched_.erase(it);
      }
      on_exit();
    }
  }
}

}  // namespace herald
