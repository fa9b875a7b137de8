#include "worker/device/device.h"

#include <chrono>

namespace herald::worker {
namespace {

// The default event: when it was recorded, on the host's steady clock.
struct HostEvent {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
};

}  // namespace

void* Device::CreateEvent() { return new HostEvent; }

void Device::DestroyEvent(void* event) { delete static_cast<HostEvent*>(event); }

void Device::RecordEvent(void* event) {
  static_cast<HostEvent*>(event)->at = std::chrono::steady_clock::now();
}

double Device::EventElapsedMs(void* start, void* end) {
  return std::chrono::duration<double, std::milli>(static_cast<HostEvent*>(end)->at -
                                                   static_cast<HostEvent*>(start)->at)
      .count();
}

}  // namespace herald::worker
