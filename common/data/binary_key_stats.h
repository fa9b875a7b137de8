#pragma once
// Key statistics of a binary sample file (binary_format.h): per sparse
// feature, the most ids one sample has and a DistinctCounter of its keys.
// BinaryWriter stores them after the end marker, where every reader of the
// samples stops, found from a trailer that ends the file. A job sizes
// its caches from them instead of reading the samples (scheduler
// job_cache_sizing.h), with the same counts a pass over the samples gives.
//
//   stats   := "KST1" u32 num_sparse u32 exact_limit u32 precision
//              u64 payload_bytes u32 payload_crc32 u32 crc32(previous 28 bytes)
//              payload
//   payload := per sparse feature: u32 max_ids u32 kind u64 n, then
//              kind 0 (exact): n keys (u64, ascending) | kind 1: n = 2^precision
//              one-byte HyperLogLog registers
//   trailer := "KSTE" u32 0 u64 stats_offset u64 stats_bytes u32 0
//              u32 crc32(previous 28 bytes)                            (32 bytes)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/distinct_counter.h"
#include "common/data/sample_block.h"

namespace herald::data {

inline constexpr char kKeyStatsMagic[4] = {'K', 'S', 'T', '1'};
inline constexpr size_t kKeyStatsHeaderBytes = 32;
inline constexpr size_t kKeyStatsTrailerBytes = 32;

struct FeatureKeyStats {
  uint32_t max_ids = 0;  // the most ids of this feature in one sample
  DistinctCounter distinct;
};

// Statistics of one file, or of several merged.
struct KeyStats {
  std::vector<FeatureKeyStats> features;  // per sparse feature
  uint64_t samples = 0;                   // counted (read: the end marker's count)

  // Adds every sample of `block`. REQUIRES: block has features.size()
  // sparse features.
  void Add(const SampleBlock& block);
  // Adds what `other` counted. REQUIRES: as many features.
  void Merge(const KeyStats& other);
};

KeyStats EmptyKeyStats(uint32_t num_sparse);

// The section (header and payload) as stored, and the trailer that finds
// `bytes` of it at `offset`.
std::string EncodeKeyStats(const KeyStats& stats);
std::string KeyStatsTrailer(uint64_t offset, uint64_t bytes);

// A binary file's stored statistics, `samples` from its end marker;
// nullopt where it has none (written before they were stored, or not a
// plain binary file: compressed).
// Errors: DataLoss naming the file and what does not fit.
absl::StatusOr<std::optional<KeyStats>> ReadBinaryKeyStats(const std::string& path);

}  // namespace herald::data
