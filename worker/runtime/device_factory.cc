#include "worker/runtime/device_factory.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "worker/collectives/background_all_reducer.h"
#include "worker/collectives/host_staged_all_reducer.h"
#include "worker/device/cpu_device.h"
#include "worker/runtime/device_backend.h"

namespace herald::worker {
namespace {

struct RegisteredDevice {
  DeviceDescription description;
  std::function<std::unique_ptr<Device>()> create;
};

absl::Mutex registry_mu(absl::kConstInit);
absl::flat_hash_map<std::string, RegisteredDevice>& Registered()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* registered = new absl::flat_hash_map<std::string, RegisteredDevice>();
  return *registered;
}

std::optional<RegisteredDevice> FindRegistered(const std::string& name) {
  absl::MutexLock lock(&registry_mu);
  auto it = Registered().find(name);
  if (it == Registered().end()) return std::nullopt;
  return it->second;
}

// -1 for "cpu", N for "cuda:N".
absl::StatusOr<int> ParseDevice(const std::string& name) {
  if (name == "cpu") return -1;
  int ordinal = -1;
  if (absl::StartsWith(name, "cuda:") && absl::SimpleAtoi(name.substr(5), &ordinal) &&
      ordinal >= 0 && name.substr(5).find_first_not_of("0123456789") == std::string::npos) {
    return ordinal;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device '", name, "': expected cpu or cuda:N with N >= 0"));
}

}  // namespace

void RegisterDevice(const std::string& name, DeviceDescription description,
                    std::function<std::unique_ptr<Device>()> create) {
  absl::MutexLock lock(&registry_mu);
  Registered()[name] = {std::move(description), std::move(create)};
}

bool BuiltWithCuda() { return backend::HasCuda(); }

absl::Status CheckDeviceName(const std::string& name) {
  if (FindRegistered(name).has_value()) return absl::OkStatus();
  return ParseDevice(name).status();
}

absl::StatusOr<std::unique_ptr<Device>> CreateDevice(const std::string& name,
                                                     const DeviceOptions& options) {
  if (std::optional<RegisteredDevice> registered = FindRegistered(name))
    return registered->create();
  absl::StatusOr<int> ordinal = ParseDevice(name);
  if (!ordinal.ok()) return ordinal.status();
  if (*ordinal < 0) return std::unique_ptr<Device>(std::make_unique<CpuDevice>());
  return backend::CreateCudaDevice(*ordinal, options);
}

absl::StatusOr<DeviceDescription> DescribeDevice(const std::string& name) {
  if (std::optional<RegisteredDevice> registered = FindRegistered(name)) {
    return registered->description;
  }
  absl::StatusOr<int> ordinal = ParseDevice(name);
  if (!ordinal.ok()) return ordinal.status();
  if (*ordinal >= 0) return backend::DescribeCudaDevice(*ordinal);
  DeviceDescription cpu;
  cpu.model = "cpu";
  return cpu;
}

absl::StatusOr<std::unique_ptr<DenseAllReducer>> ConnectDenseAllReducer(
    Device* device, proto::DenseCollective collective, KvStore* store, int rank, int size,
    const CollectiveOptions& options) {
  if (size == 1) return std::unique_ptr<DenseAllReducer>(std::make_unique<SingleRankAllReducer>());
  if (collective == proto::DENSE_COLLECTIVE_NCCL) {
    return backend::ConnectNccl(device, store, rank, size, options.nccl_prefix,
                                options.gloo.timeout);
  }
  absl::StatusOr<std::unique_ptr<GlooAllReducer>> gloo =
      GlooAllReducer::Connect(store, rank, size, options.gloo);
  if (!gloo.ok()) return gloo.status();
  // Gloo on its own thread: a step's StartAllReduceSum returns at once.
  auto host = std::make_unique<BackgroundAllReducer>(std::move(*gloo));
  if (device->name() == "cpu") return std::unique_ptr<DenseAllReducer>(std::move(host));
  return std::unique_ptr<DenseAllReducer>(
      std::make_unique<HostStagedAllReducer>(device, std::move(host)));
}

}  // namespace herald::worker
