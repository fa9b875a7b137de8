#include "scheduler/data/batch_stream.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data/binary_format.h"
#include "common/data/open_reader.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"
#include "scheduler/data/held_out.h"
#include "scheduler/data/read_ahead.h"

namespace herald::scheduler {
namespace {

// A small schema so tests can write TSV by hand: 1 dense, 2 tables.
constexpr data::DataSchema kSchema{1, 2};

// Sample i: label i%2, dense i, keys (i, 1000 + i) — the first key names it.
std::string TsvLines(int first, int count) {
  std::string out;
  for (int i = first; i < first + count; ++i) {
    absl::StrAppend(&out, i % 2, "\t", i, "\t", absl::Hex(i), "\t", absl::Hex(1000 + i), "\n");
  }
  return out;
}

BatchStreamOptions Options(const std::string& path, uint32_t batch) {
  BatchStreamOptions o;
  o.data.set_format(proto::DATA_FORMAT_CRITEO_TSV);
  o.data.add_paths(path);
  o.schema = kSchema;
  o.global_batch_size = batch;
  o.seed = 3;
  return o;
}

// The sample ids (first key of table 0) of every batch, in order.
std::vector<std::vector<Key>> Drain(BatchStreamOptions o) {
  auto stream = BatchStream::Open(o);
  EXPECT_TRUE(stream.ok()) << stream.status();
  std::vector<std::vector<Key>> out;
  data::KeyBatch batch;
  for (;;) {
    auto more = (*stream)->Next(&batch);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    // Only the held-out stream ends with a partial batch.
    if (o.split == Split::kTrain) {
      EXPECT_EQ(batch.num_samples, o.global_batch_size);
    }
    EXPECT_LE(batch.num_samples, o.global_batch_size);
    out.push_back(batch.tables[0].keys);
  }
  return out;
}

std::vector<Key> Flatten(const std::vector<std::vector<Key>>& batches) {
  std::vector<Key> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The cursor of a stream of `o` after `taken` batches (empty on a
// failure, reported); `saved` (optional) keeps that stream.
std::string CursorAfter(const BatchStreamOptions& o, uint64_t taken,
                        std::unique_ptr<BatchStream>* saved = nullptr) {
  auto stream = BatchStream::Open(o);
  EXPECT_TRUE(stream.ok()) << stream.status();
  if (!stream.ok()) return "";
  data::KeyBatch batch;
  for (uint64_t i = 0; i < taken; ++i) {
    auto more = (*stream)->Next(&batch);
    EXPECT_TRUE(more.ok() && *more) << "batch " << i;
    if (!more.ok() || !*more) return "";
  }
  auto cursor = (*stream)->SaveCursor();
  EXPECT_TRUE(cursor.ok()) << cursor.status();
  if (saved != nullptr) *saved = std::move(*stream);
  return cursor.ok() ? *cursor : "";
}

class BatchStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("data.tsv");
    data::testing::WriteFile(path_, TsvLines(0, 100));
  }
  data::testing::TempDir dir_;
  std::string path_;
};

TEST_F(BatchStreamTest, InputOrderDropsThePartialTailAndCountsIt) {
  BatchStreamOptions o = Options(path_, 16);
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok());
  data::KeyBatch batch;
  std::vector<Key> seen;
  while (*(*stream)->Next(&batch))
    seen.insert(seen.end(), batch.tables[0].keys.begin(), batch.tables[0].keys.end());
  ASSERT_EQ(seen.size(), 96u);  // 6 batches of 16; 4 samples dropped
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
  EXPECT_EQ((*stream)->dropped_tail_samples(), 4u);
  EXPECT_EQ(batch.dense.size(), 16u);  // transformed: log1p of the raw value
}

TEST_F(BatchStreamTest, HeldOutSplitIsTheExactComplementAndStableAcrossEpochs) {
  BatchStreamOptions train = Options(path_, 1);
  train.data.set_eval_fraction(0.25f);
  train.epochs = 2;
  BatchStreamOptions held = train;
  held.split = Split::kHeldOut;
  held.global_batch_size = 16;  // ~25 samples: the partial last batch is kept
  std::vector<Key> t = Flatten(Drain(train));
  std::vector<Key> h = Flatten(Drain(held));
  ASSERT_FALSE(h.empty());
  ASSERT_EQ(t.size() % 2, 0u);
  std::vector<Key> epoch0(t.begin(), t.begin() + t.size() / 2);
  std::vector<Key> epoch1(t.begin() + t.size() / 2, t.end());
  EXPECT_EQ(epoch0, epoch1);  // the same held-out samples every epoch
  std::vector<Key> all = epoch0;
  all.insert(all.end(), h.begin(), h.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 100u);
  for (Key k = 0; k < 100; ++k) EXPECT_EQ(all[k], k);
  EXPECT_NEAR(static_cast<double>(h.size()) / 100, 0.25, 0.12);
}

TEST_F(BatchStreamTest, InputOrderBatchesHoldWholeSamplesAcrossHeldOutGaps) {
  // Samples are copied in runs (between held-out samples, up to a batch's
  // end): every sample must arrive whole, in input order, in both splits.
  for (Split split : {Split::kTrain, Split::kHeldOut}) {
    BatchStreamOptions o = Options(path_, 7);
    o.data.set_eval_fraction(0.3f);
    o.epochs = 2;
    o.split = split;
    auto stream = BatchStream::Open(o);
    ASSERT_TRUE(stream.ok()) << stream.status();
    std::vector<uint64_t> ids;
    const data::SampleBlock* batch = nullptr;
    while (*(*stream)->NextSamples(&batch)) {
      ASSERT_LE(batch->size(), 7u);
      ASSERT_EQ(batch->offsets.size(), batch->size() * 2 + 1);
      for (size_t s = 0; s < batch->size(); ++s) {
        ASSERT_EQ(batch->Keys(s, 0).size(), 1u);
        const uint64_t id = batch->Keys(s, 0)[0];
        EXPECT_EQ(batch->Keys(s, 1), absl::MakeConstSpan(std::vector<uint64_t>{1000 + id}));
        EXPECT_EQ(batch->labels[s], static_cast<float>(id % 2));
        EXPECT_EQ(batch->Dense(s, 0), static_cast<int32_t>(id));
        EXPECT_EQ(IsHeldOut(o.seed, id, 0.3), split == Split::kHeldOut) << id;
        ids.push_back(id);
      }
    }
    // The held-out stream is one pass; training two, each in input order.
    const size_t epochs = split == Split::kTrain ? 2 : 1;
    ASSERT_FALSE(ids.empty());
    size_t restarts = 0;
    for (size_t i = 1; i < ids.size(); ++i) restarts += ids[i] <= ids[i - 1];
    EXPECT_EQ(restarts, epochs - 1);
  }
}

TEST_F(BatchStreamTest, ShuffleIsSeededAPermutationAndReproducible) {
  BatchStreamOptions o = Options(path_, 10);
  o.data.set_shuffle_buffer(32);
  const std::vector<Key> a = Flatten(Drain(o));
  EXPECT_EQ(a, Flatten(Drain(o)));  // same options, same bits
  std::vector<Key> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(sorted.size(), 100u);
  for (Key k = 0; k < 100; ++k) EXPECT_EQ(sorted[k], k);
  std::vector<Key> in_order(100);
  for (Key k = 0; k < 100; ++k) in_order[k] = k;
  EXPECT_NE(a, in_order);
  o.seed = 4;
  EXPECT_NE(a, Flatten(Drain(o)));
}

TEST_F(BatchStreamTest, IterationsCycleEpochs) {
  BatchStreamOptions o = Options(path_, 30);
  o.iterations = 7;  // 210 samples: 2.1 passes over 100
  const auto batches = Drain(o);
  ASSERT_EQ(batches.size(), 7u);
  EXPECT_EQ(batches[3][10], 0u);  // sample 100 of the stream is sample 0 again
  o.max_epochs = 1;               // the sizing pass: at most one epoch
  EXPECT_EQ(Drain(o).size(), 3u);
}

TEST_F(BatchStreamTest, MalformedLinesFollowThePolicy) {
  const std::string bad = dir_.File("bad.tsv");
  data::testing::WriteFile(bad, TsvLines(0, 5) + "1\tnot-a-number\t1\t2\n" + TsvLines(5, 5));
  BatchStreamOptions o = Options(bad, 5);
  auto skip = BatchStream::Open(o);
  ASSERT_TRUE(skip.ok());
  data::KeyBatch batch;
  EXPECT_TRUE(*(*skip)->Next(&batch));
  EXPECT_TRUE(*(*skip)->Next(&batch));
  EXPECT_EQ((*skip)->malformed(), 1u);

  o.data.set_on_malformed(proto::MALFORMED_FAIL);
  auto fail = BatchStream::Open(o);
  ASSERT_TRUE(fail.ok());
  absl::StatusOr<bool> r = (*fail)->Next(&batch);  // input is read in chunks
  if (r.ok()) r = (*fail)->Next(&batch);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.tsv:6"), std::string::npos) << r.status();
}

TEST_F(BatchStreamTest, BadSourcesAreNamed) {
  BatchStreamOptions o = Options(dir_.File("missing.tsv"), 4);
  EXPECT_FALSE(BatchStream::Open(o).ok());
  o = Options(path_, 0);
  EXPECT_NE(BatchStream::Open(o).status().message().find("global_batch_size"), std::string::npos);
  o = Options(path_, 4);
  o.data.set_format(proto::DATA_FORMAT_GENERATED);
  EXPECT_NE(BatchStream::Open(o).status().message().find("data.generator.rows"), std::string::npos);
  o.data.mutable_generator()->set_rows(10);
  EXPECT_NE(BatchStream::Open(o).status().message().find("26 categorical"), std::string::npos);
}

TEST_F(BatchStreamTest, ReadAheadYieldsTheSameBatchesWithinItsWindow) {
  BatchStreamOptions o = Options(path_, 8);
  o.data.set_shuffle_buffer(16);
  const auto direct = Drain(o);
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok());
  ReadAhead loader(std::move(*stream), 2);
  std::vector<std::vector<Key>> ahead;
  data::KeyBatch batch;
  while (*loader.Next(&batch)) {
    EXPECT_LE(loader.buffered(), 2u);
    ahead.push_back(batch.tables[0].keys);
  }
  EXPECT_EQ(ahead, direct);
  EXPECT_EQ(loader.dropped_tail_samples(), 4u);
}

