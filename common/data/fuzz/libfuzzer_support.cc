// FuzzFail for libFuzzer builds (libFuzzer provides main()).
#include <cstdio>
#include <cstdlib>

#include "common/data/fuzz/fuzz_target.h"

void FuzzFail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT VIOLATED: %s\n", what.c_str());
  std::abort();
}
