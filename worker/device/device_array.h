#pragma once
// An owning, typed buffer in a Device's memory. Move-only. Resize() keeps no
// contents (it reallocates zeroed memory only when growing past capacity), so
// per-batch activations can be resized every step without allocation churn.

#include <cstddef>
#include <utility>
#include <vector>

#include "worker/device/device.h"

namespace herald::worker {

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(Device* device, size_t size) : device_(device) { Resize(size); }
  ~DeviceArray() { Release(); }
  DeviceArray(DeviceArray&& o) noexcept { *this = std::move(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      Release();
      device_ = std::exchange(o.device_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // REQUIRES: a device was given (constructor or Bind).
  void Bind(Device* device) { device_ = device; }

  // Contents are unspecified after a resize that grows past the capacity
  // (zeroed); otherwise kept.
  void Resize(size_t size) {
    if (size > capacity_) {
      Release();
      data_ = static_cast<T*>(device_->AllocateBytes(size * sizeof(T)));
      capacity_ = size;
    }
    size_ = size;
  }

  void CopyFromHost(const T* host, size_t n) {
    Resize(n);
    if (n) device_->CopyToDevice(host, data_, n * sizeof(T));
  }
  void CopyFromHost(const std::vector<T>& host) { CopyFromHost(host.data(), host.size()); }
  std::vector<T> ToHost() const {
    std::vector<T> out(size_);
    if (size_) device_->CopyToHost(data_, out.data(), size_ * sizeof(T));
    return out;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  Device* device() const { return device_; }

 private:
  void Release() {
    if (data_ != nullptr) device_->FreeBytes(data_);
    data_ = nullptr;
    capacity_ = size_ = 0;
  }

  Device* device_ = nullptr;
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace herald::worker
