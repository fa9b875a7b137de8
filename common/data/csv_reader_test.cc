#include "common/data/csv_reader.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "absl/base/casts.h"
#include "absl/strings/charconv.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/data/binary_format.h"
#include "common/data/criteo_tsv.h"
#include "common/data/csv_fast_path.h"
#include "common/data/key_batch_conversion.h"
#include "common/data/number_parsing.h"
#include "common/data/string_key.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

using testing::DiffBlocks;
using testing::TempDir;
using testing::WriteFile;

ColumnSchema Column(std::string name, ColumnRole role) {
  ColumnSchema c;
  c.name = std::move(name);
  c.role = role;
  return c;
}

// click and rating labels, price (affine) and age (no transform, missing
// 30) dense, string user ids, decimal items, multi-hot hex genres.
ColumnsSchema Shop() {
  ColumnsSchema s;
  s.columns.push_back(Column("click", ColumnRole::kLabel));
  ColumnSchema rating = Column("rating", ColumnRole::kLabel);
  rating.label = LabelKind::kRegression;
  s.columns.push_back(rating);
  ColumnSchema price = Column("price", ColumnRole::kDense);
  price.transform = DenseTransform::kAffine;
  price.scale = 0.5f;
  price.shift = 1.0f;
  s.columns.push_back(price);
  ColumnSchema age = Column("age", ColumnRole::kDense);
  age.missing_value = 30.0f;
  s.columns.push_back(age);
  ColumnSchema user = Column("user", ColumnRole::kSparse);
  user.ids = IdFormat::kString;
  s.columns.push_back(user);
  ColumnSchema item = Column("item", ColumnRole::kSparse);
  item.ids = IdFormat::kDecimal;
  s.columns.push_back(item);
  ColumnSchema genres = Column("genres", ColumnRole::kSparse);
  genres.multi_hot_separator = '|';
  s.columns.push_back(genres);
  s.columns.push_back(Column("comment", ColumnRole::kIgnore));
  return s;
}

absl::StatusOr<SampleBlock> ReadAll(const std::string& text, ColumnsSchema schema,
                                    OnMalformed policy = OnMalformed::kFail,
                                    MalformedLog* log = nullptr) {
  ReaderOptions o;
  o.on_malformed = policy;
  o.buffer_bytes = 64;  // lines cross buffer refills
  CsvReader reader({"shop.csv"}, MemoryOpener({text}), std::move(schema), o);
  SampleBlock block(reader.schema());
  for (;;) {
    absl::StatusOr<size_t> got = reader.Read(3, &block);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
  }
  if (log != nullptr) *log = reader.malformed();
  return block;
}

