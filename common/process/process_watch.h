#pragma once
// Calls back when a watched process of this host exits, at once: the
// kernel reports it through a pidfd (pidfd_open, Linux 5.3), no polling of
// /proc. One thread of its own waits on every watched process.
//
// For a peer whose death no transport reports (UCX over shared memory):
// the caller watches the peer's ProcessIdentity and fails its connection
// when the callback runs. Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/process/process_identity.h"

namespace herald {

class ProcessWatch {
 public:
  ProcessWatch();
  // Stops the thread; no callback runs after it returns.
  ~ProcessWatch();
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // Calls `on_exit` once, on the watch's thread, when `process` has exited:
  // soon after this returns if it has already (or its pid now belongs to a
  // later process). Returns an id for Unwatch. `on_exit` must not call
  // Unwatch. Errors: InvalidArgument for a process of another host or
  // namespace (!SameHostAs this one); Unavailable when this kernel cannot
  // watch processes or /proc hides the process (the caller then needs
  // another way to notice a dead peer).
  absl::StatusOr<uint64_t> Watch(const ProcessIdentity& process, std::function<void()> on_exit);
  // No callback for `id` starts after this returns (one running may finish).
  void Unwatch(uint64_t id);

 private:
  struct Watched {
    int pidfd = -1;
    bool exited = false;  // known exited already: reported on the next pass
    std::function<void()> on_exit;
  };
  void Run();
  void Wake();

  const ProcessIdentity self_;
  int wake_fd_ = -1;  // an eventfd: the watch set changed or we are stopping
  absl::Mutex mu_;
  std::map<uint64_t, Watched> watched_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Serialises callbacks with Unwatch: held while one runs.
  absl::Mutex callback_mu_;
  std::thread thread_;
};

}  // namespace herald