// Skip(n) leaves the stream where n calls of Next would: the batches after
// it are the same, in input order and shuffled, with a held-out split,
// across epochs and up to the end; the dropped tail is counted the same.
TEST_F(BatchStreamTest, SkippingBatchesLeavesTheStreamWhereReadingThemWould) {
  struct Case {
    const char* name;
    uint32_t shuffle;
    double eval_fraction;
    uint64_t iterations;
  };
  for (const Case& c : {Case{"input order", 0, 0.0, 0}, Case{"shuffled", 16, 0.0, 0},
                        Case{"held-out split", 16, 0.2, 0}, Case{"epochs", 16, 0.0, 25}}) {
    SCOPED_TRACE(c.name);
    BatchStreamOptions o = Options(path_, 7);
    o.data.set_shuffle_buffer(c.shuffle);
    o.data.set_eval_fraction(c.eval_fraction);
    o.iterations = c.iterations;
    const std::vector<std::vector<Key>> all = Drain(o);
    ASSERT_GT(all.size(), 4u);
    for (uint64_t skip : {uint64_t{1}, uint64_t{4}, uint64_t{all.size()}}) {
      auto stream = BatchStream::Open(o);
      ASSERT_TRUE(stream.ok());
      auto skipped = (*stream)->Skip(skip);
      ASSERT_TRUE(skipped.ok()) << skipped.status();
      EXPECT_EQ(*skipped, skip);
      std::vector<std::vector<Key>> rest;
      data::KeyBatch batch;
      while (*(*stream)->Next(&batch)) rest.push_back(batch.tables[0].keys);
      EXPECT_EQ(rest, std::vector<std::vector<Key>>(all.begin() + skip, all.end()))
          << "after skipping " << skip;
    }
    // Past the end: the batches there were, and the tail dropped as Next drops it.
    auto stream = BatchStream::Open(o);
    ASSERT_TRUE(stream.ok());
    auto skipped = (*stream)->Skip(all.size() + 3);
    ASSERT_TRUE(skipped.ok());
    EXPECT_EQ(*skipped, all.size());
    auto read = BatchStream::Open(o);
    data::KeyBatch batch;
    while (*(*read)->Next(&batch)) {
    }
    EXPECT_EQ((*stream)->dropped_tail_samples(), (*read)->dropped_tail_samples());
  }
}

