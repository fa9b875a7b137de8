#pragma once
// An event of a Device (device.h, "what blocks"), created and destroyed with
// it. Move-only; the device must outlive it.

#include <utility>

#include "worker/device/device.h"

namespace herald::worker {

class DeviceEvent {
 public:
  explicit DeviceEvent(Device* device) : device_(device), event_(device->CreateEvent()) {}
  ~DeviceEvent() {
    if (event_ != nullptr) device_->DestroyEvent(event_);
  }
  DeviceEvent(DeviceEvent&& o) noexcept
      : device_(o.device_), event_(std::exchange(o.event_, nullptr)) {}
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  DeviceEvent& operator=(DeviceEvent&&) = delete;

  // After every operation issued so far.
  void Record() { device_->RecordEvent(event_); }
  // Until every operation before the last Record has finished.
  void Wait() { device_->WaitEvent(event_); }
  bool Done() { return device_->EventDone(event_); }
  // Device time from `start` to this event, both recorded and finished.
  double MillisSince(const DeviceEvent& start) const {
    return device_->EventElapsedMs(start.event_, event_);
  }

 private:
  Device* device_;
  void* event_;
};

}  // namespace herald::worker
