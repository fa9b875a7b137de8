#include "cli/predictions_file.h"

#include <fstream>
#include <sstream>
#include <string>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace herald::cli {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A schema job whose `item` table two features look up (item, viewed) and
// whose genres carry weights.
proto::JobSpec SchemaSpec() {
  proto::JobSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    num_dense: 2
    tables { name: "item" dim: 4 }
    tables { name: "genres" dim: 4 }
    data { schema {
      columns { name: "click" role: COLUMN_LABEL }
      columns { name: "price" role: COLUMN_DENSE }
      columns { name: "age" role: COLUMN_DENSE }
      columns { name: "item" role: COLUMN_SPARSE }
      columns { name: "viewed" role: COLUMN_SPARSE table: "item" multi_hot_separator: "|" }
      columns { name: "genres" role: COLUMN_SPARSE multi_hot_separator: "|" weight_separator: ":" }
    } })",
                                                            &spec));
  return spec;
}

TEST(PredictionsFileTest, WritesEachSamplesLabelPredictionAndEveryFeaturesIds) {
  data::KeyBatch batch;
  batch.num_samples = 2;
  batch.labels = {1, 0};
  batch.dense = {0.5f, -2, 3, 0.25f};
  data::KeyBatch::Table item;  // sample 0: item 7, viewed 8 9; sample 1: item 10, no views
  item.offsets = {0, 3, 4};
  item.keys = {7, 8, 9, 10};
  item.features = 2;
  item.feature_lengths = {1, 2, 1, 0};
  data::KeyBatch::Table genres;
  genres.offsets = {0, 2, 2};
  genres.keys = {18446744073709551615ull, 3};
  genres.weights = {0.5f, 1};
  batch.tables = {item, genres};
  const std::string path = ::testing::TempDir() + "/predictions.tsv";
  PredictionsFile file;
  ASSERT_TRUE(PredictionsFile::Open(path, SchemaSpec(), &file).ok());
  ASSERT_TRUE(file.Add(batch, {0.75f, 0.125f}).ok());
  ASSERT_TRUE(file.Close().ok());
  EXPECT_EQ(ReadAll(path),
            "label\tprediction\tdense\titem\tviewed\tgenres\n"
            "1\t0.75\t0.5,-2\t7\t8 9\t18446744073709551615:0.5 3:1\n"
            "0\t0.125\t3,0.25\t10\t\t\n");
}

TEST(PredictionsFileTest, WithoutASchemaTheFeaturesAreTheTables) {
  proto::JobSpec spec;
  spec.add_tables()->set_name("C1");
  spec.add_tables()->set_name("C2");
  const std::string path = ::testing::TempDir() + "/tables.tsv";
  PredictionsFile file;
  ASSERT_TRUE(PredictionsFile::Open(path, spec, &file).ok());
  ASSERT_TRUE(file.Close().ok());
  EXPECT_EQ(ReadAll(path), "label\tprediction\tdense\tC1\tC2\n");
}

TEST(PredictionsFileTest, FailuresNameTheFile) {
  PredictionsFile missing;
  const absl::Status s = PredictionsFile::Open("/nonexistent/dir/p.tsv", SchemaSpec(), &missing);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("/nonexistent/dir/p.tsv"), std::string::npos) << s;

  PredictionsFile full;  // every write fails with ENOSPC
  ASSERT_TRUE(PredictionsFile::Open("/dev/full", SchemaSpec(), &full).ok());
  data::KeyBatch batch;
  batch.num_samples = 1;
  batch.labels = {1};
  batch.dense = {1, 2};
  data::KeyBatch::Table item;
  item.offsets = {0, 1};
  item.keys = {1};
  item.features = 2;
  item.feature_lengths = {1, 0};
  data::KeyBatch::Table genres;
  genres.offsets = {0, 0};
  batch.tables = {item, genres};
  absl::Status wrote = absl::OkStatus();
  for (int i = 0; i < 20000 && wrote.ok(); ++i) wrote = full.Add(batch, {0.5f});  // past the buffer
  if (wrote.ok()) wrote = full.Close();
  EXPECT_EQ(wrote.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(wrote.message().find("/dev/full"), std::string::npos) << wrote;
}

}  // namespace
}  // namespace herald::cli
