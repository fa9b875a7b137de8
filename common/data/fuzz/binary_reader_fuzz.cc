// Fuzz target: the Herald binary reader, versions 1 and 2, and the stored
// schema's decoder. Invariants: no crash, no huge allocation, every
// returned block is internally consistent, and a schema that decodes
// validates and encodes back to a schema that decodes the same.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/data/binary_format.h"
#include "common/data/columns_codec.h"
#include "common/data/fuzz/fuzz_target.h"
#include "common/data/generator.h"

namespace herald::data {
namespace {

// A version 2 layout: two labels, a float dense value, a string and a
// multi-hot feature with per-id weights and its own pooling.
ColumnsSchema V2Columns() {
  ColumnsSchema s;
  for (const char* name : {"click", "rating", "price", "user", "tags"}) {
    s.columns.emplace_back();
    s.columns.back().name = name;
  }
  s.columns[0].role = s.columns[1].role = ColumnRole::kLabel;
  s.columns[1].label = LabelKind::kRegression;
  s.columns[2].role = ColumnRole::kDense;
  s.columns[2].transform = DenseTransform::kAffine;
  s.columns[2].scale = 3.0f;
  s.columns[3].role = s.columns[4].role = ColumnRole::kSparse;
  s.columns[3].ids = IdFormat::kString;
  s.columns[4].multi_hot_separator = '|';
  s.columns[4].table = "user";
  s.columns[4].weight_separator = ':';
  s.columns[4].pooling = FeaturePooling::kMean;
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace
}  // namespace herald::data

std::vector<std::string> FuzzSeeds() {
  using namespace herald::data;
  std::vector<std::string> seeds;
  {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("herald_fuzz_seed_v2_" + std::to_string(getpid()) + ".bin"))
                                 .string();
    SampleBlock b(V2Columns().Layout());
    for (int i = 0; i < 9; ++i) {
      b.labels.insert(b.labels.end(), {static_cast<float>(i % 2), 0.5f * i});
      b.dense.push_back(-1.5f * i);
      b.dense_missing.push_back(0);
      b.keys.push_back(0xABCDEF0123456789ull * (i + 1));
      b.offsets.push_back(b.keys.size());
      for (int k = 0; k < i % 3; ++k) b.keys.push_back(k);
      b.offsets.push_back(b.keys.size());
    }
    for (size_t k = 0; k < b.keys.size(); ++k) b.weights.push_back(0.5f * k - 1.0f);
    auto w = BinaryWriter::CreateWithColumns(path, V2Columns(), 4);
    (void)(*w)->Write(b);
    (void)(*w)->Close();
    seeds.push_back(Slurp(path));
    std::filesystem::remove(path);
    seeds.push_back(EncodeColumns(V2Columns()));
  }
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
    seeds.push_back(Slurp(path));
    std::filesystem::remove(path);
  }
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace herald::data;
  std::string input(reinterpret_cast<const char*>(data), size);
  if (absl::StatusOr<ColumnsSchema> decoded = DecodeColumns(input); decoded.ok()) {
    if (!ValidateColumns(*decoded).ok()) FuzzFail("a decoded schema does not validate");
    absl::StatusOr<ColumnsSchema> again = DecodeColumns(EncodeColumns(*decoded));
    if (!again.ok() || EncodeColumns(*again) != EncodeColumns(*decoded)) {
      FuzzFail("a decoded schema does not encode back to itself");
    }
  }
  for (const DataSchema layout : {kCriteoSchema, V2Columns().Layout()})
    for (OnMalformed policy : {OnMalformed::kSkip, OnMalformed::kFail}) {
      ReaderOptions o;
      o.on_malformed = policy;
      o.schema = layout;
      BinaryReader reader({"fuzz.bin"}, MemoryOpener({input}), o);
      SampleBlock block(layout);
      while (true) {
        auto n = reader.Read(7, &block);
        if (!n.ok() || *n == 0) break;
      }
      if (block.offsets.size() != block.size() * block.schema.num_sparse + 1 ||
          block.offsets.back() != block.keys.size() ||
          block.labels.size() != block.size() * block.schema.num_labels ||
          block.dense.size() != block.size() * block.schema.num_dense) {
        FuzzFail("inconsistent block from binary reader");
      }
    }
  return 0;
}
