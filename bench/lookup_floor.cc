#include "bench/lookup_floor.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "absl/container/flat_hash_map.h"

namespace herald::bench {
namespace {

// A row's record, the size of the planner's directory entry.
struct alignas(64) Record {
  uint64_t newest = 0;  // workers holding the newest version
  uint64_t stamp = 0;   // 1 + the latest batch that used the row
};

constexpr size_t kAhead = 12;  // keys and records read ahead, as the planner does

}  // namespace

FloorTimes TimeLookupFloor(const std::vector<data::KeyBatch>& batches) {
  if (batches.empty()) return {};
  const size_t num_tables = batches.front().tables.size();
  std::vector<absl::flat_hash_map<Key, uint32_t>> index(num_tables);
  std::vector<std::vector<Record>> records(num_tables);
  std::vector<uint32_t> rows;
  std::vector<double> ms;
  uint64_t checksum = 0;
  for (size_t b = 0; b < batches.size(); ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t t = 0; t < num_tables; ++t) {
      const std::vector<Key>& keys = batches[b].tables[t].keys;
      auto& map = index[t];
      std::vector<Record>& rec = records[t];
      const size_t n = keys.size();
      rows.resize(n);
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) map.prefetch(keys[i + kAhead]);
        const auto [it, added] = map.try_emplace(keys[i], static_cast<uint32_t>(rec.size()));
        if (added) rec.emplace_back();
        rows[i] = it->second;
      }
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) __builtin_prefetch(&rec[rows[i + kAhead]]);
        Record& r = rec[rows[i]];
        checksum += static_cast<uint64_t>(__builtin_popcountll(r.newest));
        r.newest = uint64_t{1} << (i & 63);
        r.stamp = b + 1;
      }
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  // Keeps the reads from being optimised away.
  if (checksum == UINT64_MAX) ms.push_back(0);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
}

}  // namespace herald::bench
