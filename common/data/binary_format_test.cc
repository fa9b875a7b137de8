#include "common/data/binary_format.h"

#include "absl/strings/match.h"
#include "common/data/columns_codec.h"
#include "common/data/criteo_tsv.h"
#include "common/data/generator.h"
#include "common/data/open_reader.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

using testing::DiffBlocks;
using testing::ReadFileOrDie;
using testing::TempDir;
using testing::WriteFile;

SampleBlock Generated(size_t n) {
  GeneratorOptions go;
  go.cardinality_scale = 0.001;
  SyntheticGenerator gen(go);
  SampleBlock b(gen.schema());
  gen.Generate(0, n, &b);
  return b;
}

absl::StatusOr<SampleBlock> ReadAll(const std::string& path, OnMalformed policy,
                                    uint64_t* malformed = nullptr) {
  ReaderOptions o;
  o.on_malformed = policy;
  auto reader = BinaryReader::Open({path}, o);
  if (!reader.ok()) return reader.status();
  SampleBlock out;
  while (true) {
    auto n = (*reader)->Read(777, &out);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
  }
  if (malformed) *malformed = (*reader)->malformed().count();
  return out;
}

void WriteBlocks(const std::string& path, const SampleBlock& b, size_t per_block) {
  auto w = BinaryWriter::Create(path, b.schema, per_block);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write(b).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

TEST(BinaryFormat, RoundTripsGeneratedSamples) {
  TempDir dir;
  SampleBlock b = Generated(3000);
  WriteBlocks(dir.File("a.bin"), b, 1000);
  auto back = ReadAll(dir.File("a.bin"), OnMalformed::kFail);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DiffBlocks(b, *back), "");
  auto schema = ReadBinarySchema(dir.File("a.bin"));
  ASSERT_TRUE(schema.ok());
  EXPECT_EQ(schema->num_sparse, 26u);
}

TEST(BinaryFormat, WideKeysAndLongBagsUseWideEncoding) {
  TempDir dir;
  SampleBlock b(DataSchema{1, 2});
  b.labels = {1.0f, 0.0f};
  b.dense = {7, -7};
  b.dense_missing = {0, 1};
  b.offsets = {0, 300, 301, 301, 302};
  for (int i = 0; i < 300; ++i) b.keys.push_back(i);
  b.keys.push_back(~uint64_t{0});
  b.keys.push_back(uint64_t{1} << 40);
  WriteBlocks(dir.File("w.bin"), b, 10);
  ReaderOptions o;
  o.schema = b.schema;
  auto reader = BinaryReader::Open({dir.File("w.bin")}, o);
  ASSERT_TRUE(reader.ok());
  SampleBlock out(b.schema);
  EXPECT_EQ(*(*reader)->Read(10, &out), 2u);
  EXPECT_EQ(DiffBlocks(b, out), "");
}

TEST(BinaryFormat, TruncatedFileIsDataLossNamingTheFile) {
  TempDir dir;
  WriteBlocks(dir.File("t.bin"), Generated(2000), 500);
  std::string bytes = ReadFileOrDie(dir.File("t.bin"));
  // Cut within the samples (the key statistics after the end marker are
  // not the samples' reader's: binary_key_stats_test).
  WriteFile(dir.File("cut.bin"), bytes.substr(0, bytes.size() / 2));
  for (OnMalformed policy : {OnMalformed::kSkip, OnMalformed::kFail}) {
    auto r = ReadAll(dir.File("cut.bin"), policy);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find("cut.bin"), std::string::npos);
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status();
  }
}

TEST(BinaryFormat, MissingEndMarkerIsTruncation) {
  TempDir dir;
  {
    auto w = BinaryWriter::Create(dir.File("open.bin"), kCriteoSchema, 100);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Write(Generated(100)).ok());  // one full block flushed, no Close()
  }
  auto r = ReadAll(dir.File("open.bin"), OnMalformed::kSkip);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("truncated file: block header"), std::string::npos)
      << r.status();
}

