#include "scheduler/data/batch_stream.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/data/columns_codec.h"
#include "common/data/csv_reader.h"
#include "common/data/generator.h"
#include "common/data/key_batch_conversion.h"
#include "common/data/open_reader.h"
#include "common/rng.h"
#include "common/state_io.h"
#include "common/status.h"
#include "scheduler/data/data_schema_spec.h"
#include "scheduler/data/follow_reader.h"

namespace herald::scheduler {
namespace {

constexpr size_t kReadChunk = 4096;
constexpr uint64_t kHeldOutSalt = 0x6865'6c64'6f75'7421ULL;  // "heldout!"

// Samples [0, rows) of the synthetic generator.
class GeneratedReader final : public data::SampleReader {
 public:
  GeneratedReader(data::GeneratorOptions options, uint64_t rows)
      : generator_(std::move(options)), rows_(rows) {}
  absl::StatusOr<size_t> Read(size_t max_samples, data::SampleBlock* out) override {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(max_samples, rows_ - next_));
    generator_.Generate(next_, n, out);
    next_ += n;
    return n;
  }
  const data::MalformedLog& malformed() const override { return malformed_; }
  data::DataSchema schema() const override { return generator_.schema(); }
  absl::StatusOr<std::vector<uint64_t>> Position() const override {
    return std::vector<uint64_t>{next_};
  }
  absl::Status Seek(const std::vector<uint64_t>& position) override {
    if (position.size() != 1 || position[0] > rows_) {
      return absl::InvalidArgumentError("generator position: not a sample index of the data");
    }
    next_ = position[0];
    return absl::OkStatus();
  }

 private:
  data::SyntheticGenerator generator_;
  uint64_t rows_;
  uint64_t next_ = 0;
  data::MalformedLog malformed_;
};

}  // namespace

bool IsHeldOut(uint64_t seed, uint64_t index, double eval_fraction) {
  if (eval_fraction <= 0) return false;
  const double u = static_cast<double>(Mix64(Mix64(seed ^ kHeldOutSalt) + index) >> 11) * 0x1p-53;
  return u < eval_fraction;
}

data::GeneratorOptions GeneratorOptionsFromSpec(const proto::GeneratorSpec& g) {
  data::GeneratorOptions options;
  options.seed = g.seed();
  options.correlation =
      g.independent_columns() ? data::Correlation::kNone : data::Correlation::kEntities;
  options.cardinality_scale = g.cardinality_scale() > 0 ? g.cardinality_scale() : 1.0;
  return options;
}

