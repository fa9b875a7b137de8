// SizeJobCaches: cache sizes and warm-start keys from bounded-memory
// sketches must equal the exact ones while the data's distinct keys fit
// them (every table of this small job), and bad data is refused.

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "common/data/binary_format.h"
#include "common/data/generator.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"
#include "scheduler/data/batch_stream.h"
#include "scheduler/jobs/job_cache_sizing.h"
#include "scheduler/planner/simulator.h"

namespace herald::scheduler {
namespace {

proto::JobSpec SmallSpec() {
  proto::JobSpec spec;
  for (int t = 0; t < 26; ++t) spec.add_tables()->set_dim(2);
  spec.set_num_dense(13);
  spec.mutable_data()->set_format(proto::DATA_FORMAT_GENERATED);
  spec.mutable_data()->mutable_generator()->set_rows(3000);
  spec.mutable_data()->mutable_generator()->set_cardinality_scale(0.01);
  spec.mutable_scheduling()->set_cache_fraction(0.2f);
  spec.mutable_scheduling()->set_warm_start(true);
  spec.set_global_batch_size(64);
  spec.set_seed(5);
  return spec;
}

TEST(JobSizing, SketchesGiveTheExactSizesAndHottestKeysOfSmallData) {
  const proto::JobSpec spec = SmallSpec();
  const uint32_t workers = 3;
  auto sizing = SizeJobCaches(spec, workers);
  ASSERT_TRUE(sizing.ok()) << sizing.status();

  // The exact reference: every use counted in a hash map.
  BatchStreamOptions o = StreamOptionsFromSpec(spec, Split::kTrain);
  o.max_epochs = 1;
  o.data.set_shuffle_buffer(0);
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok()) << stream.status();
  std::vector<absl::flat_hash_map<Key, uint64_t>> uses(26);
  std::vector<uint32_t> max_keys(26, 1);
  data::KeyBatch batch;
  while (*(*stream)->Next(&batch)) {
    for (size_t t = 0; t < 26; ++t) {
      const auto& table = batch.tables[t];
      for (uint32_t s = 0; s < batch.num_samples; ++s) {
        max_keys[t] = std::max(max_keys[t], table.offsets[s + 1] - table.offsets[s]);
      }
      for (Key key : table.keys) ++uses[t][key];
    }
  }
  std::vector<uint64_t> distinct(26);
  for (size_t t = 0; t < 26; ++t) distinct[t] = uses[t].size();
  const CacheSizing want = SizeCaches(distinct, max_keys, 0.2, (64 + workers - 1) / workers);
  EXPECT_EQ(sizing->capacity, want.capacity);
  EXPECT_EQ(sizing->slots, want.slots);
  ASSERT_EQ(sizing->warm_keys.size(), 26u);
  for (size_t t = 0; t < 26; ++t) {
    std::vector<std::pair<uint64_t, Key>> ranked;
    for (const auto& [key, count] : uses[t]) ranked.emplace_back(count, key);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    ranked.resize(std::min<size_t>(ranked.size(), want.capacity[t]));
    std::vector<Key> hottest;
    for (const auto& [count, key] : ranked) hottest.push_back(key);
    EXPECT_EQ(sizing->warm_keys[t], hottest) << "table " << t;
  }
}

TEST(JobSizing, DataSmallerThanOneBatchIsRefused) {
  proto::JobSpec spec = SmallSpec();
  spec.set_global_batch_size(100000);
  auto sizing = SizeJobCaches(spec, 2);
  ASSERT_FALSE(sizing.ok());
  EXPECT_NE(sizing.status().message().find("fewer training samples than one global batch"),
            std::string::npos)
      << sizing.status();
}

// With a budget (cache_rows_per_worker) and single-hot features the sizes
// follow from the spec: the data is not read (here it does not exist), the
// slots hold a worker's share of the batch at one key per feature (two
// features share table 1 here), or a multi-hot column's max_ids. A
// multi-hot column without max_ids, or a warm start, reads it.
TEST(JobSizing, ABudgetWithSingleHotFeaturesSizesWithoutReadingTheData) {
  proto::JobSpec spec;
  spec.add_tables()->set_name("a");
  spec.add_tables()->set_name("b");
  spec.set_global_batch_size(100);
  spec.mutable_scheduling()->set_cache_rows_per_worker(40);
  proto::DataSpec* d = spec.mutable_data();
  d->set_format(proto::DATA_FORMAT_CSV);
  d->add_paths("/nonexistent/herald/data.csv");
  proto::DataSchemaSpec* schema = d->mutable_schema();
  auto column = [&](const std::string& name, proto::ColumnRole role, const std::string& table) {
    proto::ColumnSpec* c = schema->add_columns();
    c->set_name(name);
    c->set_role(role);
    c->set_table(table);
    return c;
  };
  column("click", proto::COLUMN_LABEL, "");
  column("x", proto::COLUMN_SPARSE, "a");
  column("y", proto::COLUMN_SPARSE, "b");
  column("z", proto::COLUMN_SPARSE, "b");
  EXPECT_FALSE(SizingReadsData(spec));
  EXPECT_EQ(SchemaKeysPerSample(spec), (std::vector<uint32_t>{1, 2}));
  auto sizing = SizeJobCaches(spec, 3);  // 34 samples per worker
  ASSERT_TRUE(sizing.ok()) << sizing.status();
  EXPECT_EQ(sizing->capacity, (std::vector<uint32_t>{40, 40}));
  EXPECT_EQ(sizing->slots, (std::vector<uint32_t>{40, 68}));
  EXPECT_TRUE(sizing->warm_keys.empty());

  proto::JobSpec warm = spec;
  warm.mutable_scheduling()->set_warm_start(true);
  EXPECT_TRUE(SizingReadsData(warm));
  EXPECT_EQ(SizeJobCaches(warm, 3).status().code(), absl::StatusCode::kNotFound);
  proto::JobSpec multi_hot = spec;
  multi_hot.mutable_data()->mutable_schema()->mutable_columns(2)->set_multi_hot_separator("|");
  EXPECT_EQ(SchemaKeysPerSample(multi_hot), std::nullopt);
  EXPECT_TRUE(SizingReadsData(multi_hot));
  EXPECT_EQ(SizeJobCaches(multi_hot, 3).status().code(), absl::StatusCode::kNotFound);
  // A multi-hot column with max_ids is bounded again: y holds up to 5.
  multi_hot.mutable_data()->mutable_schema()->mutable_columns(2)->set_max_ids(5);
  EXPECT_EQ(SchemaKeysPerSample(multi_hot), (std::vector<uint32_t>{1, 6}));
  EXPECT_FALSE(SizingReadsData(multi_hot));
  auto bounded = SizeJobCaches(multi_hot, 3);
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  EXPECT_EQ(bounded->slots, (std::vector<uint32_t>{40, 34 * 6}));
  proto::JobSpec fraction = spec;
  fraction.mutable_scheduling()->set_cache_rows_per_worker(0);
  EXPECT_TRUE(SizingReadsData(fraction));
}

// The sizes of a first job over binary files come from the key statistics
// the files store, equal to the exact counts of its training batches (3 008
// samples: 47 whole batches, no partial batch left out), without a pass.
TEST(JobSizing, BinaryFilesSizeFromTheirStoredKeyStatistics) {
  data::testing::TempDir dir;
  data::GeneratorOptions go;
  go.cardinality_scale = 0.01;
  data::SyntheticGenerator gen(go);
  for (auto [name, first, n] : {std::tuple{"a.bin", 0, 1600}, std::tuple{"b.bin", 1600, 1408}}) {
    data::SampleBlock block(gen.schema());
    gen.Generate(first, n, &block);
    auto w = data::BinaryWriter::Create(dir.File(name), block.schema);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Write(block).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  proto::JobSpec spec = SmallSpec();
  spec.mutable_scheduling()->set_warm_start(false);
  spec.mutable_data()->set_format(proto::DATA_FORMAT_HERALD_BINARY);
  spec.mutable_data()->add_paths(dir.path());
  const uint32_t workers = 3;
  const std::optional<JobCacheSizing> stored = SizeFromKeyStats(spec, workers);
  ASSERT_TRUE(stored.has_value());

  BatchStreamOptions o = StreamOptionsFromSpec(spec, Split::kTrain);
  o.max_epochs = 1;
  o.data.set_shuffle_buffer(0);
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok()) << stream.status();
  std::vector<absl::flat_hash_set<Key>> keys(26);
  data::KeyBatch batch;
  uint64_t batches = 0;
  while (*(*stream)->Next(&batch)) {
    ++batches;
    for (size_t t = 0; t < 26; ++t)
      keys[t].insert(batch.tables[t].keys.begin(), batch.tables[t].keys.end());
  }
  EXPECT_EQ(batches, 47u);
  std::vector<uint64_t> distinct(26);
  for (size_t t = 0; t < 26; ++t) distinct[t] = keys[t].size();
  const CacheSizing want =
      SizeCaches(distinct, std::vector<uint32_t>(26, 1), 0.2, (64 + workers - 1) / workers);
  EXPECT_EQ(stored->capacity, want.capacity);
  EXPECT_EQ(stored->slots, want.slots);
  auto sized = SizeJobCaches(spec, workers);
  ASSERT_TRUE(sized.ok()) << sized.status();
  EXPECT_EQ(sized->capacity, want.capacity);

  // Where the statistics do not stand for the job's batches: none.
  proto::JobSpec held_out = spec;
  held_out.mutable_data()->set_eval_fraction(0.1f);
  proto::JobSpec warm = spec;
  warm.mutable_scheduling()->set_warm_start(true);
  proto::JobSpec part = spec;
  part.set_iterations(10);  // 640 of 3 008 samples
  for (const proto::JobSpec& other : {held_out, warm, part}) {
    EXPECT_FALSE(SizeFromKeyStats(other, workers).has_value()) << other.ShortDebugString();
  }
}

TEST(JobSizing, ASizingSavedLoadsBackAndADamagedOneIsRefusedNamingWhy) {
  auto sizing = SizeJobCaches(SmallSpec(), 3);
  ASSERT_TRUE(sizing.ok()) << sizing.status();
  ASSERT_EQ(sizing->warm_keys.size(), 26u);
  const std::string bytes = SaveCacheSizing(*sizing);
  auto back = LoadCacheSizing(bytes, 26);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->capacity, sizing->capacity);
  EXPECT_EQ(back->slots, sizing->slots);
  EXPECT_EQ(back->warm_keys, sizing->warm_keys);

  auto refused = [](std::string_view damaged, size_t tables, const std::string& naming) {
    auto loaded = LoadCacheSizing(damaged, tables);
    ASSERT_FALSE(loaded.ok()) << naming;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
    EXPECT_NE(loaded.status().message().find(naming), std::string::npos) << loaded.status();
  };
  refused(bytes.substr(0, bytes.size() / 2), 26, "cache sizing: ");  // truncated
  refused(bytes + "x", 26, "bytes after the sizing");
  refused(bytes, 25, "capacity: 26 tables, the job has 25");
  std::string wrong_magic = bytes;
  wrong_magic[0] ^= 1;
  refused(wrong_magic, 26, "magic");
  JobCacheSizing too_few_slots = *sizing;
  too_few_slots.slots[4] = too_few_slots.capacity[4] - 1;
  refused(SaveCacheSizing(too_few_slots), 26, "table 4");
}

}  // namespace
}  // namespace herald::scheduler
