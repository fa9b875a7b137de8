#include "worker/cache/slot_transfer.h"

#include <cstdio>
#include <cstdlib>

namespace herald::worker {

SlotTransfer::SlotTransfer(Device* device) : device_(device), lanes_{Lane(device), Lane(device)} {
  slots_.Bind(device);
  staging_.Bind(device);
}

const uint32_t* SlotTransfer::Upload(const std::vector<uint32_t>& slots) {
  slots_.CopyFromHost(slots);
  return slots_.data();
}

float* SlotTransfer::Scratch(size_t floats) {
  staging_.Resize(floats);
  return staging_.data();
}

std::vector<float> SlotTransfer::Read(float* array, int stride, const std::vector<uint32_t>& slots,
                                      int width) {
  std::vector<std::vector<float>> read = Read({Rows{array, stride, &slots, width}});
  return std::move(read[0]);
}

std::vector<std::vector<float>> SlotTransfer::Read(const std::vector<Rows>& reads) {
  StartedRead read = StartRead(reads);
  return FinishRead(read);
}

SlotTransfer::StartedRead SlotTransfer::StartRead(const std::vector<Rows>& reads) {
  StartedRead started;
  std::vector<uint32_t> slots;
  size_t floats = 0;
  for (const Rows& r : reads) {
    slots.insert(slots.end(), r.slots->begin(), r.slots->end());
    started.floats.push_back(r.slots->size() * static_cast<size_t>(r.width));
    floats += started.floats.back();
  }
  if (slots.empty()) return started;
  // A free lane, else the one of the older read (abandoned: its copy is
  // waited for before the lane is reused).
  started.lane = lanes_[0].number == 0                 ? 0
                 : lanes_[1].number == 0               ? 1
                 : lanes_[0].number < lanes_[1].number ? 0
                                                       : 1;
  Lane& lane = lanes_[started.lane];
  if (lane.number != 0) lane.copied.Wait();
  started.number = lane.number = ++reads_started_;
  Upload(slots);
  lane.gathered.Resize(floats);
  std::vector<Device::RowsOfTable> gathers;
  size_t slot_at = 0, float_at = 0;
  for (const Rows& r : reads) {
    const int n = static_cast<int>(r.slots->size());
    gathers.push_back(
        {r.array, r.stride, slots_.data() + slot_at, n, r.width, lane.gathered.data() + float_at});
    slot_at += r.slots->size();
    float_at += r.slots->size() * static_cast<size_t>(r.width);
  }
  device_->GatherRowsOfTables(gathers);
  lane.rows.Reserve(floats, 0);
  device_->CopyToHostBuffer(lane.gathered.data(), lane.rows.data(), floats * sizeof(float));
  lane.copied.Record();
  return started;
}

void SlotTransfer::ZeroRead(const std::vector<Rows>& reads) {
  std::vector<Device::RowsOfTable> zeros;
  size_t slot_at = 0;  // into the uploaded lists, one after the other
  for (const Rows& r : reads) {
    const int n = static_cast<int>(r.slots->size());
    zeros.push_back({r.array, r.stride, slots_.data() + slot_at, n, r.width});
    slot_at += r.slots->size();
  }
  device_->ZeroRowsOfTables(zeros);
}

std::vector<std::vector<float>> SlotTransfer::FinishRead(StartedRead& read) {
  std::vector<std::vector<float>> out(read.floats.size());
  if (read.lane < 0) return out;
  Lane& lane = lanes_[read.lane];
  if (lane.number != read.number) {
    std::fprintf(stderr, "SlotTransfer: read %llu finished twice or after it was abandoned\n",
                 static_cast<unsigned long long>(read.number));
    std::abort();
  }
  lane.copied.Wait();  // the one wait
  const float* all = lane.rows.data();
  for (size_t i = 0; i < read.floats.size(); ++i) {
    out[i].assign(all, all + read.floats[i]);
    all += read.floats[i];
  }
  lane.number = 0;
  read.lane = -1;
  return out;
}

void SlotTransfer::Write(const std::vector<float>& host, const std::vector<uint32_t>& slots,
                         int width, int stride, float* array) {
  Write({WriteRows{array, stride, &slots, width, &host}});
}

void SlotTransfer::Write(const std::vector<WriteRows>& writes) {
  std::vector<uint32_t> slots;
  std::vector<float> rows;
  for (const WriteRows& w : writes) {
    slots.insert(slots.end(), w.slots->begin(), w.slots->end());
    rows.insert(rows.end(), w.host->begin(), w.host->end());
  }
  if (slots.empty()) return;
  staging_.CopyFromHost(rows);
  Upload(slots);
  std::vector<Device::RowsOfTable> scatters;
  size_t slot_at = 0, float_at = 0;
  for (const WriteRows& w : writes) {
    const int n = static_cast<int>(w.slots->size());
    scatters.push_back(
        {w.array, w.stride, slots_.data() + slot_at, n, w.width, staging_.data() + float_at});
    slot_at += w.slots->size();
    float_at += w.slots->size() * static_cast<size_t>(w.width);
  }
  device_->ScatterRowsOfTables(scatters);
}

}  // namespace herald::worker
