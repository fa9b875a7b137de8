#pragma once
// An owning, growable buffer of host memory from Device::AllocateHostBytes
// (page-locked on a GPU), for copies to the device without staging. Move-
// only; Reserve keeps the contents.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include "worker/device/device.h"

namespace herald::worker {

template <typename T>
class HostBuffer {
 public:
  explicit HostBuffer(Device* device) : device_(device) {}
  ~HostBuffer() { device_->FreeHostBytes(data_); }
  HostBuffer(HostBuffer&& o) noexcept
      : device_(o.device_),
        data_(std::exchange(o.data_, nullptr)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer& operator=(HostBuffer&&) = delete;

  // At least n elements, the first `keep` kept (grows by doubling).
  void Reserve(size_t n, size_t keep) {
    if (n <= capacity_) return;
    const size_t grown = std::max(n, 2 * capacity_);
    T* bigger = static_cast<T*>(device_->AllocateHostBytes(grown * sizeof(T)));
    if (keep > 0) std::memcpy(bigger, data_, keep * sizeof(T));
    device_->FreeHostBytes(data_);
    data_ = bigger;
    capacity_ = grown;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  Device* device_;
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace herald::worker
