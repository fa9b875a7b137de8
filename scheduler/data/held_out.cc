#include "scheduler/data/held_out.h"

#include <algorithm>

#include "common/status.h"
#include "common/tunables.h"
#include "scheduler/data/batch_stream.h"

namespace herald::scheduler {

EvalSettings EvalSettingsFromSpec(const proto::JobSpec& spec) {
  EvalSettings s;
  const proto::EvalSpec& e = spec.eval();
  s.max_samples = e.max_samples() > 0 ? e.max_samples() : tunables::kEvalMaxSamples;
  s.batch_size = e.batch_size() > 0 ? e.batch_size() : tunables::kEvalBatchSize;
  s.each_file = spec.data().follow() && e.each_file();
  if (!(spec.data().eval_fraction() > 0)) return s;
  s.every_iterations = e.every_iterations();
  s.at_end = e.has_at_end() ? e.at_end() : true;
  return s;
}

namespace {

// Visits the first `max_samples` (0: all) of `options`' stream, in batches.
absl::Status ForEachBatch(const BatchStreamOptions& options, uint32_t num_dense,
                          uint64_t max_samples,
                          const std::function<absl::Status(const data::KeyBatch&)>& visit) {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<BatchStream> stream, BatchStream::Open(options));
  uint64_t visited = 0;
  data::KeyBatch batch;
  while (max_samples == 0 || visited < max_samples) {
    HERALD_ASSIGN_OR_RETURN(bool more, stream->Next(&batch));
    if (!more) break;
    if (max_samples > 0 && visited + batch.num_samples > max_samples) {
      batch = batch.Slice(0, static_cast<uint32_t>(max_samples - visited), num_dense);
    }
    visited += batch.num_samples;
    HERALD_RETURN_IF_ERROR(visit(batch));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ForEachHeldOutBatch(const proto::JobSpec& spec, uint32_t batch_size,
                                 uint64_t max_samples,
                                 const std::function<absl::Status(const data::KeyBatch&)>& visit) {
  BatchStreamOptions options = StreamOptionsFromSpec(spec, Split::kHeldOut);
  options.global_batch_size = batch_size;
  return ForEachBatch(options, spec.num_dense(), max_samples, visit);
}

absl::Status ForEachFileBatch(const proto::JobSpec& spec, const std::string& path,
                              uint32_t batch_size, uint64_t max_samples,
                              const std::function<absl::Status(const data::KeyBatch&)>& visit) {
  BatchStreamOptions options = StreamOptionsFromSpec(spec, Split::kWhole);
  options.global_batch_size = batch_size;
  options.data.set_follow(false);
  options.data.clear_paths();
  options.data.add_paths(path);
  return ForEachBatch(options, spec.num_dense(), max_samples, visit);
}

proto::EvalBatch EncodeEvalBatch(const data::KeyBatch& batch, uint32_t index) {
  proto::EvalBatch out;
  out.set_index(index);
  out.set_num_samples(batch.num_samples);
  out.set_dense(batch.dense.data(), batch.dense.size() * sizeof(float));
  for (const data::KeyBatch::Table& t : batch.tables) {
    proto::EvalBatch::Table* table = out.add_tables();
    table->set_offsets(t.offsets.data(), t.offsets.size() * sizeof(uint32_t));
    table->set_keys(t.keys.data(), t.keys.size() * sizeof(Key));
    if (!t.weights.empty()) {
      table->set_weights(t.weights.data(), t.weights.size() * sizeof(float));
    }
    if (t.features > 1) {
      table->set_feature_lengths(t.feature_lengths.data(),
                                 t.feature_lengths.size() * sizeof(uint32_t));
    }
  }
  return out;
}

}  // namespace herald::scheduler