// The fixture's 100 samples as two binary files (60 + 40 samples, blocks
// of 9, so cursors fall inside blocks and between files).
std::vector<std::string> WriteBinary(const data::testing::TempDir& dir, const std::string& tsv) {
  data::ReaderOptions ro;
  ro.schema = kSchema;
  auto reader = data::OpenReader(data::FileFormat::kTsv, {tsv}, ro);
  EXPECT_TRUE(reader.ok()) << reader.status();
  data::SampleBlock all(kSchema);
  while (*(*reader)->Read(1000, &all) > 0) {
  }
  std::vector<std::string> paths = {dir.File("a.bin"), dir.File("b.bin")};
  for (int f = 0; f < 2; ++f) {
    auto w = data::BinaryWriter::Create(paths[f], kSchema, 9);
    EXPECT_TRUE(w.ok());
    data::SampleBlock part(kSchema);
    for (size_t i = f == 0 ? 0 : 60; i < (f == 0 ? 60u : all.size()); ++i) part.AppendFrom(all, i);
    EXPECT_TRUE((*w)->Write(part).ok());
    EXPECT_TRUE((*w)->Close().ok());
  }
  return paths;
}

// Options() over the fixture's samples as binary files (WriteBinary).
BatchStreamOptions BinaryOptions(const data::testing::TempDir& dir, const std::string& tsv,
                                 uint32_t batch, uint32_t shuffle) {
  BatchStreamOptions o = Options(tsv, batch);
  o.data.clear_paths();
  o.data.set_format(proto::DATA_FORMAT_HERALD_BINARY);
  for (const std::string& f : WriteBinary(dir, tsv)) o.data.add_paths(f);
  o.data.set_shuffle_buffer(shuffle);
  return o;
}

