#pragma once
// Test harness for multi-process tests: starts a real binary, waits for the
// port file it writes, signals it and reaps it. Every wait has a deadline.

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::testing {

// Path of a binary in the test's runfiles, e.g. "ps_server/herald_ps".
std::string RunfilePath(const std::string& workspace_relative);

// A fresh directory under $TEST_TMPDIR for one test's files.
std::string MakeTestDir(const std::string& name);

// Not thread-safe. The destructor kills (SIGKILL) and reaps a child that is
// still running, so a failing test never leaves processes behind.
class ChildProcess {
 public:
  // Starts `binary` with `args`; stdout and stderr go to `log_path`.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::string& binary,
                                                             const std::vector<std::string>& args,
                                                             const std::string& log_path);
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

  // Waits until `port_file` holds a port number. Errors: DeadlineExceeded, or
  // FailedPrecondition if the process exits first (with its log tail).
  absl::StatusOr<int> WaitForPortFile(const std::string& port_file, int64_t timeout_ms);

  // Waits until `path` exists (a file the process creates to announce a
  // state). Errors: DeadlineExceeded, FailedPrecondition if it exits first.
  absl::Status WaitForFile(const std::string& path, int64_t timeout_ms);

  // Waits until the process's log holds `text` (a line it prints to
  // announce a state). Errors: DeadlineExceeded, FailedPrecondition if it
  // exits first.
  absl::Status WaitForLog(const std::string& text, int64_t timeout_ms);

  absl::Status Signal(int sig);

  // Waits for the process to exit. Returns its exit code, or 128 + signal if a
  // signal ended it. Errors: DeadlineExceeded.
  absl::StatusOr<int> WaitForExit(int64_t timeout_ms);

  // The last `max_bytes` of the log (for failure messages).
  std::string LogTail(size_t max_bytes = 2000) const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  // Reaps without blocking; true if the process has exited.
  bool TryReap();
  // Polls `done` until it holds (OK), the process exits first
  // (FailedPrecondition) or `timeout_ms` pass (DeadlineExceeded); `what`
  // names the awaited state in the errors ("creating FILE").
  absl::Status WaitUntil(const std::function<bool()>& done, const std::string& what,
                         int64_t timeout_ms);

  pid_t pid_;
  std::string log_path_;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace herald::testing