absl::StatusOr<std::unique_ptr<data::SampleReader>> OpenDataSource(
    const proto::DataSpec& spec, data::DataSchema schema, std::shared_ptr<std::atomic<bool>> stop) {
  if (spec.follow()) {
    if (spec.paths_size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data.follow: data.paths must name one directory, it has ", spec.paths_size()));
    }
    FollowReader::OpenFile open = [spec, schema](const std::string& path) {
      proto::DataSpec one = spec;
      one.set_follow(false);
      one.clear_paths();
      one.add_paths(path);
      return OpenDataSource(one, schema);
    };
    HERALD_ASSIGN_OR_RETURN(
        auto reader,
        FollowReader::Open(spec.paths(0), schema, absl::Seconds(spec.follow_until_idle_seconds()),
                           open, stop));
    return std::unique_ptr<data::SampleReader>(std::move(reader));
  }
  if (spec.format() == proto::DATA_FORMAT_GENERATED) {
    const proto::GeneratorSpec& g = spec.generator();
    if (g.rows() == 0) return absl::InvalidArgumentError("data.generator.rows: must be > 0");
    auto reader = std::make_unique<GeneratedReader>(GeneratorOptionsFromSpec(g), g.rows());
    if (!(reader->schema() == schema)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data.format: the generator makes ", reader->schema().num_dense, " dense and ",
          reader->schema().num_sparse, " categorical features; the job has num_dense=",
          schema.num_dense, " and ", schema.num_sparse, " tables"));
    }
    return std::unique_ptr<data::SampleReader>(std::move(reader));
  }
  if (spec.format() == proto::DATA_FORMAT_CSV) {
    if (spec.paths().empty()) return absl::InvalidArgumentError("data.paths: empty");
    HERALD_ASSIGN_OR_RETURN(data::ColumnsSchema columns, ColumnsFromSpec(spec.schema()));
    if (!(columns.Layout() == schema)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data.schema: ", columns.Layout().num_dense, " dense and ", columns.Layout().num_sparse,
          " sparse columns; the job has num_dense=", schema.num_dense, " and ", schema.num_sparse,
          " tables"));
    }
    data::ReaderOptions options;
    options.on_malformed = spec.on_malformed() == proto::MALFORMED_FAIL ? data::OnMalformed::kFail
                                                                        : data::OnMalformed::kSkip;
    std::vector<std::string> paths(spec.paths().begin(), spec.paths().end());
    HERALD_ASSIGN_OR_RETURN(auto reader, data::CsvReader::Open(paths, std::move(columns), options));
    return std::unique_ptr<data::SampleReader>(std::move(reader));
  }
  data::FileFormat format;
  switch (spec.format()) {
    case proto::DATA_FORMAT_CRITEO_TSV:
      format = data::FileFormat::kTsv;
      break;
    case proto::DATA_FORMAT_HERALD_BINARY:
      format = data::FileFormat::kBinary;
      break;
    default:
      return absl::InvalidArgumentError(
          "data.format: must be CRITEO_TSV, HERALD_BINARY, CSV or GENERATED");
  }
  if (spec.paths().empty()) return absl::InvalidArgumentError("data.paths: empty");
  data::ReaderOptions options;
  options.schema = schema;
  options.on_malformed = spec.on_malformed() == proto::MALFORMED_FAIL ? data::OnMalformed::kFail
                                                                      : data::OnMalformed::kSkip;
  std::vector<std::string> paths(spec.paths().begin(), spec.paths().end());
  HERALD_ASSIGN_OR_RETURN(auto reader, data::OpenReader(format, paths, options));
  if (spec.has_schema()) {
    // Binary version 2: the stored schema was read into the spec at submit.
    HERALD_ASSIGN_OR_RETURN(data::ColumnsSchema expected, ColumnsFromSpec(spec.schema()));
    if (reader->columns() == nullptr || !data::SameColumns(*reader->columns(), expected)) {
      return absl::InvalidArgumentError(
          "data.paths: the files' stored schema is not data.schema (they changed since submit)");
    }
  }
  if (!(reader->schema() == schema)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.paths: the files hold ", reader->schema().num_dense, " dense and ",
                     reader->schema().num_sparse, " categorical features; the job has num_dense=",
                     schema.num_dense, " and ", schema.num_sparse, " tables"));
  }
  return reader;
}

BatchStreamOptions StreamOptionsFromSpec(const proto::JobSpec& spec, Split split) {
  BatchStreamOptions o;
  o.data = spec.data();
  o.schema = data::DataSchema{spec.num_dense(), static_cast<uint32_t>(spec.tables_size())};
  if (spec.data().has_schema()) {
    // Checked at submit; a schema that does not convert fails at Open.
    if (absl::StatusOr<data::ColumnsSchema> c = ColumnsFromSpec(spec.data().schema()); c.ok()) {
      o.schema = c->Layout();
    }
  }
  o.global_batch_size = spec.global_batch_size();
  o.iterations = split == Split::kTrain ? spec.iterations() : 0;
  o.epochs = split == Split::kTrain ? spec.epochs() : 1;
  o.seed = spec.seed();
  o.split = split;
  if (split == Split::kTrain) o.key_rules = KeyLifecycle::RuleOf(spec);
  return o;
}

BatchStream::BatchStream(BatchStreamOptions options)
    : options_(std::move(options)),
      read_block_(options_.schema),
      pool_(options_.schema),
      spare_pool_(options_.schema),
      batch_block_(options_.schema) {
  if (options_.epochs == 0) options_.epochs = 1;
  if (options_.split != Split::kTrain) options_.data.set_shuffle_buffer(0);
  if (options_.split == Split::kWhole) options_.data.set_eval_fraction(0);
  rng_state_ = Mix64(options_.seed ^ 0x73687566666c65ULL);  // "shuffle"
  if (!options_.key_rules.empty()) lifecycle_ = std::make_shared<KeyLifecycle>(options_.key_rules);
}

