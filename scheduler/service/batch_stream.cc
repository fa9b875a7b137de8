#include "scheduler/service/batch_stream.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/data/generator.h"
#include "common/data/key_batch_conversion.h"
#include "common/data/open_reader.h"
#include "common/rng.h"
#include "common/status.h"

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

absl::StatusOr<std::unique_ptr<data::SampleReader>> OpenDataSource(const proto::DataSpec& spec,
                                                                   data::DataSchema schema) {
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
          "data.format: must be CRITEO_TSV, HERALD_BINARY or "
          "GENERATED");
  }
  if (spec.paths().empty()) return absl::InvalidArgumentError("data.paths: empty");
  data::ReaderOptions options;
  options.schema = schema;
  options.on_malformed = spec.on_malformed() == proto::MALFORMED_FAIL ? data::OnMalformed::kFail
                                                                      : data::OnMalformed::kSkip;
  std::vector<std::string> paths(spec.paths().begin(), spec.paths().end());
  HERALD_ASSIGN_OR_RETURN(auto reader, data::OpenReader(format, paths, options));
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
  o.global_batch_size = spec.global_batch_size();
  o.iterations = split == Split::kTrain ? spec.iterations() : 0;
  o.epochs = split == Split::kTrain ? spec.epochs() : 1;
  o.seed = spec.seed();
  o.split = split;
  return o;
}

BatchStream::BatchStream(BatchStreamOptions options)
    : options_(std::move(options)),
      read_block_(options_.schema),
      pool_(options_.schema),
      batch_block_(options_.schema) {
  if (options_.epochs == 0) options_.epochs = 1;
  if (options_.split == Split::kHeldOut) options_.data.set_shuffle_buffer(0);
  rng_state_ = Mix64(options_.seed ^ 0x73687566666c65ULL);  // "shuffle"
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
  HERALD_ASSIGN_OR_RETURN(stream->reader_,
                          OpenDataSource(stream->options_.data, stream->options_.schema));
  return stream;
}

uint64_t BatchStream::MaxBatches() const {
  return options_.iterations > 0 ? options_.iterations : UINT64_MAX;
}

absl::StatusOr<bool> BatchStream::Refill() {
  const size_t target = std::max<size_t>(1, options_.data.shuffle_buffer());
  while (live_.size() < target && !input_done_) {
    read_block_.Clear();
    HERALD_ASSIGN_OR_RETURN(size_t n, reader_->Read(kReadChunk, &read_block_));
    if (n == 0) {
      // End of this epoch's input.
      const bool more_epochs = options_.split == Split::kTrain &&
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
    for (size_t s = 0; s < n; ++s) {
      const bool held_out =
          IsHeldOut(options_.seed, index_in_epoch_++, options_.data.eval_fraction());
      if (held_out != (options_.split == Split::kHeldOut)) continue;
      live_.push_back(static_cast<uint32_t>(pool_.size()));
      pool_.AppendFrom(read_block_, s);
      ++added_in_epoch_;
    }
  }
  return !live_.empty();
}

void BatchStream::TakeFromPool(bool random, data::SampleBlock* out) {
  if (random) {
    rng_state_ = Mix64(rng_state_ + 0x9e3779b97f4a7c15ULL);
    const size_t i = static_cast<size_t>(rng_state_ % live_.size());
    if (out != nullptr) out->AppendFrom(pool_, live_[i]);
    live_[i] = live_.back();
    live_.pop_back();
  } else {
    if (out != nullptr) out->AppendFrom(pool_, live_.front());
    live_.pop_front();
  }
  // Compact once most of the pool is taken, so memory stays within ~2 pools.
  if (pool_.size() > 2 * live_.size() + kReadChunk) {
    data::SampleBlock compact(options_.schema);
    for (uint32_t& i : live_) {
      compact.AppendFrom(pool_, i);
      i = static_cast<uint32_t>(compact.size() - 1);
    }
    pool_ = std::move(compact);
  }
}

absl::StatusOr<bool> BatchStream::Next(data::KeyBatch* out) {
  if (batches_ >= MaxBatches()) return false;
  batch_block_.Clear();
  const bool shuffle = options_.data.shuffle_buffer() > 0;
  while (batch_block_.size() < options_.global_batch_size) {
    HERALD_ASSIGN_OR_RETURN(bool any, Refill());
    if (!any) break;
    TakeFromPool(shuffle, &batch_block_);
  }
  if (batch_block_.size() < options_.global_batch_size) {
    // Training drops a partial last batch; evaluation uses every sample.
    if (options_.split == Split::kTrain || batch_block_.size() == 0) {
      dropped_tail_ += batch_block_.size();
      return false;
    }
  }
  *out = data::ToKeyBatch(batch_block_, 0, batch_block_.size());
  ++batches_;
  return true;
}

absl::StatusOr<uint64_t> BatchStream::Skip(uint64_t n) {
  const bool shuffle = options_.data.shuffle_buffer() > 0;
  for (uint64_t skipped = 0; skipped < n; ++skipped) {
    if (batches_ >= MaxBatches()) return skipped;
    for (uint32_t taken = 0; taken < options_.global_batch_size; ++taken) {
      HERALD_ASSIGN_OR_RETURN(bool any, Refill());
      if (!any) {  // the stream ends here, as in Next
        if (options_.split == Split::kTrain || taken == 0) {
          dropped_tail_ += taken;
          return skipped;
        }
        ++batches_;  // the held-out stream's partial last batch
        return skipped + 1;
      }
      TakeFromPool(shuffle, nullptr);
    }
    ++batches_;
  }
  return n;
}

}  // namespace herald::scheduler