// A cursor saved after any number of batches, restored into a stream just
// opened, gives the batches the saved stream gives next: binary and TSV
// files and the generator, in input order and shuffled, with a held-out split and
// across epochs.
TEST_F(BatchStreamTest, ACursorRestoredGivesTheBatchesThatFollow) {
  const std::vector<std::string> files = WriteBinary(dir_, path_);
  enum Source { kBinary, kTsv, kGenerated };
  struct Case {
    const char* name;
    Source source;
    uint32_t shuffle;
    double eval_fraction;
    uint64_t iterations;
  };
  for (const Case& c :
       {Case{"input order", kBinary, 0, 0.0, 0}, Case{"shuffled", kBinary, 16, 0.0, 0},
        Case{"held-out split", kBinary, 16, 0.2, 0}, Case{"epochs", kBinary, 16, 0.0, 25},
        Case{"TSV, shuffled, held-out, epochs", kTsv, 16, 0.2, 25},
        Case{"generated, shuffled, epochs", kGenerated, 40, 0.1, 30}}) {
    SCOPED_TRACE(c.name);
    BatchStreamOptions o = Options(path_, 7);  // kTsv: the fixture's TSV file
    if (c.source == kGenerated) {
      o.data.clear_paths();
      o.data.set_format(proto::DATA_FORMAT_GENERATED);
      o.data.mutable_generator()->set_rows(150);
      o.data.mutable_generator()->set_cardinality_scale(0.001);
      o.schema = data::kCriteoSchema;
      o.global_batch_size = 16;
    } else if (c.source == kBinary) {
      o.data.clear_paths();
      o.data.set_format(proto::DATA_FORMAT_HERALD_BINARY);
      for (const std::string& f : files) o.data.add_paths(f);
    }
    o.data.set_shuffle_buffer(c.shuffle);
    o.data.set_eval_fraction(c.eval_fraction);
    o.iterations = c.iterations;
    const std::vector<std::vector<Key>> all = Drain(o);
    ASSERT_GT(all.size(), 4u);
    for (uint64_t taken :
         {uint64_t{0}, uint64_t{1}, uint64_t{4}, uint64_t{all.size() - 1}, uint64_t{all.size()}}) {
      std::unique_ptr<BatchStream> saved;
      const std::string cursor = CursorAfter(o, taken, &saved);
      ASSERT_FALSE(cursor.empty());
      data::KeyBatch batch;
      auto resumed = BatchStream::Open(o);
      ASSERT_TRUE(resumed.ok());
      absl::Status s = (*resumed)->RestoreCursor(cursor);
      ASSERT_TRUE(s.ok()) << "after " << taken << ": " << s;
      EXPECT_EQ((*resumed)->batches(), taken);
      std::vector<std::vector<Key>> rest;
      while (*(*resumed)->Next(&batch)) rest.push_back(batch.tables[0].keys);
      EXPECT_EQ(rest, std::vector<std::vector<Key>>(all.begin() + taken, all.end()))
          << "after " << taken;
      while (*saved->Next(&batch)) {
      }
      EXPECT_EQ((*resumed)->dropped_tail_samples(), saved->dropped_tail_samples());
      EXPECT_EQ((*resumed)->epoch(), saved->epoch());
    }
  }
}

