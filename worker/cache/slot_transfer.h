#pragma once
// The executor's device mover for rows of slot arrays (the cache's rows,
// its gradients, held gradients): reading listed slots back to the host and
// writing host rows into listed slots, with the device staging reused from
// step to step. Reads of several tables go in one upload of every slot
// list, one gather of every table's rows into one device block
// (Device::GatherRowsOfTables) and one copy to the host: one wait, not one
// per table. Writes of several tables likewise go in one upload of the
// rows, one of the slots and one scatter.
//
// A read may be started and finished later (StartRead, FinishRead): its
// rows are gathered in the device's order of work and copied out into
// page-locked memory on the device's copy stream, so the host waits only
// for the work issued before the read, not for what it queues meanwhile.
// Two started reads may be in flight at once; starting a third abandons
// the older (a step that failed between the halves never finishes its).
//
// The slot list last uploaded stays on the device (uploaded_slots()) until
// the next call, so the slots just read are zeroed (ZeroRead) without being
// uploaded again. Not thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "worker/device/device_array.h"
#include "worker/device/device_event.h"
#include "worker/device/host_buffer.h"

namespace herald::worker {

class SlotTransfer {
 public:
  explicit SlotTransfer(Device* device);

  // Rows `*slots` of a device array (`stride` floats apart), their first
  // `width` floats each.
  struct Rows {
    float* array;  // written only by ZeroRead
    int stride;
    const std::vector<uint32_t>* slots;
    int width;
  };
  // Each read's rows, in slot order, `width` floats each. The slot lists
  // are then uploaded one after the other (uploaded_slots()).
  std::vector<std::vector<float>> Read(const std::vector<Rows>& reads);
  // The same in two halves: the rows are taken (in the device's order of
  // work: later operations may change the slots) when StartRead returns,
  // and FinishRead waits for them to reach the host (at most once, and
  // before two more reads are started).
  struct StartedRead {
    int lane = -1;  // -1: nothing to read
    uint64_t number = 0;
    std::vector<size_t> floats;  // per read
  };
  StartedRead StartRead(const std::vector<Rows>& reads);
  std::vector<std::vector<float>> FinishRead(StartedRead& read);
  // Zeroes, on the device, the rows `reads` listed (their first `width`
  // floats), through the slot lists the read of `reads` just uploaded: call
  // it right after Read(reads) or StartRead(reads), before anything else
  // uploads. Gradients read out are consumed this way.
  void ZeroRead(const std::vector<Rows>& reads);
  // One read: the same, for one array.
  std::vector<float> Read(float* array, int stride, const std::vector<uint32_t>& slots, int width);
  // The inverse of one read: `host` (`width` floats per slot) into rows
  // `slots` of `array`.
  void Write(const std::vector<float>& host, const std::vector<uint32_t>& slots, int width,
             int stride, float* array);
  // Several at once: each write's `*host` (`width` floats per slot, in
  // slot order) into rows `*slots` of its `array`. The slot lists are then
  // uploaded one after the other (uploaded_slots()). The rows written are
  // distinct, across the writes too.
  struct WriteRows {
    float* array;
    int stride;
    const std::vector<uint32_t>* slots;
    int width;
    const std::vector<float>* host;
  };
  void Write(const std::vector<WriteRows>& writes);

  // Uploads `slots`; returns their device copy (uploaded_slots()).
  const uint32_t* Upload(const std::vector<uint32_t>& slots);
  // The slot lists of the last Read or Upload on the device.
  const uint32_t* uploaded_slots() const { return slots_.data(); }
  // A device block of at least `floats` floats, valid until the next call
  // (contents unspecified).
  float* Scratch(size_t floats);

 private:
  Device* device_;
  DeviceArray<uint32_t> slots_;
  DeviceArray<float> staging_;  // Write and Scratch
  // A started read's device block, the host memory its rows are copied
  // into (reused, not cleared or faulted in again), and the event after
  // the copy.
  struct Lane {
    explicit Lane(Device* device) : rows(device), copied(device) { gathered.Bind(device); }
    DeviceArray<float> gathered;
    HostBuffer<float> rows;
    DeviceEvent copied;
    uint64_t number = 0;  // of the read it holds, 0: none
  };
  std::array<Lane, 2> lanes_;
  uint64_t reads_started_ = 0;
};

}  // namespace herald::worker