TEST(StringKey, IsXxh64WithSeedZero) {
  // Reference values of XXH64 (xxHash's own test vectors).
  EXPECT_EQ(StringKey(""), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(StringKey("abc"), 0x44BC2CF5AD770999ull);
}

TEST(ParseFiniteFloat, GivesTheBitsOfFromCharsRoundedToFloat) {
  // Random plain decimals (the fast path) and other spellings (the slow one).
  std::mt19937_64 rng(7);
  std::vector<std::string> inputs = {"0",
                                     "-0",
                                     "1",
                                     "0.1",
                                     "1e3",
                                     ".5",
                                     "5.",
                                     "-1.25e-3",
                                     "123456789012345",
                                     "1234567890123456",
                                     "0.0000000000000000000001",
                                     "3.4028235e38",
                                     "340282356779733661637539395458142568448"};
  for (int i = 0; i < 200000; ++i) {
    std::string s = (rng() & 1) ? "-" : "";
    s += std::to_string(rng() % (uint64_t{1} << (rng() % 50)));
    if (rng() & 1) {
      std::string frac = std::to_string(rng() % 1000000000);
      s += "." + std::string(rng() % 14, '0') + frac;
    }
    inputs.push_back(s);
  }
  for (const std::string& s : inputs) {
    double d = 0;
    auto r = absl::from_chars(s.data(), s.data() + s.size(), d);
    ASSERT_EQ(r.ec, std::errc()) << s;
    const float want = static_cast<float>(d);
    float got = 0;
    ASSERT_EQ(ParseFiniteFloat(s, &got), std::isfinite(want)) << s;
    if (std::isfinite(want)) {
      EXPECT_EQ(absl::bit_cast<uint32_t>(got), absl::bit_cast<uint32_t>(want)) << s;
    }
  }
  float x = 0;
  for (const char* bad : {"", "-", "+1", "1x", "nan", "inf", "1e39", " 1", "1 "}) {
    EXPECT_FALSE(ParseFiniteFloat(bad, &x)) << bad;
  }
}

TEST(CsvFastPath, TakesOnlyLinesTheParserAcceptsAndAppendsTheSame) {
  // Shop() in file order, and as a TSV whose header has the sparse
  // columns out of the schema's order (user and genres swapped).
  ColumnsSchema tsv = Shop();
  tsv.separator = '\t';
  const std::vector<std::string> lines = {
      "1,4.5,10.5,41,alice,7,a1|B2,x",         // taken
      "0,-0,-0,0,bob,18446744073709551615,,",  // 20 digits: the parser's
      "1,1,1,1,u,99999999999999999999,a,",     // overflow: refused
      "1,1,00000000000000001.5,1,u,1,a,",      // 17 digits: from_chars
      "1,1,1e3,1,u,1,a,",                      // exponent: the parser's
      "1.5,1,1,1,u,1,a,",                      // binary label out of range
      "1,1,1,1,u,1,a||b,",                     // empty id
      "1,1,1,1,u,1,a|,",                       // trailing separator
      "1,1,1,1,u,1,fffffffffffffffff,",        // 17 hex digits
      "1,1,1,1,u,1,a,\"q\"",                   // quoted: the parser's
      "1,1,1,1,u,1,a,,",                       // a field too many
      "1,1,1,1,u,1",                           // too few
      ",1,1,1,u,1,a,",                         // no label
      "1,1,,,u,,,\r",                          // missing values, CRLF
  };
  for (ColumnsSchema schema : {Shop(), tsv}) {
    const bool swapped = schema.separator == '\t';
    const FieldMap map =
        swapped ? *MapHeader(schema, "click\trating\tprice\tage\tgenres\titem\tuser\tcomment", "t")
                : SchemaOrder(schema);
    CsvFastPath fast(schema, map);
    SampleBlock by_fast(schema.Layout()), by_slow(schema.Layout());
    size_t taken = 0;
    for (std::string line : lines) {
      if (swapped) {
        std::vector<std::string> f = absl::StrSplit(line, ',');
        if (f.size() >= 7) std::swap(f[4], f[6]);
        line = absl::StrJoin(f, "\t");
      }
      std::vector<absl::string_view> fields;
      std::string scratch;
      absl::Status s = SplitFields(line, schema.separator, &fields, &scratch);
      if (s.ok()) s = ParseFields(schema, map, fields, &by_slow);
      const SampleBlock before = by_fast;
      if (fast.Parse(line, &by_fast)) {
        ++taken;
        EXPECT_TRUE(s.ok()) << line << ": " << s;
      } else {
        EXPECT_EQ(DiffBlocks(before, by_fast), "") << line;
        if (s.ok()) {
          ASSERT_TRUE(ParseFields(schema, map, fields, &by_fast).ok());
        }
      }
      EXPECT_EQ(DiffBlocks(by_fast, by_slow), "") << line;
    }
    EXPECT_EQ(taken, 3u);  // the first line, the 17 digits, the missing values
  }
}

TEST(CsvReader, ReadsColumnsByHeaderNameInAnyOrder) {
  const std::string text =
      "genres,user,comment,age,item,price,rating,click\r\n"
      "a1|B2,alice,\"nice, really\",41,7,10.5,4.5,1\n"
      ",bob,,,18446744073709551615,-2,0,0\n";
  absl::StatusOr<SampleBlock> block = ReadAll(text, Shop());
  ASSERT_TRUE(block.ok()) << block.status();
  ASSERT_EQ(block->size(), 2u);
  EXPECT_EQ(block->schema, (DataSchema{2, 3, 2}));
  EXPECT_EQ(block->Label(0, 0), 1.0f);
  EXPECT_EQ(block->Label(0, 1), 4.5f);
  EXPECT_EQ(block->Dense(0, 0), 10.5f);
  EXPECT_EQ(block->Dense(0, 1), 41.0f);
  EXPECT_FALSE(block->DenseMissing(0, 1));
  EXPECT_TRUE(block->DenseMissing(1, 1));
  EXPECT_EQ(block->Dense(1, 1), 30.0f);  // the column's missing value
  ASSERT_EQ(block->Keys(0, 0).size(), 1u);
  EXPECT_EQ(block->Keys(0, 0)[0], StringKey("alice"));
  EXPECT_EQ(block->Keys(1, 1)[0], 18446744073709551615ull);
  ASSERT_EQ(block->Keys(0, 2).size(), 2u);
  EXPECT_EQ(block->Keys(0, 2)[0], 0xa1u);
  EXPECT_EQ(block->Keys(0, 2)[1], 0xb2u);
  EXPECT_TRUE(block->Keys(1, 2).empty());
  // The columns' transforms and every label (sample by sample) reach the
  // batch.
  const ColumnsSchema schema = Shop();
  const KeyBatch batch = ToKeyBatch(*block, 0, 2, &schema);
  EXPECT_EQ(batch.num_labels, 2u);
  EXPECT_EQ(batch.labels, (std::vector<float>{1.0f, 4.5f, 0.0f, 0.0f}));
  EXPECT_EQ(batch.dense, (std::vector<float>{10.5f * 0.5f + 1.0f, 41.0f, -2 * 0.5f + 1.0f, 30.0f}));
  ASSERT_EQ(batch.tables.size(), 3u);
  EXPECT_EQ(batch.tables[2].offsets, (std::vector<uint32_t>{0, 2, 2}));
}

TEST(CsvReader, PerIdWeightsFollowTheirIdsAndDefaultToOne) {
  ColumnsSchema schema = Shop();
  schema.columns[6].weight_separator = ':';  // genres
  const std::string text =
      "genres,user,comment,age,item,price,rating,click\n"
      "a1:0.5|B2|c3:-2,alice,,41,7,10.5,4.5,1\n"
      ",bob,,,8,-2,0,0\n";
  absl::StatusOr<SampleBlock> block = ReadAll(text, schema);
  ASSERT_TRUE(block.ok()) << block.status();
  ASSERT_TRUE(block->schema.weighted);
  ASSERT_EQ(block->Keys(0, 2).size(), 3u);
  EXPECT_EQ(block->Keys(0, 2)[2], 0xc3u);
  EXPECT_EQ(std::vector<float>(block->Weights(0, 2).begin(), block->Weights(0, 2).end()),
            (std::vector<float>{0.5f, 1.0f, -2.0f}));
  // Columns without weights weigh 1 in a weighted block.
  EXPECT_EQ(block->Weights(0, 0)[0], 1.0f);
  // The weights go into the batch, key for key.
  const KeyBatch batch = ToKeyBatch(*block, 0, 2, &schema);
  ASSERT_EQ(batch.tables.size(), 3u);
  EXPECT_EQ(batch.tables[2].weights, (std::vector<float>{0.5f, 1.0f, -2.0f}));
  EXPECT_EQ(batch.tables[0].weights, (std::vector<float>{1.0f, 1.0f}));
  const KeyBatch second = batch.Slice(1, 2, 2);
  EXPECT_TRUE(second.tables[2].weights.empty() && second.tables[2].keys.empty());
  EXPECT_EQ(second.tables[1].weights, (std::vector<float>{1.0f}));
  // A bad weight names the column and the weight.
  absl::StatusOr<SampleBlock> bad = ReadAll(
      "genres,user,comment,age,item,price,rating,click\na1:x|B2,alice,,41,7,10.5,4.5,1\n", schema);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("shop.csv:2: column 'genres' (field 1): not a finite "
                                        "weight 'x'"),
            std::string::npos)
      << bad.status();
  bad = ReadAll("genres,user,comment,age,item,price,rating,click\na1:inf,alice,,41,7,10.5,4.5,1\n",
                schema);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a finite weight 'inf'"), std::string::npos);
  // A weight separator on a column that is not sparse is refused.
  schema.columns[2].weight_separator = ':';
  absl::Status refused = ValidateColumns(schema);
  EXPECT_NE(refused.message().find("columns[2] 'price': a weight separator"), std::string::npos)
      << refused;
}

