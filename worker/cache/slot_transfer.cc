#include "worker/cache/slot_transfer.h"

namespace herald::worker {

SlotTransfer::SlotTransfer(Device* device) : device_(device), read_back_(device) {
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

std::vector<float> SlotTransfer::Read(const float* array, int stride,
                                      const std::vector<uint32_t>& slots, int width) {
  std::vector<std::vector<float>> read = Read({Rows{array, stride, &slots, width}});
  return std::move(read[0]);
}

std::vector<std::vector<float>> SlotTransfer::Read(const std::vector<Rows>& reads) {
  std::vector<uint32_t> slots;
  size_t floats = 0;
  for (const Rows& r : reads) {
    slots.insert(slots.end(), r.slots->begin(), r.slots->end());
    floats += r.slots->size() * static_cast<size_t>(r.width);
  }
  std::vector<std::vector<float>> out(reads.size());
  if (slots.empty()) return out;
  Upload(slots);
  staging_.Resize(floats);
  size_t slot_at = 0, float_at = 0;
  for (const Rows& r : reads) {
    const int n = static_cast<int>(r.slots->size());
    device_->GatherRows(r.array, r.stride, slots_.data() + slot_at, n, r.width,
                        staging_.data() + float_at);
    slot_at += r.slots->size();
    float_at += r.slots->size() * static_cast<size_t>(r.width);
  }
  // The one wait.
  read_back_.Reserve(floats, 0);
  device_->CopyToHost(staging_.data(), read_back_.data(), floats * sizeof(float));
  const float* all = read_back_.data();
  float_at = 0;
  for (size_t i = 0; i < reads.size(); ++i) {
    const size_t n = reads[i].slots->size() * static_cast<size_t>(reads[i].width);
    out[i].assign(all + float_at, all + float_at + n);
    float_at += n;
  }
  return out;
}

void SlotTransfer::Write(const std::vector<float>& host, const std::vector<uint32_t>& slots,
                         int width, int stride, float* array) {
  staging_.CopyFromHost(host);
  Upload(slots);
  device_->ScatterRows(staging_.data(), slots_.data(), static_cast<int>(slots.size()), width,
                       stride, array);
}

}  // namespace herald::worker
