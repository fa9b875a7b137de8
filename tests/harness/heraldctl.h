#pragma once
// Runs `heraldctl` (a data dependency of the test) to completion, as a user would.

#include <string>
#include <vector>

namespace herald::testing {

struct CommandResult {
  int code = -1;       // exit code; -1 when it did not start or exit in 120 s
  std::string output;  // stdout + stderr (the last 1 MB)
};

// Writes the output to a numbered log file in `dir`.
CommandResult RunHeraldctl(const std::string& dir, const std::vector<std::string>& args);

}  // namespace herald::testing
