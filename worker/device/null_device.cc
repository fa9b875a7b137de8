#include "worker/device/null_device.h"

#include <sys/mman.h>

#include <memory>

#include "worker/runtime/device_factory.h"

namespace herald::worker {

NullDevice::~NullDevice() {
  absl::MutexLock lock(&mu_);
  for (const auto& [address, bytes] : mapped_) munmap(address, bytes);
}

void* NullDevice::AllocateBytes(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  absl::MutexLock lock(&mu_);
  mapped_[p] = bytes;
  return p;
}

void NullDevice::FreeBytes(void* p) {
  if (p == nullptr) return;
  absl::MutexLock lock(&mu_);
  auto it = mapped_.find(p);
  if (it == mapped_.end()) return;
  munmap(it->first, it->second);
  mapped_.erase(it);
}

void RegisterNullDevice() {
  DeviceDescription description;
  description.kind = proto::DEVICE_KIND_CPU;
  description.model = "null (no computation)";
  RegisterDevice("null", description,
                 [] { return std::unique_ptr<Device>(std::make_unique<NullDevice>()); });
}

}  // namespace herald::worker
