#include "common/command_line.h"

#include "absl/flags/parse.h"
#include "absl/flags/usage_config.h"
#include "absl/synchronization/mutex.h"
#include "common/version.h"

namespace herald {

std::vector<std::string> ParseCommandLine(int argc, char** argv) {
#ifdef NDEBUG
  // Debian's Abseil is built without NDEBUG, so every Mutex::Lock would also
  // record lock order in one process-wide graph behind one global lock (a
  // few % of a whole job's CPU). Release builds (-c opt) do not; test builds
  // keep the check, which aborts on a lock-order inversion.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  // --version prints the version, the commit and the wire version.
  std::string program = argc > 0 ? argv[0] : "herald";
  program = program.substr(program.rfind('/') + 1);
  absl::FlagsUsageConfig usage;
  usage.version_string = [program] { return VersionLine(program) + "\n"; };
  absl::SetFlagsUsageConfig(usage);
  std::vector<std::string> renamed(argv, argv + argc);
  for (size_t i = 1; i < renamed.size(); ++i) {
    std::string& a = renamed[i];
    if (a == "--") break;
    if (a.size() < 3 || a[0] != '-' || a[1] != '-') continue;
    for (size_t j = 2; j < a.size() && a[j] != '='; ++j) {
      if (a[j] == '-') a[j] = '_';
    }
  }
  std::vector<char*> renamed_argv;
  for (std::string& a : renamed) renamed_argv.push_back(a.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(renamed_argv.size()), renamed_argv.data());
  return std::vector<std::string>(positional.begin() + 1, positional.end());
}

}  // namespace herald
