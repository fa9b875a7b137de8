// Stand-alone main for fuzz targets when libFuzzer is not linked: replays the
// files given as arguments, or runs --iterations random mutations of the
// target's seeds (deterministic for a given --seed).

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/data/fuzz/fuzz_target.h"
#include "common/rng.h"

namespace {

std::string Mutate(const std::string& in, const std::vector<std::string>& seeds,
                   herald::CounterRng& rng) {
  std::string s = in;
  int edits = 1 + static_cast<int>(rng.NextBelow(8));
  for (int e = 0; e < edits; ++e) {
    size_t n = s.size();
    switch (rng.NextBelow(7)) {
      case 0:  // flip a bit
        if (n) s[rng.NextBelow(n)] ^= static_cast<char>(1u << rng.NextBelow(8));
        break;
      case 1:  // set a byte to an interesting value
        if (n) s[rng.NextBelow(n)] = "\t\n,\r0f-x\xff"[rng.NextBelow(9)];
        break;
      case 2:  // delete a range
        if (n) {
          size_t at = rng.NextBelow(n);
          s.erase(at, rng.NextBelow(std::min<size_t>(n - at, 64)) + 1);
        }
        break;
      case 3:  // insert random bytes
        s.insert(rng.NextBelow(n + 1),
                 std::string(1 + rng.NextBelow(8), static_cast<char>(rng.NextBelow(256))));
        break;
      case 4:  // truncate
        if (n) s.resize(rng.NextBelow(n));
        break;
      case 5: {  // splice another seed
        const std::string& o = seeds[rng.NextBelow(seeds.size())];
        if (!o.empty()) s.insert(rng.NextBelow(n + 1), o.substr(rng.NextBelow(o.size())));
        break;
      }
      case 6:  // duplicate a range
        if (n) {
          size_t at = rng.NextBelow(n);
          s.insert(rng.NextBelow(n + 1), s.substr(at, rng.NextBelow(64)));
        }
        break;
    }
  }
  return s;
}

}  // namespace

void FuzzFail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT VIOLATED: %s\n", what.c_str());
  std::abort();
}

int main(int argc, char** argv) {
  long iterations = 10000;
  unsigned long long seed = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--iterations=", 0) == 0) {
      iterations = std::atol(a.c_str() + 13);
    } else if (a.rfind("--seed=", 0) == 0) {
      seed = std::strtoull(a.c_str() + 7, nullptr, 10);
    } else {
      files.push_back(a);
    }
  }
  auto run = [](const std::string& s) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  if (!files.empty()) {
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      run(ss.str());
    }
    std::printf("replayed %zu inputs\n", files.size());
    return 0;
  }
  std::vector<std::string> seeds = FuzzSeeds();
  for (const auto& s : seeds) run(s);
  herald::CounterRng rng(seed, 0xF022, 0);
  for (long i = 0; i < iterations; ++i) {
    run(Mutate(seeds[rng.NextBelow(seeds.size())], seeds, rng));
  }
  std::printf("ran %zu seeds and %ld mutated inputs without a crash or invariant violation\n",
              seeds.size(), iterations);
  return 0;
}