// With id admission and row expiry the stream's batches depend on every
// batch before: a cursor carries the counts and last sightings, and
// skipping counts the skipped batches, so both continue with the batches
// (and expiries) an unbroken stream gives.
TEST_F(BatchStreamTest, KeyLifecycleTravelsWithTheCursorAndWhenSkipping) {
  BatchStreamOptions o = Options(path_, 16);
  o.data.clear_paths();
  o.data.set_format(proto::DATA_FORMAT_GENERATED);
  o.data.mutable_generator()->set_rows(400);
  o.data.mutable_generator()->set_cardinality_scale(0.2);  // C1: ~290 ids, many rare
  o.data.set_shuffle_buffer(32);
  o.schema = data::kCriteoSchema;
  const std::vector<std::vector<Key>> everything = Drain(o);
  o.key_rules.assign(data::kCriteoSchema.num_sparse, KeyRule{});
  o.key_rules[0] = {3, 0};
  o.key_rules[1] = {2, 3};  // C2: admitted at 2, expired after 3 batches unseen
  // Per batch: table 0's keys, a separator, table 1's expired keys.
  auto rest_of = [](BatchStream& stream) {
    std::vector<std::vector<Key>> rest;
    data::KeyBatch batch;
    while (*stream.Next(&batch)) {
      std::vector<Key> seen = batch.tables[0].keys;
      seen.push_back(~Key{0});
      seen.insert(seen.end(), batch.tables[1].expired.begin(), batch.tables[1].expired.end());
      rest.push_back(std::move(seen));
    }
    return rest;
  };
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok());
  const std::vector<std::vector<Key>> all = rest_of(**stream);
  ASSERT_EQ(all.size(), everything.size());
  EXPECT_GT((*stream)->key_lifecycle()->counts().expired, 0u) << "nothing expired";
  EXPECT_LT(Flatten(all).size(), Flatten(everything).size() + all.size())
      << "admission dropped nothing";
  for (uint64_t taken : {uint64_t{1}, uint64_t{5}, uint64_t{all.size() - 1}}) {
    SCOPED_TRACE(absl::StrCat("after ", taken));
    const std::string cursor = CursorAfter(o, taken);
    ASSERT_FALSE(cursor.empty());
    auto resumed = BatchStream::Open(o);
    auto skipped = BatchStream::Open(o);
    ASSERT_TRUE(resumed.ok() && skipped.ok());
    ASSERT_TRUE((*resumed)->RestoreCursor(cursor).ok());
    ASSERT_EQ(*(*skipped)->Skip(taken), taken);
    const std::vector<std::vector<Key>> want(all.begin() + taken, all.end());
    for (auto* stream : {&*resumed, &*skipped}) EXPECT_EQ(rest_of(**stream), want);
  }
  // A cursor saved without admission does not fit a stream with it.
  BatchStreamOptions plain = o;
  plain.key_rules.clear();
  const std::string cursor = CursorAfter(plain, 0);
  ASSERT_FALSE(cursor.empty());
  auto with = BatchStream::Open(o);
  ASSERT_TRUE(with.ok());
  const absl::Status refused = (*with)->RestoreCursor(cursor);
  EXPECT_NE(refused.message().find("saved without id admission"), std::string::npos) << refused;
}

TEST_F(BatchStreamTest, ACursorIsRefusedWhereItCannotHold) {
  const BatchStreamOptions o = BinaryOptions(dir_, path_, 4, 8);
  auto saved = BatchStream::Open(o);
  data::KeyBatch batch;
  ASSERT_TRUE(*(*saved)->Next(&batch));
  const std::string cursor = *(*saved)->SaveCursor();

  BatchStreamOptions other = o;
  other.seed = 4;
  auto s = (*BatchStream::Open(other))->RestoreCursor(cursor);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("seed was 3 and is 4 now"), std::string::npos) << s;
  s = (*BatchStream::Open(o))->RestoreCursor(cursor.substr(0, cursor.size() - 5));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("data cursor: keys"), std::string::npos) << s;
  s = (*BatchStream::Open(o))->RestoreCursor("not a cursor at all, not at all");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  auto read = BatchStream::Open(o);
  ASSERT_TRUE(*(*read)->Next(&batch));
  EXPECT_EQ((*read)->RestoreCursor(cursor).code(), absl::StatusCode::kFailedPrecondition);
}