TEST(BinaryFormat, CorruptPayloadIsSkippedOrFailsByPolicy) {
  TempDir dir;
  SampleBlock b = Generated(300);
  WriteBlocks(dir.File("c.bin"), b, 100);
  std::string bytes = ReadFileOrDie(dir.File("c.bin"));
  // Flip a byte inside the first block's payload (after the two headers).
  bytes[kBinaryHeaderBytes + kBinaryBlockHeaderBytes + 10] ^= 0x5A;
  WriteFile(dir.File("c.bin"), bytes);

  uint64_t malformed = 0;
  auto skipped = ReadAll(dir.File("c.bin"), OnMalformed::kSkip, &malformed);
  ASSERT_TRUE(skipped.ok()) << skipped.status();
  EXPECT_EQ(skipped->size(), 200u);
  EXPECT_EQ(malformed, 1u);

  auto failed = ReadAll(dir.File("c.bin"), OnMalformed::kFail);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(failed.status().message().find(
                "c.bin:1: block 0 at offset 32 (100 samples): checksum mismatch"),
            std::string::npos)
      << failed.status();
}

// Reads everything `reader` has left.
SampleBlock ReadRest(SampleReader& reader) {
  SampleBlock out;
  while (true) {
    auto n = reader.Read(5, &out);
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok() || *n == 0) return out;
  }
}

// A position taken after any number of samples (inside a block, at a
// block's end, between files, past a damaged block skipped) and given to
// a fresh reader of the same files reads the same samples from there on.
TEST(BinaryFormat, APositionResumesAFreshReaderAtTheSameSample) {
  TempDir dir;
  SampleBlock b = Generated(17);
  SampleBlock first(b.schema), second(b.schema);
  for (size_t s = 0; s < 17; ++s) (s < 10 ? first : second).AppendFrom(b, s);
  WriteBlocks(dir.File("1.bin"), first, 3);
  WriteBlocks(dir.File("2.bin"), second, 3);
  std::string bytes = ReadFileOrDie(dir.File("2.bin"));
  bytes[kBinaryHeaderBytes + kBinaryBlockHeaderBytes + 10] ^= 0x5A;  // 2.bin's first block
  WriteFile(dir.File("2.bin"), bytes);
  const std::vector<std::string> files = {dir.File("1.bin"), dir.File("2.bin")};
  for (size_t taken = 0; taken <= 14; ++taken) {
    auto reader = BinaryReader::Open(files, ReaderOptions{b.schema});
    ASSERT_TRUE(reader.ok());
    SampleBlock head(b.schema);
    if (taken > 0) {
      ASSERT_EQ(*(*reader)->Read(taken, &head), taken);
    }
    auto position = (*reader)->Position();
    ASSERT_TRUE(position.ok()) << position.status();
    auto resumed = BinaryReader::Open(files, ReaderOptions{b.schema});
    ASSERT_TRUE(resumed.ok());
    absl::Status s = (*resumed)->Seek(*position);
    ASSERT_TRUE(s.ok()) << "after " << taken << ": " << s;
    EXPECT_EQ(DiffBlocks(ReadRest(**reader), ReadRest(**resumed)), "") << "after " << taken;
  }
  auto fresh = BinaryReader::Open(files, ReaderOptions{b.schema});
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->Seek({1, 5, 32, 0, 0, 0}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*fresh)->Seek({7}).code(), absl::StatusCode::kInvalidArgument);
  // A block that is no longer the one the position was taken in.
  EXPECT_EQ((*fresh)->Seek({1, 1, 32, 0, 0, 1}).code(), absl::StatusCode::kDataLoss);
}

TEST(BinaryFormat, RejectsForeignFilesAndWrongSchema) {
  TempDir dir;
  WriteFile(dir.File("x.bin"), std::string(64, 'x'));
  auto r = ReadAll(dir.File("x.bin"), OnMalformed::kSkip);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not a Herald binary file"), std::string::npos);

  SampleBlock small(DataSchema{1, 1});
  small.labels = {1};
  small.dense = {1};
  small.dense_missing = {0};
  small.offsets = {0, 1};
  small.keys = {5};
  WriteBlocks(dir.File("s.bin"), small, 10);
  auto wrong = ReadAll(dir.File("s.bin"), OnMalformed::kSkip);  // reader expects Criteo
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("1 dense and 1 categorical"), std::string::npos);
}

// Two labels (one regression), float dense values, 64-bit and multi-hot
// keys: what only version 2 holds.
ColumnsSchema TwoLabels() {
  ColumnsSchema s;
  auto add = [&](const char* name, ColumnRole role) -> ColumnSchema& {
    s.columns.emplace_back();
    s.columns.back().name = name;
    s.columns.back().role = role;
    return s.columns.back();
  };
  add("click", ColumnRole::kLabel);
  add("rating", ColumnRole::kLabel).label = LabelKind::kRegression;
  ColumnSchema& price = add("price", ColumnRole::kDense);
  price.transform = DenseTransform::kAffine;
  price.scale = 0.5f;
  add("age", ColumnRole::kDense).missing_value = 30.0f;
  add("user", ColumnRole::kSparse).ids = IdFormat::kString;
  ColumnSchema& genres = add("genres", ColumnRole::kSparse);
  genres.multi_hot_separator = '|';
  genres.table = "tags";
  add("note", ColumnRole::kIgnore);
  return s;
}

