#include "tests/harness/heraldctl.h"

#include <atomic>

#include "tests/harness/process.h"

namespace herald::testing {

CommandResult RunHeraldctl(const std::string& dir, const std::vector<std::string>& args,
                           const std::vector<std::string>& through) {
  static std::atomic<int> n{0};
  const std::string log = dir + "/heraldctl_" + std::to_string(n++) + ".log";
  const std::string heraldctl = RunfilePath("cli/heraldctl");
  std::vector<std::string> argv(through.empty() ? through.begin() : through.begin() + 1,
                                through.end());
  if (!through.empty()) argv.push_back(heraldctl);
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = ChildProcess::Start(through.empty() ? heraldctl : through[0], argv, log);
  if (!child.ok()) return {};
  auto code = (*child)->WaitForExit(120000);
  return {code.ok() ? *code : -1, (*child)->LogTail(1000000)};
}

}  // namespace herald::testing
