// Fuzz target: the Criteo TSV reader. Invariants: no crash; the fast and the
// validating line parsers agree on every line (same verdict, same sample,
// same error); under kSkip every line is either a sample or a malformed record.

#include <algorithm>
#include <string>

#include "absl/strings/str_split.h"
#include "common/data/criteo_tsv.h"
#include "common/data/fuzz/fuzz_target.h"
#include "common/data/generator.h"

namespace herald::data {
namespace {

bool SameBlocks(const SampleBlock& a, const SampleBlock& b) {
  return a.labels == b.labels && a.dense == b.dense && a.dense_missing == b.dense_missing &&
         a.offsets == b.offsets && a.keys == b.keys;
}

void CheckLine(absl::string_view line, DataSchema schema) {
  SampleBlock fast(schema), slow(schema);
  absl::Status a = ParseCriteoLine(line, &fast);
  absl::Status b = ParseCriteoLineValidating(line, &slow);
  if (a != b) {
    FuzzFail("parsers disagree on verdict for: " + std::string(line) + " | " + a.ToString() +
             " | " + b.ToString());
  }
  if (!SameBlocks(fast, slow)) FuzzFail("parsers disagree on values for: " + std::string(line));
}

}  // namespace
}  // namespace herald::data

std::vector<std::string> FuzzSeeds() {
  using namespace herald::data;
  GeneratorOptions go;
  go.cardinality_scale = 0.001;
  SyntheticGenerator gen(go);
  SampleBlock b(gen.schema());
  gen.Generate(0, 8, &b);
  std::vector<std::string> seeds;
  for (size_t s = 0; s < b.size(); ++s) {
    std::string line;
    AppendCriteoLine(b, s, &line);
    seeds.push_back(line);
  }
  seeds.push_back("1\t5\t\t68fd1e64\t\tDEADbeef\n0\t-3\t7\ta,b,c\t\t1\r\n");
  seeds.push_back("0.5\t+1\t2\tffffffffffffffff\t0\t0\n");
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace herald::data;
  std::string input(reinterpret_cast<const char*>(data), size);
  for (DataSchema schema : {kCriteoSchema, DataSchema{2, 3}}) {
    for (absl::string_view line : absl::StrSplit(input, '\n')) CheckLine(line, schema);
    ReaderOptions o;
    o.schema = schema;
    o.buffer_bytes = 64;  // exercise buffer growth and refills
    CriteoTsvReader reader({"fuzz"}, MemoryOpener({input}), o);
    SampleBlock block(schema);
    size_t total = 0;
    while (true) {
      auto n = reader.Read(3, &block);
      if (!n.ok()) FuzzFail("kSkip reader returned an error: " + std::string(n.status().message()));
      if (*n == 0) break;
      total += *n;
    }
    size_t lines = std::count(input.begin(), input.end(), '\n') +
                   (!input.empty() && input.back() != '\n' ? 1 : 0);
    if (total + reader.malformed().count() != lines) FuzzFail("a line was lost or duplicated");
    if (block.size() != total || block.offsets.size() != total * schema.num_sparse + 1) {
      FuzzFail("block shape inconsistent");
    }
  }
  return 0;
}
