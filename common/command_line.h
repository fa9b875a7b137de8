#pragma once
// absl::ParseCommandLine for every herald binary, accepting dashes in flag
// names ("--token-file=F" is "--token_file=F").

#include <string>
#include <vector>

namespace herald {

// Parses the flags (exits on an unknown flag or --help, like absl; prints
// VersionLine and exits 0 on --version) and returns the positional
// arguments, without the program name. Called first by every herald
// binary; in release builds it also turns off Abseil's lock-order tracking.
std::vector<std::string> ParseCommandLine(int argc, char** argv);

}  // namespace herald