TEST(CsvReader, EveryBadValueNamesFileLineAndColumn) {
  const std::string header = "click,rating,price,age,user,item,genres,comment\n";
  struct Case {
    std::string line, error;
  };
  const Case cases[] = {
      {"1,4,x,1,u,1,a,", "shop.csv:2: column 'price' (field 3): not a finite number 'x'"},
      {"2,4,1,1,u,1,a,",
       "shop.csv:2: column 'click' (field 1): binary label '2' is outside [0, 1]"},
      {"1,inf,1,1,u,1,a,", "shop.csv:2: column 'rating' (field 2): not a finite number 'inf'"},
      {"1,4,1,1,u,-1,a,", "column 'item' (field 6): not an unsigned 64-bit decimal id '-1'"},
      {"1,4,1,1,u,1,a||b,", "column 'genres' (field 7): an empty id in 'a||b'"},
      {"1,4,1,1,u,1,zz,", "column 'genres' (field 7): not a hex id of 1-16 digits 'zz'"},
      {",4,1,1,u,1,a,", "column 'click' (field 1): no label"},
      {"1,4,1,1,u,1,a", "shop.csv:2: expected 8 fields, found 7"},
      {"1,4,1,1,\"u,1,a,", "shop.csv:2: field 5: a quote is not closed"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SampleBlock> block = ReadAll(header + c.line + "\n", Shop());
    ASSERT_FALSE(block.ok()) << c.line;
    EXPECT_EQ(block.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(block.status().message(), c.error))
        << c.line << ": " << block.status();
  }
  // Skipped under the skip policy, the good lines kept.
  MalformedLog log;
  absl::StatusOr<SampleBlock> block =
      ReadAll(header + "1,4,x,1,u,1,a,\n0,1,2,3,u,1,a,\n", Shop(), OnMalformed::kSkip, &log);
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->size(), 1u);
  EXPECT_EQ(log.count(), 1u);
}

