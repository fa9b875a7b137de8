#pragma once
// A step's host arrays (labels, dense features, every table's bag offsets,
// sample slots and owned slots) packed into one buffer of the device's host
// memory (page-locked on a GPU) and sent to the device in one copy, instead
// of one staged copy per array and table. Each part starts 64 bytes
// aligned; its device pointer stays valid until the next Clear(). Clear()
// waits for the device, so the buffer is free to be refilled. Not
// thread-safe.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "worker/device/device_array.h"
#include "worker/device/host_buffer.h"

namespace herald::worker {

class StepUpload {
 public:
  explicit StepUpload(Device* device) : device_(device), host_words_(device) {
    device_words_.Bind(device);
  }

  // Starts a new step: every part added before is forgotten.
  void Clear() {
    if (words_ > 0) device_->Synchronize();  // the last Upload has been read
    words_ = 0;
    parts_.clear();
  }
  // Appends n 4-byte values (float or uint32_t); returns the part's index.
  template <typename T>
  size_t Add(const T* values, size_t n) {
    static_assert(sizeof(T) == sizeof(uint32_t));
    const size_t at = (words_ + kAlignWords - 1) / kAlignWords * kAlignWords;
    host_words_.Reserve(at + n, words_);
    if (n > 0) std::memcpy(host_words_.data() + at, values, n * sizeof(T));
    words_ = at + n;
    parts_.push_back(at);
    return parts_.size() - 1;
  }
  template <typename T>
  size_t Add(const std::vector<T>& values) {
    return Add(values.data(), values.size());
  }
  // One copy of every part to the device.
  void Upload() {
    device_words_.Resize(words_);
    if (words_ > 0) {
      device_->CopyFromHostBuffer(host_words_.data(), device_words_.data(),
                                  words_ * sizeof(uint32_t));
    }
  }

  const float* floats(size_t part) const {
    return reinterpret_cast<const float*>(device_words_.data() + parts_[part]);
  }
  const uint32_t* words(size_t part) const { return device_words_.data() + parts_[part]; }
  size_t bytes() const { return words_ * sizeof(uint32_t); }

 private:
  static constexpr size_t kAlignWords = 16;
  Device* device_;
  HostBuffer<uint32_t> host_words_;
  size_t words_ = 0;           // used of host_words_
  std::vector<size_t> parts_;  // word offset of each part
  DeviceArray<uint32_t> device_words_;
};

}  // namespace herald::worker
