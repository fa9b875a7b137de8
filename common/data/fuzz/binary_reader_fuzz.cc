// Fuzz target: the Herald binary reader. Invariants: no crash, no huge
// allocation, and every returned block is internally consistent.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/data/binary_format.h"
#include "common/data/fuzz/fuzz_target.h"
#include "common/data/generator.h"

std::vector<std::string> FuzzSeeds() {
  using namespace herald::data;
  std::vector<std::string> seeds;
  for (int variant = 0; variant < 2; ++variant) {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("herald_fuzz_seed_" + std::to_string(getpid()) + ".bin"))
                           .string();
    GeneratorOptions go;
    go.cardinality_scale = 0.001;
    SyntheticGenerator gen(go);
    SampleBlock b(gen.schema());
    gen.Generate(0, 12, &b);
    if (variant == 1) b.keys[0] = uint64_t{1} << 40;  // wide-key encoding
    auto w = BinaryWriter::Create(path, gen.schema(), 5);
    (void)(*w)->Write(b);
    (void)(*w)->Close();
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    seeds.push_back(ss.str());
    std::filesystem::remove(path);
  }
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace herald::data;
  std::string input(reinterpret_cast<const char*>(data), size);
  for (OnMalformed policy : {OnMalformed::kSkip, OnMalformed::kFail}) {
    ReaderOptions o;
    o.on_malformed = policy;
    BinaryReader reader({"fuzz.bin"}, MemoryOpener({input}), o);
    SampleBlock block;
    while (true) {
      auto n = reader.Read(7, &block);
      if (!n.ok() || *n == 0) break;
    }
    if (block.offsets.size() != block.size() * block.schema.num_sparse + 1 ||
        block.offsets.back() != block.keys.size()) {
      FuzzFail("inconsistent block from binary reader");
    }
  }
  return 0;
}
