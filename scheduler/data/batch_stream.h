#pragma once
// The job's training (or held-out) samples as a deterministic stream of
// global batches, read from TSV files, binary files or the generator with
// bounded memory (never the whole dataset):
//   - Held-out split: sample i of an epoch's input (0-based, in input order)
//     is held out iff IsHeldOut(seed, i, eval_fraction); the same samples in
//     every epoch. The training stream skips them, the eval stream has only
//     them (one pass, input order).
//   - Shuffle buffer of S samples (DataSpec.shuffle_buffer; 0: input order):
//     each emitted sample is drawn uniformly, with a seeded generator, from
//     the S buffered ones, and its place refilled from the input; samples
//     flow across epoch boundaries as in a repeated-then-shuffled stream.
//   - Length: `iterations` global batches (cycling epochs as needed), or
//     `epochs` passes when iterations is 0. A partial last training batch is
//     dropped and counted; the held-out stream ends with its partial batch.
//   - Malformed input follows DataSpec.on_malformed (skip and count, or fail
//     naming file:line).
// Same options + same input => the same batches, bit for bit. Not
// thread-safe (ReadAhead runs one on its own thread).

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/column_schema.h"
#include "common/data/generator.h"
#include "common/data/key_batch.h"
#include "common/data/reader.h"
#include "common/data/sample_block.h"
#include "proto/job.pb.h"
#include "scheduler/data/key_lifecycle.h"

namespace herald::scheduler {

class FollowReader;

// True iff sample `index` of an epoch's input belongs to the held-out split.
bool IsHeldOut(uint64_t seed, uint64_t index, double eval_fraction);

// The generator a GENERATED data spec stands for.
data::GeneratorOptions GeneratorOptionsFromSpec(const proto::GeneratorSpec& generator);

// Opens the data source of `data` (files, a followed directory, or the
// generator) for `schema`. With data.follow, setting `stop` (if given)
// ends a wait for the next file (follow_reader.h). Errors: InvalidArgument
// naming the field (data.format, data.paths, data.generator.rows),
// NotFound for a missing path.
absl::StatusOr<std::unique_ptr<data::SampleReader>> OpenDataSource(
    const proto::DataSpec& data, data::DataSchema schema,
    std::shared_ptr<std::atomic<bool>> stop = nullptr);

// kWhole: every sample of the input, in input order, one pass, the
// partial last batch kept (scoring one file of a followed directory).
enum class Split { kTrain, kHeldOut, kWhole };

struct BatchStreamOptions {
  proto::DataSpec data;
  data::DataSchema schema;
  uint32_t global_batch_size = 0;
  uint64_t iterations = 0;  // 0: `epochs` passes
  uint32_t epochs = 1;      // 0 counts as 1
  uint32_t max_epochs = 0;  // stop after this many passes even with iterations (0: no cap)
  uint64_t seed = 1;
  Split split = Split::kTrain;
  // Id admission and row expiry over the stream's batches, per table its
  // rule (KeyLifecycle::RuleOf; empty: every key has a row for ever). The
  // state is the stream's own: it advances with Next and Skip and travels
  // in its cursor.
  std::vector<KeyRule> key_rules;
};

// BatchStreamOptions from a job spec (schema from num_dense and tables, or
// from data.schema for CSV data; the training split gets the tables' id
// admission and expiry, key_lifecycle.h).
BatchStreamOptions StreamOptionsFromSpec(const proto::JobSpec& spec, Split split);

class BatchStream {
 public:
  // Errors: as OpenDataSource; InvalidArgument for a zero batch size.
  static absl::StatusOr<std::unique_ptr<BatchStream>> Open(BatchStreamOptions options);

