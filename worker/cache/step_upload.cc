#include "worker/cache/step_upload.h"

#include <atomic>
#include <cstring>

namespace herald::worker {
namespace {

// Unique in the process: a step staged by one executor never matches
// another executor's buffer.
std::atomic<uint64_t> next_stage{1};

}  // namespace

StepUpload::StepUpload(Device* device) : device_(device), buffers_{Buffer(device), Buffer(device)} {
  device_words_.Bind(device);
}

template <typename T>
void StepUpload::Add(Buffer& buffer, const std::vector<T>& values) {
  static_assert(sizeof(T) == sizeof(uint32_t));
  const size_t at = (buffer.words + kAlignWords - 1) / kAlignWords * kAlignWords;
  buffer.host.Reserve(at + values.size(), buffer.words);
  if (!values.empty()) {
    std::memcpy(buffer.host.data() + at, values.data(), values.size() * sizeof(T));
  }
  buffer.words = at + values.size();
  buffer.parts.push_back(at);
}

void StepUpload::Pack(const plan::Step& step, int b) {
  if (b == in_flight_) {  // the device may still read it
    device_->Synchronize();
    in_flight_ = -1;
  }
  Buffer& buffer = buffers_[b];
  buffer.words = 0;
  buffer.parts.clear();
  Add(buffer, step.labels);
  Add(buffer, step.dense);
  for (size_t t = 0; t < step.samples.size(); ++t) {
    Add(buffer, step.samples[t].offsets);
    Add(buffer, step.samples[t].slots);
    Add(buffer, t < step.plan.size() ? step.plan[t].owned_slots : std::vector<uint32_t>());
  }
  // Per-id weights of a table that has them, after the tables.
  buffer.weight_parts.assign(step.samples.size(), 0);
  for (size_t t = 0; t < step.samples.size(); ++t) {
    if (step.samples[t].weights.empty()) continue;
    buffer.weight_parts[t] = buffer.parts.size();
    Add(buffer, step.samples[t].weights);
  }
  // A table several features look up: each feature's bags (offsets, slots,
  // weights: empty without) after those.
  buffer.feature_parts.assign(step.samples.size(), 0);
  buffer.feature_entries.assign(step.samples.size(), {});
  for (size_t t = 0; t < step.samples.size(); ++t) {
    const plan::TableSamples& samples = step.samples[t];
    if (samples.features < 2) continue;
    SplitFeatures(samples.offsets, samples.slots, samples.features, samples.feature_lengths,
                  samples.weights, &split_);
    buffer.feature_parts[t] = buffer.parts.size();
    for (const FeatureBags& bags : split_) {
      Add(buffer, bags.offsets);
      Add(buffer, bags.slots);
      Add(buffer, bags.weights);
      buffer.feature_entries[t].push_back(static_cast<uint32_t>(bags.slots.size()));
    }
  }
  // Each sample's index in the global batch, last (0: none sent).
  buffer.sample_part = 0;
  if (!step.sample_indices.empty()) {
    buffer.sample_part = buffer.parts.size();
    Add(buffer, step.sample_indices);
  }
  buffer.stage = next_stage.fetch_add(1);
  step.staged_as = buffer.stage;
}

void StepUpload::Stage(const plan::Step& step) { Pack(step, 1 - uploaded_); }

void StepUpload::Upload(const plan::Step& step) {
  int b = -1;
  for (int i = 0; i < 2; ++i) {
    if (step.staged_as != 0 && buffers_[i].stage == step.staged_as) b = i;
  }
  if (b < 0) {
    b = 1 - uploaded_;
    Pack(step, b);
  }
  Buffer& buffer = buffers_[b];
  device_words_.Resize(buffer.words);
  if (buffer.words > 0) {
    device_->CopyFromHostBuffer(buffer.host.data(), device_words_.data(),
                                buffer.words * sizeof(uint32_t));
  }
  uploaded_ = b;
  in_flight_ = b;
}

}  // namespace herald::worker