// The read-ahead thread saves the cursors asked for as it passes them; a
// cursor asked for later (the reader moved on) still restores the place.
TEST_F(BatchStreamTest, ReadAheadSavesTheCursorsAskedFor) {
  const BatchStreamOptions o = BinaryOptions(dir_, path_, 4, 16);
  const auto direct = Drain(o);  // 25 batches
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok());
  ReadAhead loader(std::move(*stream), 3, 0, [](uint64_t batches) { return batches % 5 == 0; });
  data::KeyBatch batch;
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(*loader.Next(&batch));
  EXPECT_EQ(loader.CursorAfter(4).status().code(), absl::StatusCode::kNotFound);
  auto cursor = loader.CursorAfter(10);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  EXPECT_EQ(loader.CursorAfter(5).status().code(), absl::StatusCode::kNotFound);  // older: dropped
  auto resumed = BatchStream::Open(o);
  ASSERT_TRUE((*resumed)->RestoreCursor(*cursor).ok());
  std::vector<std::vector<Key>> rest;
  while (*(*resumed)->Next(&batch)) rest.push_back(batch.tables[0].keys);
  EXPECT_EQ(rest, std::vector<std::vector<Key>>(direct.begin() + 10, direct.end()));
}

// A checkpoint after every iteration: the planner holds three batches and
// asks for the cursor after the first while the reader is `window` ahead;
// that cursor is still there.
TEST_F(BatchStreamTest, ReadAheadKeepsEveryCursorThePlannerCanAskFor) {
  const BatchStreamOptions o = BinaryOptions(dir_, path_, 4, 16);
  for (uint32_t window : {1u, 2u, 8u}) {
    SCOPED_TRACE(absl::StrCat("window ", window));
    auto stream = BatchStream::Open(o);
    ASSERT_TRUE(stream.ok());
    ReadAhead loader(std::move(*stream), window, 0, [](uint64_t) { return true; });
    data::KeyBatch current, next, after;
    ASSERT_TRUE(*loader.Next(&current) && *loader.Next(&next) && *loader.Next(&after));
    for (uint64_t planned = 0; planned < 10; ++planned) {
      // Once the reader has run as far ahead as it goes (polled, bounded).
      const absl::Time deadline = absl::Now() + absl::Seconds(30);
      while (loader.buffered() < window && absl::Now() < deadline) {
        absl::SleepFor(absl::Milliseconds(1));
      }
      ASSERT_EQ(loader.buffered(), window);
      EXPECT_TRUE(loader.CursorAfter(planned + 1).ok()) << "after batch " << planned;
      std::swap(current, next);
      std::swap(next, after);
      ASSERT_TRUE(*loader.Next(&after));
    }
  }
}

TEST_F(BatchStreamTest, ReadAheadSkipsFirstAndSaysHowFar) {
  BatchStreamOptions o = Options(path_, 8);
  o.data.set_shuffle_buffer(16);
  const auto direct = Drain(o);  // 12 batches
  {
    auto stream = BatchStream::Open(o);
    ASSERT_TRUE(stream.ok());
    ReadAhead loader(std::move(*stream), 2, 5);
    std::vector<std::vector<Key>> ahead;
    data::KeyBatch batch;
    while (*loader.Next(&batch)) ahead.push_back(batch.tables[0].keys);
    EXPECT_EQ(loader.skipped(), 5u);
    EXPECT_EQ(ahead, std::vector<std::vector<Key>>(direct.begin() + 5, direct.end()));
  }
  auto stream = BatchStream::Open(o);
  ASSERT_TRUE(stream.ok());
  ReadAhead loader(std::move(*stream), 2, 20);
  data::KeyBatch batch;
  EXPECT_FALSE(*loader.Next(&batch));
  EXPECT_EQ(loader.skipped(), direct.size());
}

// data.follow: the files of one directory in name order, including one
// renamed in while the stream reads; a dot-file (still being written) and
// a late file named before the last one taken are never read; after the
// idle time without a new file the stream ends. Samples are named by
// their first key: file 00 holds 0..9, file 01 20..29.
BatchStreamOptions FollowOptions(const std::string& dir, double idle_seconds) {
  BatchStreamOptions o = Options(dir, 5);
  o.data.set_follow(true);
  o.data.set_follow_until_idle_seconds(idle_seconds);
  return o;
}