SampleBlock TwoLabelSamples(size_t n) {
  SampleBlock b(TwoLabels().Layout());
  for (size_t i = 0; i < n; ++i) {
    b.labels.push_back(i % 2);
    b.labels.push_back(0.25f * i - 3.0f);
    b.dense.push_back(0.1f * i);
    b.dense.push_back(i % 5 == 0 ? 30.0f : 1e-3f * i);
    b.dense_missing.push_back(i % 5 == 0 ? 2u : 0u);
    b.keys.push_back(0xF00D000000000000ull + i);
    b.offsets.push_back(b.keys.size());
    for (size_t k = 0; k < i % 4; ++k) b.keys.push_back(k);
    b.offsets.push_back(b.keys.size());
  }
  return b;
}

TEST(BinaryFormatV2, StoresTheSchemaLabelsAndFloatDenseValues) {
  TempDir dir;
  const SampleBlock b = TwoLabelSamples(2500);
  auto w = BinaryWriter::CreateWithColumns(dir.File("a.bin"), TwoLabels(), 1000);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Write(b).ok());
  ASSERT_TRUE((*w)->Close().ok());
  ReaderOptions o;
  o.on_malformed = OnMalformed::kFail;
  o.schema = TwoLabels().Layout();
  auto reader = BinaryReader::Open({dir.File("a.bin")}, o);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_NE((*reader)->columns(), nullptr);
  EXPECT_EQ(EncodeColumns(*(*reader)->columns()), EncodeColumns(TwoLabels()));
  SampleBlock back(o.schema);
  while (*(*reader)->Read(999, &back) > 0) {
  }
  EXPECT_EQ(DiffBlocks(b, back), "");
  // The header's layout, and auto-detection through OpenReader.
  auto header = ReadBinaryHeader(dir.File("a.bin"));
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->version, 2u);
  EXPECT_EQ(header->schema, (DataSchema{2, 2, 2}));
  auto opened = OpenReader(FileFormat::kAuto, {dir.File("a.bin")}, ReaderOptions());
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ((*opened)->schema(), (DataSchema{2, 2, 2}));
  ASSERT_NE((*opened)->columns(), nullptr);
  EXPECT_EQ((*opened)->columns()->columns[5].table, "tags");
}

TEST(BinaryFormatV2, StoresPerIdWeights) {
  ColumnsSchema columns = TwoLabels();
  columns.columns[5].weight_separator = ':';  // genres
  SampleBlock b(columns.Layout());
  ASSERT_TRUE(b.schema.weighted);
  const SampleBlock plain = TwoLabelSamples(300);
  b.labels = plain.labels;
  b.dense = plain.dense;
  b.dense_missing = plain.dense_missing;
  b.offsets = plain.offsets;
  b.keys = plain.keys;
  for (size_t k = 0; k < b.keys.size(); ++k) b.weights.push_back(0.25f * k - 7.0f);
  TempDir dir;
  auto w = BinaryWriter::CreateWithColumns(dir.File("w.bin"), columns, 128);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Write(b).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto reader = OpenReader(FileFormat::kAuto, {dir.File("w.bin")}, ReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->schema().weighted);
  EXPECT_EQ((*reader)->columns()->columns[5].weight_separator, ':');
  SampleBlock back((*reader)->schema());
  while (*(*reader)->Read(77, &back) > 0) {
  }
  EXPECT_EQ(DiffBlocks(b, back), "");
  EXPECT_EQ(back.weights, b.weights);
}