absl::StatusOr<std::unique_ptr<BatchStream>> BatchStream::Open(BatchStreamOptions options) {
  if (options.global_batch_size == 0) {
    return absl::InvalidArgumentError("global_batch_size: must be > 0");
  }
  if (!(options.data.eval_fraction() >= 0 && options.data.eval_fraction() < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.eval_fraction: ", options.data.eval_fraction(), " not in [0, 1)"));
  }
  std::unique_ptr<BatchStream> stream(new BatchStream(std::move(options)));
  if (stream->options_.data.has_schema()) {
    HERALD_ASSIGN_OR_RETURN(data::ColumnsSchema columns,
                            ColumnsFromSpec(stream->options_.data.schema()));
    stream->columns_ = std::make_unique<data::ColumnsSchema>(std::move(columns));
  }
  HERALD_ASSIGN_OR_RETURN(stream->reader_, OpenDataSource(stream->options_.data,
                                                          stream->options_.schema, stream->stop_));
  if (stream->options_.data.follow()) {
    stream->follow_ = static_cast<FollowReader*>(stream->reader_.get());
  }
  return stream;
}

uint64_t BatchStream::MaxBatches() const {
  return options_.iterations > 0 ? options_.iterations : UINT64_MAX;
}

absl::StatusOr<bool> BatchStream::Refill() {
  const size_t target = std::max<size_t>(1, options_.data.shuffle_buffer());
  // Without a held-out split every sample is a training one: read straight
  // into the pool, without a copy through read_block_.
  const bool whole_input =
      options_.split == Split::kWhole ||
      (options_.split == Split::kTrain && !(options_.data.eval_fraction() > 0));
  while (live_.size() < target && !input_done_) {
    read_block_.Clear();
    const size_t pool_before = pool_.size();
    HERALD_ASSIGN_OR_RETURN(size_t n,
                            reader_->Read(kReadChunk, whole_input ? &pool_ : &read_block_));
    if (n == 0) {
      // End of this epoch's input.
      // A followed directory is read once (its end is the idle end).
      const bool more_epochs = options_.split == Split::kTrain && !options_.data.follow() &&
                               (options_.iterations > 0 || epoch_ + 1 < options_.epochs) &&
                               (options_.max_epochs == 0 || epoch_ + 1 < options_.max_epochs);
      if (!more_epochs || added_in_epoch_ == 0) {
        input_done_ = true;
        break;
      }
      malformed_before_ += reader_->malformed().count();
      HERALD_ASSIGN_OR_RETURN(reader_, OpenDataSource(options_.data, options_.schema));
      ++epoch_;
      index_in_epoch_ = 0;
      added_in_epoch_ = 0;
      continue;
    }
    if (whole_input) {
      for (size_t i = 0; i < n; ++i) live_.push_back(static_cast<uint32_t>(pool_before + i));
      index_in_epoch_ += n;
      added_in_epoch_ += n;
      continue;
    }
    // The samples of this stream's split, appended a run at a time.
    size_t run = 0;
    for (size_t s = 0; s <= n; ++s) {
      const bool in_split =
          s < n && (IsHeldOut(options_.seed, index_in_epoch_++, options_.data.eval_fraction()) ==
                    (options_.split == Split::kHeldOut));
      if (in_split) continue;
      for (size_t i = run; i < s; ++i)
        live_.push_back(static_cast<uint32_t>(pool_.size() + i - run));
      pool_.AppendRange(read_block_, run, s);
      added_in_epoch_ += s - run;
      run = s + 1;
    }
  }
  return !live_.empty();
}

size_t BatchStream::TakeFromPool(bool random, size_t most, data::SampleBlock* out) {
  size_t taken = 1;
  if (random) {
    rng_state_ = Mix64(rng_state_ + 0x9e3779b97f4a7c15ULL);
    const size_t i = static_cast<size_t>(rng_state_ % live_.size());
    if (out != nullptr) out->AppendFrom(pool_, live_[i]);
    live_[i] = live_.back();
    live_.pop_back();
  } else {
    // Input order: the oldest samples, consecutive in the pool where they
    // were appended in one run, copied a run at a time.
    taken = std::min(most, live_.size());
    for (size_t left = taken; left > 0;) {
      const uint32_t first = live_.front();
      size_t run = 1;
      while (run < left && live_[run] == first + run) ++run;
      if (out != nullptr) out->AppendRange(pool_, first, first + run);
      live_.erase(live_.begin(), live_.begin() + run);
      left -= run;
    }
  }
  // Compact once most of the pool is taken, so memory stays within ~2 pools.
  if (pool_.size() > 2 * live_.size() + kReadChunk) {
    // Into the block the pool was compacted from last time: its memory is
    // reused, not allocated and faulted in again.
    data::SampleBlock& compact = spare_pool_;
    compact.Clear();
    // Room for what the pool holds until the next compaction: refills
    // append without moving it.
    compact.Reserve(2 * live_.size() + 2 * kReadChunk,
                    pool_.keys.size() / std::max<size_t>(1, pool_.size()) + 1);
    // The live samples copied in pool order (sequential reads, not the
    // random order of live_), then live_ pointed at their new places: the
    // draw order, and so every batch, stays the same.
    constexpr uint32_t kDead = UINT32_MAX;
    std::vector<uint32_t> moved_to(pool_.size(), kDead);
    for (uint32_t i : live_) moved_to[i] = 0;
    for (size_t i = 0; i < moved_to.size();) {
      if (moved_to[i] == kDead) {
        ++i;
        continue;
      }
      const size_t first = i;
      for (; i < moved_to.size() && moved_to[i] != kDead; ++i) {
        moved_to[i] = static_cast<uint32_t>(compact.size() + i - first);
      }
      compact.AppendRange(pool_, first, i);
    }
    for (uint32_t& i : live_) i = moved_to[i];
    std::swap(pool_, compact);
  }
  return taken;
}

absl::StatusOr<bool> BatchStream::NextSamples(const data::SampleBlock** out) {
  if (batches_ >= MaxBatches()) return false;
  batch_block_.Clear();
  const bool shuffle = options_.data.shuffle_buffer() > 0;
  while (batch_block_.size() < options_.global_batch_size) {
    HERALD_ASSIGN_OR_RETURN(bool any, Refill());
    if (!any) break;
    TakeFromPool(shuffle, options_.global_batch_size - batch_block_.size(), &batch_block_);
  }
  if (follow_ != nullptr) files_started_ = follow_->TakeStarted();
  if (batch_block_.size() < options_.global_batch_size) {
    // Training drops a partial last batch; evaluation uses every sample.
    if (options_.split == Split::kTrain || batch_block_.size() == 0) {
      dropped_tail_ += batch_block_.size();
      return false;
    }
  }
  ++batches_;
  *out = &batch_block_;
  return true;
}

absl::StatusOr<bool> BatchStream::Next(data::KeyBatch* out) {
  const data::SampleBlock* samples = nullptr;
  HERALD_ASSIGN_OR_RETURN(bool more, NextSamples(&samples));
  if (!more) return false;
  data::ToKeyBatch(*samples, 0, samples->size(), out, columns_.get());
  if (lifecycle_ != nullptr) lifecycle_->Filter(batches_ - 1, out);
  out->files_started = files_started_;
  return true;
}

namespace {

constexpr uint64_t kCursorMagic = 0x4154'4144'444c'5248ULL;  // "HRLDDATA"
// Version 2: raw dense values as float (version 1: int32, still read).
// Version 3: id admission's counts follow the pool (earlier: none).
// Version 4: the key lifecycle's state (admission and expiry) instead.
constexpr uint32_t kCursorVersion = 4;
constexpr uint32_t kByteOrderMark = 0x01020304;

// What a cursor is only valid for: the options that shape the batches.
struct CursorOptions {
  uint64_t seed, shuffle_buffer;
  uint32_t global_batch_size, split, format, reserved = 0;
  double eval_fraction;
};

CursorOptions CursorOptionsOf(const BatchStreamOptions& o) {
  return {o.seed,
          o.data.shuffle_buffer(),
          o.global_batch_size,
          static_cast<uint32_t>(o.split),
          static_cast<uint32_t>(o.data.format()),
          0,
          o.data.eval_fraction()};
}

}  // namespace

absl::StatusOr<std::string> BatchStream::SaveCursor() const {
  HERALD_ASSIGN_OR_RETURN(const std::vector<uint64_t> position, reader_->Position());
  StateWriter w;
  w.Pod(kCursorMagic);
  w.Pod(kCursorVersion);
  w.Pod(kByteOrderMark);
  w.Pod(CursorOptionsOf(options_));
  w.Pod(batches_);
  w.Pod(epoch_);
  w.Pod(index_in_epoch_);
  w.Pod(added_in_epoch_);
  w.Pod(malformed());
  w.Pod(dropped_tail_);
  w.Pod(static_cast<uint8_t>(input_done_));
  w.Pod(rng_state_);
  w.Vec(position);
  // The pool's samples in the order they are drawn from (live_).
  data::SampleBlock live(options_.schema);
  for (uint32_t i : live_) live.AppendFrom(pool_, i);
  w.Vec(live.labels);
  w.Vec(live.dense);
  w.Vec(live.dense_missing);
  w.Vec(live.offsets);
  w.Vec(live.keys);
  w.Pod(static_cast<uint8_t>(lifecycle_ != nullptr));
  if (lifecycle_ != nullptr) lifecycle_->Save(&w);
  return w.Take();
}

absl::Status BatchStream::RestoreCursor(std::string_view cursor) {
  if (batches_ != 0 || !live_.empty()) {
    return absl::FailedPreconditionError("data cursor: the stream has been read already");
  }
  StateReader r(cursor, "data cursor");
  uint64_t magic = 0;
  uint32_t version = 0, mark = 0;
  CursorOptions saved;
  r.Pod("magic", &magic) && r.Pod("version", &version) && r.Pod("byte order", &mark);
  if (r.status().ok() && (magic != kCursorMagic || version < 1 || version > kCursorVersion)) {
    return absl::DataLossError("data cursor: not a data cursor of this version");
  }
  if (r.status().ok() && mark != kByteOrderMark) {
    return absl::DataLossError("data cursor: written on a machine of another byte order");
  }
  r.Pod("options", &saved);
  HERALD_RETURN_IF_ERROR(r.status());
  const CursorOptions now = CursorOptionsOf(options_);
  auto differs = [](const char* name, auto a, auto b) {
    return absl::InvalidArgumentError(
        absl::StrCat("data cursor: ", name, " was ", a, " and is ", b, " now"));
  };
  if (saved.seed != now.seed) return differs("seed", saved.seed, now.seed);
  if (saved.shuffle_buffer != now.shuffle_buffer) {
    return differs("data.shuffle_buffer", saved.shuffle_buffer, now.shuffle_buffer);
  }
  if (saved.global_batch_size != now.global_batch_size) {
    return differs("global_batch_size", saved.global_batch_size, now.global_batch_size);
  }
  if (saved.split != now.split) return differs("split", saved.split, now.split);
  if (saved.format != now.format) return differs("data.format", saved.format, now.format);
  if (saved.eval_fraction != now.eval_fraction) {
    return differs("data.eval_fraction", saved.eval_fraction, now.eval_fraction);
  }
  uint64_t batches = 0, index_in_epoch = 0, added_in_epoch = 0, malformed = 0, dropped = 0;
  uint64_t rng_state = 0;
  uint32_t epoch = 0;
  uint8_t input_done = 0;
  std::vector<uint64_t> position;
  data::SampleBlock live(options_.schema);
  r.Pod("batches", &batches) && r.Pod("epoch", &epoch) &&
      r.Pod("index_in_epoch", &index_in_epoch) && r.Pod("added_in_epoch", &added_in_epoch) &&
      r.Pod("malformed", &malformed) && r.Pod("dropped_tail", &dropped) &&
      r.Pod("input_done", &input_done) && r.Pod("rng_state", &rng_state) &&
      r.Vec("position", &position) && r.Vec("labels", &live.labels);
  if (version == 1) {
    std::vector<int32_t> dense;
    r.Vec("dense", &dense);
    live.dense.assign(dense.begin(), dense.end());
  } else {
    r.Vec("dense", &live.dense);
  }
  r.Vec("dense_missing", &live.dense_missing) && r.Vec("offsets", &live.offsets) &&
      r.Vec("keys", &live.keys);
  uint8_t has_rules = 0;
  if (version >= 3) r.Pod("key_lifecycle", &has_rules);
  HERALD_RETURN_IF_ERROR(r.status());
  if ((has_rules != 0) != (lifecycle_ != nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data cursor: saved ", has_rules != 0 ? "with" : "without",
        " id admission or row expiry (tables[].admission, tables[].expiry), the stream is ",
        lifecycle_ != nullptr ? "with" : "without"));
  }
  if (has_rules != 0 && version < 4) {
    return absl::InvalidArgumentError(
        "data cursor: its id admission counts are in version 3's layout, which this version "
        "does not read");
  }
  // Loaded into a copy: a damaged cursor leaves the stream's state as it was.
  std::shared_ptr<KeyLifecycle> lifecycle;
  if (lifecycle_ != nullptr) {
    lifecycle = std::make_shared<KeyLifecycle>(lifecycle_->rules());
    lifecycle->Load(&r);
    HERALD_RETURN_IF_ERROR(r.status());
  }
  const data::DataSchema& schema = options_.schema;
  const size_t n = live.labels.size() / schema.num_labels;
  if (!r.AtEnd() || live.labels.size() != n * schema.num_labels ||
      live.dense.size() != n * schema.num_dense ||
      live.dense_missing.size() != n * schema.missing_words() ||
      live.offsets.size() != n * schema.num_sparse + 1 || live.offsets.front() != 0 ||
      live.offsets.back() != live.keys.size() ||
      !std::is_sorted(live.offsets.begin(), live.offsets.end())) {
    return absl::DataLossError("data cursor: the shuffle pool's samples do not fit together");
  }
  // The position is in the saved epoch's input, which a fresh reader reads
  // from its start like every epoch's.
  HERALD_RETURN_IF_ERROR(reader_->Seek(position));
  batches_ = batches;
  epoch_ = epoch;
  index_in_epoch_ = index_in_epoch;
  added_in_epoch_ = added_in_epoch;
  malformed_before_ = malformed;
  dropped_tail_ = dropped;
  input_done_ = input_done != 0;
  rng_state_ = rng_state;
  pool_ = std::move(live);
  if (lifecycle != nullptr) lifecycle_->CopyFrom(*lifecycle);
  live_.clear();
  for (size_t i = 0; i < n; ++i) live_.push_back(static_cast<uint32_t>(i));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> BatchStream::Skip(uint64_t n) {
  absl::StatusOr<uint64_t> skipped = SkipBatches(n);
  // The files the skipped batches started are behind the stream's place.
  if (follow_ != nullptr) follow_->TakeStarted();
  files_started_.clear();
  return skipped;
}

absl::StatusOr<uint64_t> BatchStream::SkipBatches(uint64_t n) {
  if (lifecycle_ != nullptr) {  // its state needs every batch's keys
    data::KeyBatch scratch;
    for (uint64_t skipped = 0; skipped < n; ++skipped) {
      HERALD_ASSIGN_OR_RETURN(bool more, Next(&scratch));
      if (!more) return skipped;
    }
    return n;
  }
  const bool shuffle = options_.data.shuffle_buffer() > 0;
  for (uint64_t skipped = 0; skipped < n; ++skipped) {
    if (batches_ >= MaxBatches()) return skipped;
    for (uint32_t taken = 0; taken < options_.global_batch_size;) {
      HERALD_ASSIGN_OR_RETURN(bool any, Refill());
      if (!any) {  // the stream ends here, as in Next
        if (options_.split == Split::kTrain || taken == 0) {
          dropped_tail_ += taken;
          return skipped;
        }
        ++batches_;  // the held-out stream's partial last batch
        return skipped + 1;
      }
      taken += TakeFromPool(shuffle, options_.global_batch_size - taken, nullptr);
    }
    ++batches_;
  }
  return n;
}

}  // namespace herald::scheduler
