// Fuzz target: the schema-driven CSV reader. Invariants: no crash; under
// kSkip every line after the header is either a sample or a malformed
// record, or the header is refused whole (then nothing is read); the block
// stays consistent; a quoted split never yields views outside its line or
// scratch; the single-pass fast path (csv_fast_path.h), whenever it takes
// a line, appends exactly what the validating parser does, and otherwise
// leaves the block unchanged (with the fuzz schema and Criteo's).

#include <algorithm>
#include <string>

#include "common/data/csv_reader.h"
#include "common/data/fuzz/fuzz_target.h"
#include "common/data/test_util.h"

namespace herald::data {
namespace {

ColumnSchema Column(const char* name, ColumnRole role) {
  ColumnSchema c;
  c.name = name;
  c.role = role;
  return c;
}

// `weighted`: column g carries per-id weights after ':'.
ColumnsSchema FuzzSchema(bool header, bool weighted = false) {
  ColumnsSchema s;
  s.header = header;
  s.columns.push_back(Column("y", ColumnRole::kLabel));
  ColumnSchema r = Column("r", ColumnRole::kLabel);
  r.label = LabelKind::kRegression;
  s.columns.push_back(r);
  ColumnSchema d = Column("d", ColumnRole::kDense);
  d.transform = DenseTransform::kAffine;
  d.scale = 2.0f;
  s.columns.push_back(d);
  ColumnSchema u = Column("u", ColumnRole::kSparse);
  u.ids = IdFormat::kString;
  s.columns.push_back(u);
  ColumnSchema i = Column("i", ColumnRole::kSparse);
  i.ids = IdFormat::kDecimal;
  i.multi_hot_separator = '|';
  s.columns.push_back(i);
  ColumnSchema g = Column("g", ColumnRole::kSparse);
  g.multi_hot_separator = ';';
  if (weighted) g.weight_separator = ':';
  s.columns.push_back(g);
  s.columns.push_back(Column("x", ColumnRole::kIgnore));
  return s;
}

// Each line of `input` through the fast path and the validating parser.
void CompareParsers(const std::string& input, const ColumnsSchema& schema) {
  const FieldMap map = SchemaOrder(schema);
  CsvFastPath fast(schema, map);
  SampleBlock by_fast(schema.Layout()), by_slow(schema.Layout());
  std::vector<absl::string_view> fields;
  std::string scratch;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    const absl::string_view line(input.data() + start, end - start);
    start = end + 1;
    const SampleBlock before = by_fast;
    if (!fast.Parse(line, &by_fast)) {
      if (!testing::DiffBlocks(before, by_fast).empty())
        FuzzFail("a declined line changed the block");
      continue;
    }
    absl::Status s = SplitFields(line, schema.separator, &fields, &scratch);
    if (s.ok()) s = ParseFields(schema, map, fields, &by_slow);
    if (!s.ok())
      FuzzFail("the fast path took a line the parser refuses: " + std::string(s.message()));
    const std::string diff = testing::DiffBlocks(by_fast, by_slow);
    if (!diff.empty()) FuzzFail("the fast path and the parser differ: " + diff);
  }
}

}  // namespace
}  // namespace herald::data

std::vector<std::string> FuzzSeeds() {
  return {
      "y,r,d,u,i,g,x\n1,2.5,3,alice,7|8,ff;a0,z\n0,-1,,\"b,ob\",,,\n",
      "g,x,u,i,d,r,y\r\nab,\"q\"\"q\",u1,18446744073709551615,1e3,0,0.5\r\n",
      "1,2,3,u,4,5,6\n0,0,0,,,,\n",
      "1\t5\t\t-3\ta1b2\t\tffffffffffffffff\n0\t0.5\t2\t1\t0\t9\t\n",
      "y,r,d,u,i,g,x\n1,2,3,u,4,ab:0.5;c;d:-2e3,z\n0,0,0,,,e:nan;f:,\n",
  };
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace herald::data;
  std::string input(reinterpret_cast<const char*>(data), size);
  CompareParsers(input, FuzzSchema(false));
  ColumnsSchema criteo = CriteoColumns(3, 3);
  CompareParsers(input, criteo);
  for (int variant = 0; variant < 4; ++variant) {
    const bool header = variant % 2 == 0, weighted = variant >= 2;
    ReaderOptions o;
    o.buffer_bytes = 64;  // exercise buffer growth and refills
    CsvReader reader({"fuzz"}, MemoryOpener({input}), FuzzSchema(header, weighted), o);
    SampleBlock block(reader.schema());
    size_t total = 0;
    bool refused = false;
    while (true) {
      auto n = reader.Read(3, &block);
      if (!n.ok()) {
        // Only a header that does not match the schema ends a kSkip read.
        if (!header || n.status().message().find("fuzz:1:") == std::string::npos) {
          FuzzFail("kSkip reader returned an error: " + std::string(n.status().message()));
        }
        refused = true;
        break;
      }
      if (*n == 0) break;
      total += *n;
    }
    const size_t layout_sparse = block.schema.num_sparse;
    if (block.size() != total || block.offsets.size() != total * layout_sparse + 1 ||
        block.dense.size() != total * block.schema.num_dense ||
        block.labels.size() != total * block.schema.num_labels ||
        block.offsets.back() != block.keys.size() ||
        block.weights.size() != (weighted ? block.keys.size() : 0)) {
      FuzzFail("block shape inconsistent");
    }
    if (refused) continue;
    size_t lines = std::count(input.begin(), input.end(), '\n') +
                   (!input.empty() && input.back() != '\n' ? 1 : 0);
    if (header && lines > 0) --lines;
    if (total + reader.malformed().count() != lines) FuzzFail("a line was lost or duplicated");
  }
  return 0;
}
