// The device's embedding-bag forward and backward over every table at once
// (Device::EmbeddingBagsForward / EmbeddingBagsBackward, as a training step
// calls them) against the device's own copy bandwidth, measured in the same
// run. Bytes counted are the fewest each operation must move:
//   forward:  every entry's row read (dim floats), every bag written, the
//             offsets and slots read;
//   backward: every bag's output gradient read, every distinct slot's
//             gradient row read and written, the offsets and slots read;
//   copy:     CopyOnDevice of a large buffer, bytes read + bytes written.
// Prints GB/s of each and the ratios (issue 44's target: forward + backward
// at >= 0.6 of the copy).
//
//   bazel run -c opt //bench:embedding_bag_bench -- [--device=cpu|cuda:N --batch=16384
//       --tables=26 --dim=64 --rows=10000 --iterations=20]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "common/rng.h"
#include "worker/device/device_array.h"
#include "worker/runtime/device_factory.h"

ABSL_FLAG(std::string, device, "cpu", "cpu or cuda:N");
ABSL_FLAG(int, batch, 16384, "bags per table (one-hot: one slot each)");
ABSL_FLAG(int, tables, 26, "tables");
ABSL_FLAG(int, dim, 64, "embedding dimension");
ABSL_FLAG(int, rows, 10000, "slots per table");
ABSL_FLAG(int, iterations, 20, "timed repetitions of each operation");
ABSL_FLAG(int, copy_mb, 1024, "size of the copied buffer");

namespace herald::worker {
namespace {

// Seconds per call of `op`, after one untimed call, the device drained.
template <typename Op>
double SecondsPerCall(Device& device, int iterations, Op op) {
  op();
  device.Synchronize();
  const absl::Time start = absl::Now();
  for (int i = 0; i < iterations; ++i) op();
  device.Synchronize();
  return absl::ToDoubleSeconds(absl::Now() - start) / iterations;
}

int Run() {
  const int n = absl::GetFlag(FLAGS_batch), tables = absl::GetFlag(FLAGS_tables);
  const int dim = absl::GetFlag(FLAGS_dim), rows = absl::GetFlag(FLAGS_rows);
  const int iterations = absl::GetFlag(FLAGS_iterations);
  auto created = CreateDevice(absl::GetFlag(FLAGS_device), {});
  if (!created.ok()) {
    std::printf("%s: SKIPPED (%s)\n", absl::GetFlag(FLAGS_device).c_str(),
                created.status().ToString().c_str());
    return 0;
  }
  Device& device = **created;
  const int width = tables * dim;
  CounterRng rng(3, 0, 0);
  std::vector<DeviceArray<float>> slot_rows, grads;
  std::vector<DeviceArray<uint32_t>> offsets, slots;
  std::vector<Device::BagTable> bags;
  double distinct_rows = 0;
  for (int t = 0; t < tables; ++t) {
    std::vector<uint32_t> host_slots(n), host_offsets(n + 1);
    std::vector<bool> used(rows, false);
    for (int i = 0; i < n; ++i) {
      host_slots[i] = static_cast<uint32_t>(rng.NextBelow(rows));
      host_offsets[i] = static_cast<uint32_t>(i);
      if (!used[host_slots[i]]) ++distinct_rows;
      used[host_slots[i]] = true;
    }
    host_offsets[n] = static_cast<uint32_t>(n);
    std::vector<float> host_rows(static_cast<size_t>(rows) * dim);
    for (float& v : host_rows) v = rng.NextFloat() - 0.5f;
    slot_rows.emplace_back(&device, host_rows.size());
    slot_rows.back().CopyFromHost(host_rows);
    grads.emplace_back(&device, host_rows.size());
    offsets.emplace_back(&device, host_offsets.size());
    offsets.back().CopyFromHost(host_offsets);
    slots.emplace_back(&device, host_slots.size());
    slots.back().CopyFromHost(host_slots);
    Device::BagTable b;
    b.rows = slot_rows.back().data();
    b.row_stride = dim;
    b.offsets = offsets.back().data();
    b.slots = slots.back().data();
    b.entries = static_cast<uint32_t>(n);
    b.capacity = static_cast<uint32_t>(rows);
    b.dim = dim;
    b.grads = grads.back().data();
    b.column = t * dim;
    bags.push_back(b);
  }
  DeviceArray<float> out(&device, static_cast<size_t>(n) * width);
  DeviceArray<float> dout(&device, static_cast<size_t>(n) * width);
  device.Fill(dout.data(), dout.size(), 0.25f);
  const double index_bytes = static_cast<double>(tables) * (2.0 * n + 1) * sizeof(uint32_t);
  const double bag_bytes = static_cast<double>(tables) * n * dim * sizeof(float);
  const double forward_bytes = 2 * bag_bytes + index_bytes;  // rows read, bags written
  const double backward_bytes = bag_bytes + 2 * distinct_rows * dim * sizeof(float) + index_bytes;
  const double forward = SecondsPerCall(
      device, iterations, [&] { device.EmbeddingBagsForward(bags, n, out.data(), width); });
  const double backward = SecondsPerCall(
      device, iterations, [&] { device.EmbeddingBagsBackward(bags, n, dout.data(), width); });
  const size_t copy_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_copy_mb)) << 20;
  DeviceArray<char> from(&device, copy_bytes), to(&device, copy_bytes);
  const double copy = SecondsPerCall(device, std::max(3, iterations / 4), [&] {
    device.CopyOnDevice(from.data(), to.data(), copy_bytes);
  });
  if (!device.status().ok()) {
    std::printf("device error: %s\n", device.status().ToString().c_str());
    return 1;
  }
  const double copy_gbs = 2.0 * copy_bytes / copy / 1e9;
  const double forward_gbs = forward_bytes / forward / 1e9;
  const double backward_gbs = backward_bytes / backward / 1e9;
  const double both_gbs = (forward_bytes + backward_bytes) / (forward + backward) / 1e9;
  std::printf("%s: %d tables x %d bags x dim %d, %d slots each\n", device.name().c_str(), tables, n,
              dim, rows);
  std::printf("copy:     %8.1f GB/s (read + written)\n", copy_gbs);
  std::printf("forward:  %8.1f GB/s (%.3f ms)  ratio to copy %.2f\n", forward_gbs, 1e3 * forward,
              forward_gbs / copy_gbs);
  std::printf("backward: %8.1f GB/s (%.3f ms)  ratio to copy %.2f\n", backward_gbs, 1e3 * backward,
              backward_gbs / copy_gbs);
  std::printf("forward+backward: %8.1f GB/s  ratio to copy %.2f\n", both_gbs, both_gbs / copy_gbs);
  return 0;
}

}  // namespace
}  // namespace herald::worker

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::worker::Run();
}
