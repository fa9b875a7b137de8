#pragma once
// Device time of a few spans of queued work (forward and backward, the
// optimizer steps, ...), from device events: each span is timed on the
// device's own clock, so on a GPU it is the work's time, not the host's
// time queuing it. Read once the work is done. Not thread-safe.

#include <vector>

#include "worker/device/device_event.h"

namespace herald::worker {

class DeviceTimer {
 public:
  DeviceTimer(Device* device, int spans) {
    for (int i = 0; i < 2 * spans; ++i) events_.emplace_back(device);
    stopped_.assign(spans, false);
  }

  // Before and after the work of span `span` is issued.
  void Start(int span) { events_[2 * span].Record(); }
  void Stop(int span) {
    events_[2 * span + 1].Record();
    stopped_[span] = true;
  }
  // The device time of every span stopped since the last take, summed
  // (waiting for their work first); the spans are then cleared.
  double TakeMs() {
    double ms = 0;
    for (size_t span = 0; span < stopped_.size(); ++span) {
      if (!stopped_[span]) continue;
      events_[2 * span + 1].Wait();
      ms += events_[2 * span + 1].MillisSince(events_[2 * span]);
      stopped_[span] = false;
    }
    return ms;
  }

 private:
  std::vector<DeviceEvent> events_;  // start and stop of each span
  std::vector<bool> stopped_;
};

}  // namespace herald::worker