  // The next global batch (dense features transformed, see
  // key_batch_conversion.h; lookups of keys not yet admitted dropped, see
  // key_lifecycle.h); false when the stream is done.
  absl::StatusOr<bool> Next(data::KeyBatch* out);
  // The same batch as raw samples, not converted and not filtered by
  // admission (for passes that only read keys); valid until the next call.
  absl::StatusOr<bool> NextSamples(const data::SampleBlock** out);
  // A followed directory (data.follow): the files whose first samples were
  // read while the batch the last Next or NextSamples gave was drawn
  // (KeyBatch::files_started); empty for other sources. Skip and
  // RestoreCursor leave it empty.
  const std::vector<std::string>& files_started() const { return files_started_; }
  // Moves past the next `n` global batches as Next would, without building
  // them (a resumed job finding its place: the samples are read and drawn
  // from the shuffle pool as before, just not copied out or converted;
  // with admission they are converted, to count their keys).
  // Returns the batches skipped, fewer when the stream ends first.
  absl::StatusOr<uint64_t> Skip(uint64_t n);

  // The stream's place after batches() batches, as bytes (a resumed job's
  // data cursor, docs/checkpoints.md): its counters, the shuffle
  // generator, the input's position (SampleReader::Position), the
  // samples waiting in the shuffle pool and the admission counts. Errors:
  // the reader's Position's.
  absl::StatusOr<std::string> SaveCursor() const;
  // Moves a stream just opened with the same options to a saved cursor: it
  // then gives the batches the saved stream would have given next.
  // Errors: FailedPrecondition (batches were read), InvalidArgument
  // naming an option that differs, DataLoss (not a cursor, truncated, or
  // the input changed since).
  absl::Status RestoreCursor(std::string_view cursor);

  uint64_t batches() const { return batches_; }
  // Thread-safe: a stream following a directory (data.follow) stops
  // waiting for the next file; its Next then fails with Cancelled. Other
  // streams are unaffected.
  void Stop() { stop_->store(true); }
  // The flag Stop sets, for whoever must stop the stream once another
  // thread owns it (it outlives the stream).
  std::shared_ptr<std::atomic<bool>> stop_token() const { return stop_; }

  // The stream's key lifecycle (null without admission or expiry).
  const std::shared_ptr<KeyLifecycle>& key_lifecycle() const { return lifecycle_; }
  uint32_t epoch() const { return epoch_; }
  uint64_t malformed() const {
    return malformed_before_ + (reader_ ? reader_->malformed().count() : 0);
  }
  uint64_t dropped_tail_samples() const { return dropped_tail_; }

 private:
  explicit BatchStream(BatchStreamOptions options);
  // Tops the shuffle pool up to its size from the input; false at the end
  // of the last epoch.
  absl::StatusOr<bool> Refill();
  // Moves buffered samples to `out` (null: drops them): one uniformly
  // drawn, or (input order) the `most` oldest, fewer where fewer are
  // buffered. Returns how many. REQUIRES: the pool is not empty, most > 0.
  size_t TakeFromPool(bool random, size_t most, data::SampleBlock* out);
  uint64_t MaxBatches() const;
  // Skip without forgetting the files the skipped batches started.
  absl::StatusOr<uint64_t> SkipBatches(uint64_t n);

  BatchStreamOptions options_;
  std::unique_ptr<data::SampleReader> reader_;
  FollowReader* follow_ = nullptr;  // reader_ when it follows a directory
  std::vector<std::string> files_started_;
  uint32_t epoch_ = 0;
  uint64_t index_in_epoch_ = 0;  // input samples read this epoch
  uint64_t added_in_epoch_ = 0;  // of them, in this stream's split
  uint64_t batches_ = 0;
  uint64_t malformed_before_ = 0;  // of earlier epochs' readers
  uint64_t dropped_tail_ = 0;
  bool input_done_ = false;
  uint64_t rng_state_ = 0;

  data::SampleBlock read_block_;
  data::SampleBlock pool_;        // buffered samples, some already taken
  data::SampleBlock spare_pool_;  // what the pool is compacted into
  std::deque<uint32_t> live_;     // indices into pool_ not yet emitted
  data::SampleBlock batch_block_;
  std::shared_ptr<KeyLifecycle> lifecycle_;
  const std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
  // CSV data: its columns' dense transforms (null: Criteo's).
  std::unique_ptr<data::ColumnsSchema> columns_;
};

}  // namespace herald::scheduler
