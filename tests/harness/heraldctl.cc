#include "tests/harness/heraldctl.h"

#include <atomic>

#include "absl/strings/numbers.h"
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

double JsonNumber(const std::string& json, const std::string& field) {
  const std::string tag = "\"" + field + "\":";
  const size_t at = json.find(tag);
  if (at == std::string::npos) return -1;
  const size_t begin = at + tag.size();
  const size_t end = json.find_first_of(",}", begin);
  double value = -1;
  if (!absl::SimpleAtod(json.substr(begin, end - begin), &value)) return -1;
  return value;
}

std::string JsonString(const std::string& json, const std::string& field) {
  const std::string tag = "\"" + field + "\":\"";
  const size_t at = json.find(tag);
  if (at == std::string::npos) return "";
  const size_t begin = at + tag.size();
  return json.substr(begin, json.find('"', begin) - begin);
}

}  // namespace herald::testing