void RenameIn(const data::testing::TempDir& dir, const std::string& name, int first, int count) {
  const std::string tmp = dir.File("." + name + ".tmp");
  data::testing::WriteFile(tmp, TsvLines(first, count));
  std::filesystem::rename(tmp, dir.File(name));
}

std::vector<Key> Ids(const data::KeyBatch& batch) {
  std::vector<Key> ids;
  for (size_t s = 0; s + 1 < batch.tables[0].offsets.size(); ++s) {
    ids.push_back(batch.tables[0].keys[batch.tables[0].offsets[s]]);
  }
  return ids;
}

TEST(FollowedDirectory, FilesAreReadOnceInNameOrderAsTheyArrive) {
  data::testing::TempDir dir;
  RenameIn(dir, "00.tsv", 0, 10);
  auto stream = BatchStream::Open(FollowOptions(dir.path(), 0.3));
  ASSERT_TRUE(stream.ok()) << stream.status();
  data::KeyBatch batch;
  std::vector<Key> seen;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(*(*stream)->Next(&batch));
    for (Key k : Ids(batch)) seen.push_back(k);
  }
  // While the stream waits at the end of 00: a file renamed in, one still
  // being written (a dot-file), and one named before 00.
  RenameIn(dir, "01.tsv", 20, 10);
  data::testing::WriteFile(dir.File(".02.tsv.part"), TsvLines(40, 10));
  data::testing::WriteFile(dir.File("0.tsv"), TsvLines(60, 10));
  for (;;) {
    absl::StatusOr<bool> more = (*stream)->Next(&batch);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;  // the idle end
    for (Key k : Ids(batch)) seen.push_back(k);
  }
  std::vector<Key> want;
  for (Key k = 0; k < 10; ++k) want.push_back(k);
  for (Key k = 20; k < 30; ++k) want.push_back(k);
  EXPECT_EQ(seen, want);
}

// A stream's cursor names the file and the place in it: a fresh stream
// restored from it continues there, in the middle of a file or after one.
TEST(FollowedDirectory, TheCursorContinuesInTheRightFile) {
  data::testing::TempDir dir;
  RenameIn(dir, "00.tsv", 0, 10);
  RenameIn(dir, "01.tsv", 20, 15);
  const BatchStreamOptions o = FollowOptions(dir.path(), 0.2);
  std::vector<Key> all;
  {
    auto stream = BatchStream::Open(o);
    ASSERT_TRUE(stream.ok());
    data::KeyBatch batch;
    while (*(*stream)->Next(&batch)) {
      for (Key k : Ids(batch)) all.push_back(k);
    }
  }
  ASSERT_EQ(all.size(), 25u);
  for (uint64_t taken : {uint64_t{1}, uint64_t{2}, uint64_t{3}}) {
    SCOPED_TRACE(absl::StrCat("after ", taken, " batches"));
    const std::string cursor = CursorAfter(o, taken);
    ASSERT_FALSE(cursor.empty());
    auto resumed = BatchStream::Open(o);
    ASSERT_TRUE(resumed.ok());
    ASSERT_TRUE((*resumed)->RestoreCursor(cursor).ok());
    std::vector<Key> rest;
    data::KeyBatch batch;
    while (*(*resumed)->Next(&batch)) {
      for (Key k : Ids(batch)) rest.push_back(k);
    }
    EXPECT_EQ(rest, std::vector<Key>(all.begin() + 5 * taken, all.end()));
  }
}