// max_ids bounds a multi-hot value (so a job can size its caches without
// reading the data): a value with more ids is a malformed line, on the fast
// path as on the slow one.
TEST(CsvReader, AMultiHotValueOverItsMaxIdsIsMalformed) {
  const std::string header = "click,rating,price,age,user,item,genres,comment\n";
  ColumnsSchema schema = Shop();
  schema.columns[6].max_ids = 2;
  absl::StatusOr<SampleBlock> two = ReadAll(header + "1,4,1,1,u,1,a|b,\n", schema);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->keys.size(), 4u);  // user, item and two genres
  absl::StatusOr<SampleBlock> three = ReadAll(header + "1,4,1,1,u,1,a|b|c,\n", schema);
  ASSERT_FALSE(three.ok());
  EXPECT_TRUE(absl::StrContains(
      three.status().message(),
      "shop.csv:2: column 'genres' (field 7): more than 2 ids in one value (its max_ids)"))
      << three.status();
}

TEST(CsvReader, AHeaderThatDoesNotMatchTheSchemaIsRefusedNamingTheColumn) {
  absl::StatusOr<SampleBlock> lacks = ReadAll("click,rating,price,age,user,item\n", Shop());
  EXPECT_TRUE(
      absl::StrContains(lacks.status().message(), "shop.csv:1: the header has no column 'genres'"))
      << lacks.status();
  const std::string extra =
      "click,rating,price,age,user,item,genres,comment,zip\n1,4,1,1,u,1,a,,9\n";
  absl::StatusOr<SampleBlock> refused = ReadAll(extra, Shop());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "header column 9 'zip' is not in"))
      << refused.status();
  ColumnsSchema lenient = Shop();
  lenient.ignore_other_columns = true;
  absl::StatusOr<SampleBlock> read = ReadAll(extra, lenient);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), 1u);
}

TEST(CsvReader, WithoutAHeaderColumnsAreInSchemaOrder) {
  ColumnsSchema s = Shop();
  s.header = false;
  s.separator = '\t';
  absl::StatusOr<SampleBlock> block = ReadAll("1\t2.5\t4\t5\tu\t9\tff\tz\n", s);
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_EQ(block->Label(0, 1), 2.5f);
  EXPECT_EQ(block->Keys(0, 1)[0], 9u);
  EXPECT_EQ(block->Keys(0, 2)[0], 0xffu);
}