TEST(ColumnsCodec, KeepsWeightsAndPoolingAndReadsSchemasWrittenWithoutPooling) {
  ColumnsSchema columns = TwoLabels();
  columns.columns[5].weight_separator = ':';
  columns.columns[5].pooling = FeaturePooling::kSqrtN;
  const std::string bytes = EncodeColumns(columns);
  absl::StatusOr<ColumnsSchema> back = DecodeColumns(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->columns[5].pooling, FeaturePooling::kSqrtN);
  EXPECT_EQ(back->columns[5].weight_separator, ':');
  EXPECT_EQ(back->columns[4].pooling, FeaturePooling::kTable);
  EXPECT_TRUE(SameColumns(*back, columns));
  ColumnsSchema other = columns;
  other.columns[5].pooling = FeaturePooling::kMean;
  EXPECT_FALSE(SameColumns(other, columns));
  // Before pooling was stored the schema ended with its last column.
  back = DecodeColumns(bytes.substr(0, bytes.size() - columns.columns.size()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->columns[5].pooling, FeaturePooling::kTable);
}

TEST(BinaryFormatV2, APositionResumesAndEveryFileMustShareTheSchema) {
  TempDir dir;
  const SampleBlock b = TwoLabelSamples(700);
  for (const char* name : {"a.bin", "b.bin"}) {
    auto w = BinaryWriter::CreateWithColumns(dir.File(name), TwoLabels(), 128);
    ASSERT_TRUE(w.ok() && (*w)->Write(b).ok() && (*w)->Close().ok());
  }
  ReaderOptions o;
  o.schema = TwoLabels().Layout();
  auto open = [&](std::vector<std::string> files) {
    auto r = BinaryReader::Open(files, o);
    EXPECT_TRUE(r.ok()) << r.status();
    return std::move(*r);
  };
  const std::vector<std::string> both = {dir.File("a.bin"), dir.File("b.bin")};
  auto whole = open(both);
  SampleBlock all(o.schema);
  while (*whole->Read(1000, &all) > 0) {
  }
  ASSERT_EQ(all.size(), 1400u);
  for (size_t at : {1u, 128u, 700u, 1000u}) {
    auto first = open(both);
    SampleBlock head(o.schema);
    ASSERT_EQ(*first->Read(at, &head), at);
    auto position = first->Position();
    ASSERT_TRUE(position.ok());
    auto second = open(both);
    ASSERT_TRUE(second->Seek(*position).ok()) << at;
    while (*second->Read(1000, &head) > 0) {
    }
    EXPECT_EQ(DiffBlocks(head, all), "") << at;
  }
  // A file with another stored schema (a column renamed) is refused.
  ColumnsSchema other = TwoLabels();
  other.columns[6].name = "comment";
  auto w = BinaryWriter::CreateWithColumns(dir.File("c.bin"), other, 128);
  ASSERT_TRUE(w.ok() && (*w)->Write(b).ok() && (*w)->Close().ok());
  auto mixed = open({dir.File("a.bin"), dir.File("c.bin")});
  SampleBlock sink(o.schema);
  absl::Status s = absl::OkStatus();
  while (s.ok()) {
    auto n = mixed->Read(1000, &sink);
    s = n.status();
    if (s.ok() && *n == 0) break;
  }
  EXPECT_TRUE(absl::StrContains(s.message(), "c.bin: format version 2 with another stored schema"))
      << s;
}

TEST(BinaryFormatV2, ADamagedStoredSchemaIsDataLoss) {
  TempDir dir;
  auto w = BinaryWriter::CreateWithColumns(dir.File("a.bin"), TwoLabels(), 128);
  ASSERT_TRUE(w.ok() && (*w)->Write(TwoLabelSamples(10)).ok() && (*w)->Close().ok());
  std::string bytes = ReadFileOrDie(dir.File("a.bin"));
  bytes[kBinaryHeaderBytes + 30] ^= 0x20;  // inside the stored schema
  WriteFile(dir.File("bad.bin"), bytes);
  auto header = ReadBinaryHeader(dir.File("bad.bin"));
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(header.status().message(), "stored schema checksum mismatch"))
      << header.status();
  // The codec itself refuses bytes that do not decode, naming why.
  const std::string stored = EncodeColumns(TwoLabels());
  EXPECT_TRUE(DecodeColumns(stored).ok());
  EXPECT_FALSE(DecodeColumns(stored.substr(0, stored.size() - 1)).ok());
  EXPECT_TRUE(absl::StrContains(DecodeColumns(stored + "x").status().message(),
                                "1 bytes after the last column"));
}

TEST(BinaryFormat, SmallerThanTsv) {
  TempDir dir;
  SampleBlock b = Generated(2000);
  WriteBlocks(dir.File("b.bin"), b, 4096);
  std::string text;
  for (size_t s = 0; s < b.size(); ++s) AppendCriteoLine(b, s, &text);
  EXPECT_LT(ReadFileOrDie(dir.File("b.bin")).size(), text.size());
}

}  // namespace
}  // namespace herald::data