// Each batch names the files whose first samples were read while it was
// drawn (eval.each_file scores them before it trains): every file once, in
// order, never after a batch holding one of its samples. A stream resumed
// by cursor or by skipping names the same files for the batches after.
// File 00 holds ids 0..11, 01 100..106, 02 200..212 (a shuffle pool of 4).
TEST(FollowedDirectory, EachBatchNamesTheFilesItStarts) {
  data::testing::TempDir dir;
  RenameIn(dir, "00.tsv", 0, 12);
  RenameIn(dir, "01.tsv", 100, 7);
  RenameIn(dir, "02.tsv", 200, 13);
  BatchStreamOptions o = FollowOptions(dir.path(), 0.05);
  o.data.set_shuffle_buffer(4);
  auto file_of = [](Key id) { return static_cast<int>(id / 100); };
  std::vector<std::vector<std::string>> started;  // by batch
  {
    auto stream = BatchStream::Open(o);
    ASSERT_TRUE(stream.ok());
    data::KeyBatch batch;
    std::vector<std::string> named;
    int files_seen = 0;  // files with a sample in a batch so far
    while (*(*stream)->Next(&batch)) {
      started.push_back(batch.files_started);
      EXPECT_EQ(batch.files_started, (*stream)->files_started());
      named.insert(named.end(), batch.files_started.begin(), batch.files_started.end());
      for (Key id : Ids(batch)) {
        files_seen = std::max(files_seen, file_of(id) + 1);
        EXPECT_LT(file_of(id), static_cast<int>(named.size())) << "id " << id << " of a file "
                                                               << "no batch named yet";
      }
    }
    EXPECT_EQ(named, (std::vector<std::string>{"00.tsv", "01.tsv", "02.tsv"}));
    EXPECT_EQ(files_seen, 3);
  }
  ASSERT_EQ(started.size(), 6u);  // 32 samples, 5 per batch
  EXPECT_EQ(started[0], std::vector<std::string>{"00.tsv"});
  for (uint64_t taken = 1; taken < started.size(); ++taken) {
    SCOPED_TRACE(absl::StrCat("after ", taken, " batches"));
    std::vector<std::vector<std::string>> by_cursor, by_skip;
    auto resumed = BatchStream::Open(o);
    ASSERT_TRUE(resumed.ok());
    ASSERT_TRUE((*resumed)->RestoreCursor(CursorAfter(o, taken)).ok());
    data::KeyBatch batch;
    while (*(*resumed)->Next(&batch)) by_cursor.push_back(batch.files_started);
    auto skipped = BatchStream::Open(o);
    ASSERT_TRUE(skipped.ok());
    ASSERT_EQ(*(*skipped)->Skip(taken), taken);
    EXPECT_TRUE((*skipped)->files_started().empty());
    while (*(*skipped)->Next(&batch)) by_skip.push_back(batch.files_started);
    const std::vector<std::vector<std::string>> rest(started.begin() + taken, started.end());
    EXPECT_EQ(by_cursor, rest);
    EXPECT_EQ(by_skip, rest);
  }
}

// One file's samples for scoring it (eval.each_file, heraldctl evaluate
// --data): all of them in file order, the last batch cut short, or the
// first max_samples.
TEST(FollowedDirectory, AFileIsScoredInFileOrder) {
  data::testing::TempDir dir;
  RenameIn(dir, "01.tsv", 100, 7);
  proto::JobSpec spec;
  spec.set_num_dense(kSchema.num_dense);
  for (uint32_t t = 0; t < kSchema.num_sparse; ++t) spec.add_tables();
  *spec.mutable_data() = FollowOptions(dir.path(), 0).data;
  spec.mutable_data()->set_shuffle_buffer(4);
  for (uint64_t max : {uint64_t{0}, uint64_t{4}}) {
    std::vector<Key> ids;
    std::vector<uint32_t> sizes;
    ASSERT_TRUE(ForEachFileBatch(spec, dir.File("01.tsv"), 3, max, [&](const data::KeyBatch& b) {
                  for (Key id : Ids(b)) ids.push_back(id);
                  sizes.push_back(b.num_samples);
                  return absl::OkStatus();
                }).ok());
    if (max == 0) {
      EXPECT_EQ(ids, (std::vector<Key>{100, 101, 102, 103, 104, 105, 106}));
      EXPECT_EQ(sizes, (std::vector<uint32_t>{3, 3, 1}));
    } else {
      EXPECT_EQ(ids, (std::vector<Key>{100, 101, 102, 103}));
      EXPECT_EQ(sizes, (std::vector<uint32_t>{3, 1}));
    }
  }
}

// Stop (a cancelled job) ends a wait for the next file: Next fails with
// Cancelled instead of waiting (here for ever: no idle end).
TEST(FollowedDirectory, StopEndsTheWaitForTheNextFile) {
  data::testing::TempDir dir;
  RenameIn(dir, "00.tsv", 0, 5);
  auto stream = BatchStream::Open(FollowOptions(dir.path(), 0));
  ASSERT_TRUE(stream.ok());
  data::KeyBatch batch;
  ASSERT_TRUE(*(*stream)->Next(&batch));
  (*stream)->Stop();
  const absl::StatusOr<bool> more = (*stream)->Next(&batch);
  EXPECT_EQ(more.status().code(), absl::StatusCode::kCancelled) << more.status();
}

}  // namespace
}  // namespace herald::scheduler