TEST(CsvReader, APositionResumesAFreshReaderPastTheHeaderOfEachFile) {
  TempDir dir;
  const std::string header = "item,click,rating,price,age,user,genres,comment\n";
  std::string a = header, b = "comment,genres,user,age,price,rating,click,item\n";
  for (int i = 0; i < 5; ++i) {
    a += std::to_string(i) + ",1,2,3,4,u" + std::to_string(i) + ",a,\n";
    b += ",b,v" + std::to_string(i) + ",4,3,2,0," + std::to_string(10 + i) + "\n";
  }
  WriteFile(dir.File("a.csv"), a);
  WriteFile(dir.File("b.csv"), b);
  auto open = [&] {
    absl::StatusOr<std::unique_ptr<CsvReader>> r =
        CsvReader::Open({dir.File("a.csv"), dir.File("b.csv")}, Shop(), ReaderOptions());
    EXPECT_TRUE(r.ok()) << r.status();
    return std::move(*r);
  };
  auto whole = open();
  SampleBlock all(whole->schema());
  while (*whole->Read(100, &all) > 0) {
  }
  ASSERT_EQ(all.size(), 10u);
  for (size_t at : {2u, 5u, 7u}) {
    auto first = open();
    SampleBlock head(first->schema());
    ASSERT_EQ(*first->Read(at, &head), at);
    absl::StatusOr<std::vector<uint64_t>> position = first->Position();
    ASSERT_TRUE(position.ok());
    auto second = open();
    ASSERT_TRUE(second->Seek(*position).ok());
    while (*second->Read(100, &head) > 0) {
    }
    EXPECT_EQ(DiffBlocks(head, all), "") << "resumed after " << at;
  }
}

// 40 dense columns: the missing mask takes two words per sample, through
// both parsers and a binary version 2 file.
TEST(CsvReader, MoreThan32DenseColumnsKeepEveryMissingBit) {
  ColumnsSchema schema;
  schema.columns.push_back(Column("y", ColumnRole::kLabel));
  std::string header = "y", fast_line = "1", slow_line = "0";
  for (int i = 0; i < 40; ++i) {
    schema.columns.push_back(Column("d" + std::to_string(i), ColumnRole::kDense));
    schema.columns.back().missing_value = -1.0f;
    header += ",d" + std::to_string(i);
    const bool missing = i % 7 == 3;  // 3, 10, 17, 24, 31, 38
    fast_line += missing ? "," : "," + std::to_string(i);
    slow_line += missing ? "," : ",\"" + std::to_string(i) + "\"";  // quotes: the parser's
  }
  schema.columns.push_back(Column("u", ColumnRole::kSparse));
  header += ",u";
  fast_line += ",ab";
  slow_line += ",cd";
  TempDir dir;
  WriteFile(dir.File("wide.csv"), header + "\n" + fast_line + "\n" + slow_line + "\n");
  ReaderOptions o;
  o.on_malformed = OnMalformed::kFail;
  auto reader = CsvReader::Open({dir.File("wide.csv")}, schema, o);
  ASSERT_TRUE(reader.ok()) << reader.status();
  SampleBlock block((*reader)->schema());
  ASSERT_EQ(*(*reader)->Read(10, &block), 2u);
  EXPECT_EQ(block.schema.missing_words(), 2u);
  EXPECT_EQ(block.dense_missing.size(), 4u);
  for (size_t s = 0; s < 2; ++s) {
    for (uint32_t i = 0; i < 40; ++i) {
      EXPECT_EQ(block.DenseMissing(s, i), i % 7 == 3) << s << " " << i;
      EXPECT_EQ(block.Dense(s, i), i % 7 == 3 ? -1.0f : static_cast<float>(i)) << s << " " << i;
    }
  }
  auto w = BinaryWriter::CreateWithColumns(dir.File("wide.bin"), schema);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Write(block).ok());
  ASSERT_TRUE((*w)->Close().ok());
  ReaderOptions bo;
  bo.schema = block.schema;
  auto bin = BinaryReader::Open({dir.File("wide.bin")}, bo);
  ASSERT_TRUE(bin.ok()) << bin.status();
  SampleBlock back(block.schema);
  ASSERT_EQ(*(*bin)->Read(10, &back), 2u);
  EXPECT_EQ(DiffBlocks(block, back), "");
  // Criteo's layout stays at 32 (its integers, one mask word).
  EXPECT_FALSE(BinaryWriter::Create(dir.File("v1.bin"), block.schema).ok());
}

