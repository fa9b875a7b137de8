#include "tests/harness/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status.h"

namespace herald::testing {

std::string RunfilePath(const std::string& workspace_relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr) return workspace_relative;
  return absl::StrCat(srcdir, "/", workspace ? workspace : "herald", "/", workspace_relative);
}

std::string MakeTestDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base ? base : "/tmp", "/", name, "_XXXXXX");
  if (mkdtemp(dir.data()) == nullptr) std::abort();
  return dir;
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::string& binary, const std::vector<std::string>& args, const std::string& log_path) {
  if (access(binary.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("not executable: ", binary));
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    // A test's blocked signals must not leak into the child.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

ChildProcess::~ChildProcess() {
  if (!exited_ && !TryReap()) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

bool ChildProcess::TryReap() {
  if (exited_) return true;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return exited_;
}

absl::Status ChildProcess::WaitUntil(const std::function<bool()>& done, const std::string& what,
                                     int64_t timeout_ms) {
  absl::Time deadline = absl::Now() + absl::Milliseconds(timeout_ms);
  while (absl::Now() < deadline) {
    if (done()) return absl::OkStatus();
    if (TryReap()) {
      return absl::FailedPreconditionError(absl::StrCat("process exited with code ", exit_code_,
                                                        " before ", what, "; log:\n", LogTail()));
    }
    absl::SleepFor(absl::Milliseconds(5));  // polling interval, bounded by the deadline
  }
  return absl::DeadlineExceededError(
      absl::StrCat("not ", what, " after ", timeout_ms, " ms; log:\n", LogTail()));
}

absl::StatusOr<int> ChildProcess::WaitForPortFile(const std::string& port_file,
                                                  int64_t timeout_ms) {
  int port = 0;
  HERALD_RETURN_IF_ERROR(WaitUntil(
      [&] {
        std::ifstream in(port_file);
        return in >> port && port > 0;
      },
      absl::StrCat("writing a port to ", port_file), timeout_ms));
  return port;
}

absl::Status ChildProcess::WaitForFile(const std::string& path, int64_t timeout_ms) {
  return WaitUntil([&] { return std::ifstream(path).good(); }, absl::StrCat("creating ", path),
                   timeout_ms);
}

absl::Status ChildProcess::WaitForLog(const std::string& text, int64_t timeout_ms) {
  return WaitUntil([&] { return LogTail(std::string::npos).find(text) != std::string::npos; },
                   absl::StrCat("logging \"", text, "\""), timeout_ms);
}

absl::Status ChildProcess::Signal(int sig) {
  if (exited_) return absl::FailedPreconditionError("process already exited");
  if (kill(pid_, sig) != 0) return absl::InternalError(std::strerror(errno));
  return absl::OkStatus();
}

absl::StatusOr<int> ChildProcess::WaitForExit(int64_t timeout_ms) {
  absl::Time deadline = absl::Now() + absl::Milliseconds(timeout_ms);
  while (!TryReap()) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("process ", pid_, " still running after ", timeout_ms, " ms"));
    }
    absl::SleepFor(absl::Milliseconds(5));  // polling interval, bounded by the deadline
  }
  return exit_code_;
}

std::string ChildProcess::LogTail(size_t max_bytes) const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

}  // namespace herald::testing
