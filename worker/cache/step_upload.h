#pragma once
// A step's host lists — labels, dense features, per table the bags'
// offsets, the sample slots and the owned slots, and the samples' indices
// in the global batch — packed into one buffer of
// the device's host memory (page-locked on a GPU) and sent to the device in
// one copy, instead of one staged copy per list and table.
//
// Two host buffers: the next step can be packed (Stage) while the device
// still computes the current one, whose lists came from the other buffer;
// its Upload is then one asynchronous copy. A buffer is refilled only once
// the device is known to have read it (Settled(), called after the caller
// waited for the device), else Stage waits for the device first. Device
// pointers are those of the last Upload, valid until the next. Parts start
// 64 bytes aligned. Not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan/step.h"
#include "worker/device/device_array.h"
#include "worker/device/host_buffer.h"
#include "worker/model/feature_bags.h"

namespace herald::worker {

class StepUpload {
 public:
  explicit StepUpload(Device* device);

  // Packs `step`'s lists into the buffer the device is not reading, and
  // marks the step (plan::Step::staged_as) so that its Upload copies them
  // without packing again.
  void Stage(const plan::Step& step);
  // Sends `step`'s lists in one copy (packing them first unless Stage(step)
  // did, for this content: a copy or move of the staged step counts).
  void Upload(const plan::Step& step);
  // The caller has waited for the device since the last Upload: both
  // buffers may be refilled.
  void Settled() { in_flight_ = -1; }

  // The last Upload's device lists.
  const float* labels() const { return Floats(0); }
  const float* dense() const { return Floats(1); }
  const uint32_t* offsets(size_t t) const { return Words(2 + 3 * t); }
  const uint32_t* slots(size_t t) const { return Words(3 + 3 * t); }
  const uint32_t* owned(size_t t) const { return Words(4 + 3 * t); }
  // Data with per-id weights: each slot entry's weight; else null.
  const float* weights(size_t t) const {
    const size_t part = buffers_[uploaded_].weight_parts[t];
    return part == 0 ? nullptr : Floats(part);
  }
  // Of a table several features look up (plan::TableSamples::features >
  // 1): feature j's bags, and its slot count.
  const uint32_t* feature_offsets(size_t t, uint32_t j) const {
    return Words(buffers_[uploaded_].feature_parts[t] + 3 * j);
  }
  const uint32_t* feature_slots(size_t t, uint32_t j) const {
    return Words(buffers_[uploaded_].feature_parts[t] + 3 * j + 1);
  }
  const float* feature_weights(size_t t, uint32_t j) const {
    if (buffers_[uploaded_].weight_parts[t] == 0) return nullptr;
    return Floats(buffers_[uploaded_].feature_parts[t] + 3 * j + 2);
  }
  uint32_t feature_entries(size_t t, uint32_t j) const {
    return buffers_[uploaded_].feature_entries[t][j];
  }
  // Each sample's index in the global batch (plan::Step::sample_indices);
  // null where the step has none.
  const uint32_t* sample_ids() const {
    const size_t part = buffers_[uploaded_].sample_part;
    return part == 0 ? nullptr : Words(part);
  }
  size_t bytes() const { return buffers_[uploaded_].words * sizeof(uint32_t); }

 private:
  struct Buffer {
    explicit Buffer(Device* device) : host(device) {}
    HostBuffer<uint32_t> host;
    size_t words = 0;
    std::vector<size_t> parts;                           // word offset of each part
    std::vector<size_t> feature_parts;                   // per table: its first feature part
    std::vector<size_t> weight_parts;                    // per table: its weights' part (0: none)
    std::vector<std::vector<uint32_t>> feature_entries;  // per table and feature: slots
    size_t sample_part = 0;                              // the sample indices' part (0: none)
    uint64_t stage = 0;  // plan::Step::staged_as of its content (0: none)
  };
  // Packs into buffer b; returns its stage number.
  void Pack(const plan::Step& step, int b);
  template <typename T>
  void Add(Buffer& buffer, const std::vector<T>& values);
  const uint32_t* Words(size_t part) const {
    return device_words_.data() + buffers_[uploaded_].parts[part];
  }
  const float* Floats(size_t part) const { return reinterpret_cast<const float*>(Words(part)); }

  static constexpr size_t kAlignWords = 16;
  Device* device_;
  std::array<Buffer, 2> buffers_;
  int uploaded_ = 0;    // the buffer of the last Upload
  int in_flight_ = -1;  // a buffer the device may still be reading (-1: none)
  DeviceArray<uint32_t> device_words_;
  std::vector<FeatureBags> split_;  // scratch of Pack
};

}  // namespace herald::worker