// Features naming one table go into it: per sample, their keys back to
// back and their lengths; tables in the order features first name them.
TEST(ToKeyBatch, FeaturesSharingATableGoIntoItWithTheirLengths) {
  ColumnsSchema schema;
  schema.columns.push_back(Column("y", ColumnRole::kLabel));
  schema.columns.push_back(Column("item", ColumnRole::kSparse));
  schema.columns.push_back(Column("user", ColumnRole::kSparse));
  ColumnSchema viewed = Column("viewed", ColumnRole::kSparse);
  viewed.table = "item";
  viewed.multi_hot_separator = '|';
  schema.columns.push_back(viewed);
  absl::StatusOr<SampleBlock> block =
      ReadAll("y,item,user,viewed\n1,a,b,c|d\n0,e,f,\n1,,10,11\n", schema);
  ASSERT_TRUE(block.ok()) << block.status();
  const KeyBatch batch = ToKeyBatch(*block, 0, 3, &schema);
  ASSERT_EQ(batch.tables.size(), 2u);
  const KeyBatch::Table& item = batch.tables[0];
  EXPECT_EQ(item.features, 2u);
  EXPECT_EQ(item.keys, (std::vector<Key>{0xa, 0xc, 0xd, 0xe, 0x11}));
  EXPECT_EQ(item.offsets, (std::vector<uint32_t>{0, 3, 4, 5}));
  EXPECT_EQ(item.feature_lengths, (std::vector<uint32_t>{1, 2, 1, 0, 0, 1}));
  EXPECT_EQ(batch.tables[1].features, 1u);
  EXPECT_TRUE(batch.tables[1].feature_lengths.empty());
  EXPECT_EQ(batch.tables[1].keys, (std::vector<Key>{0xb, 0xf, 0x10}));
  // A slice keeps each sample's lengths.
  const KeyBatch tail = batch.Slice(1, 3, 0);
  EXPECT_EQ(tail.tables[0].feature_lengths, (std::vector<uint32_t>{1, 0, 0, 1}));
  EXPECT_EQ(tail.tables[0].keys, (std::vector<Key>{0xe, 0x11}));
}

TEST(ColumnsSchema, ValidationNamesTheColumn) {
  ColumnsSchema twice = Shop();
  twice.columns.push_back(Column("price", ColumnRole::kDense));
  EXPECT_TRUE(absl::StrContains(ValidateColumns(twice).message(),
                                "columns[8] 'price': a second column of that name"));
  ColumnsSchema none;
  none.columns.push_back(Column("x", ColumnRole::kDense));
  EXPECT_TRUE(absl::StrContains(ValidateColumns(none).message(), "no label column"));
  ColumnsSchema clash = Shop();
  clash.columns[6].multi_hot_separator = ',';
  EXPECT_TRUE(absl::StrContains(ValidateColumns(clash).message(),
                                "'genres': its multi-hot separator is the column separator"));
  ColumnsSchema single = Shop();
  single.columns[5].max_ids = 3;
  EXPECT_TRUE(absl::StrContains(ValidateColumns(single).message(),
                                "'item': max_ids on a column that is not multi-hot"));
  ColumnsSchema wide = Shop();
  wide.columns[6].max_ids = kMaxIdsPerValue + 1;
  EXPECT_TRUE(
      absl::StrContains(ValidateColumns(wide).message(), "'genres': max_ids 65537 is over"));
  EXPECT_TRUE(ValidateColumns(Shop()).ok());
  EXPECT_TRUE(ValidateColumns(CriteoColumns()).ok());
  EXPECT_EQ(CriteoColumns().Layout(), kCriteoSchema);
}

TEST(ColumnsSchema, FeaturesNameTheirTables) {
  ColumnsSchema s = Shop();
  s.columns[5].table = "user";  // item looks up the user table
  EXPECT_EQ(s.Tables(), (std::vector<std::string>{"user", "genres"}));
  EXPECT_EQ(s.FeatureTables(), (std::vector<uint32_t>{0, 0, 1}));
}

TEST(CriteoTsvWriter, RefusesWhatCriteoTsvCannotHold) {
  TempDir dir;
  absl::StatusOr<SampleBlock> block =
      ReadAll("click,rating,price,age,user,item,genres,comment\n1,4,1.5,1,u,1,a,\n", Shop());
  ASSERT_TRUE(block.ok());
  auto writer = CriteoTsvWriter::Create(dir.File("out.tsv"));
  ASSERT_TRUE(writer.ok());
  absl::Status s = (*writer)->Write(*block);
  EXPECT_TRUE(absl::StrContains(s.message(), "one label per sample")) << s;
}

}  // namespace
}  // namespace herald::data
