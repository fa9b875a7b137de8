#include "tests/harness/heraldctl.h"

#include <atomic>

#include "tests/harness/process.h"

namespace herald::testing {

CommandResult RunHeraldctl(const std::string& dir, const std::vector<std::string>& args) {
  static std::atomic<int> n{0};
  const std::string log = dir + "/heraldctl_" + std::to_string(n++) + ".log";
  auto child = ChildProcess::Start(RunfilePath("cli/heraldctl"), args, log);
  if (!child.ok()) return {};
  auto code = (*child)->WaitForExit(120000);
  return {code.ok() ? *code : -1, (*child)->LogTail(1000000)};
}

}  // namespace herald::testing
