#pragma once
// Runs `heraldctl` (a data dependency of the test) to completion, as a user would.

#include <string>
#include <vector>

namespace herald::testing {

struct CommandResult {
  int code = -1;       // exit code; -1 when it did not start or exit in 120 s
  std::string output;  // stdout + stderr (the last 1 MB)
};

// Writes the output to a numbered log file in `dir`. `through`: a command
// that runs heraldctl (e.g. {lab.sh, "exec", "1"} for a lab host); empty:
// heraldctl itself.
CommandResult RunHeraldctl(const std::string& dir, const std::vector<std::string>& args,
                           const std::vector<std::string>& through = {});

// The number after "\"field\":" in a one-line JSON object (-1: none).
double JsonNumber(const std::string& json, const std::string& field);
// The string after "\"field\":\"" in a one-line JSON object ("": none).
std::string JsonString(const std::string& json, const std::string& field);

}  // namespace herald::testing
