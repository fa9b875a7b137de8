#include "common/data/binary_key_stats.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/crc32.h"
#include "common/data/byte_order.h"
#include "common/status.h"

namespace herald::data {
namespace {

constexpr char kEndMagic[4] = {'E', 'N', 'D', '1'};
constexpr char kTrailerMagic[4] = {'K', 'S', 'T', 'E'};
constexpr size_t kEndBytes = 32;
constexpr uint32_t kExact = 0;
constexpr uint32_t kRegisters = 1;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads n bytes at `offset`; false on a short read.
bool ReadAt(std::FILE* f, uint64_t offset, char* out, size_t n) {
  return fseeko(f, static_cast<off_t>(offset), SEEK_SET) == 0 && std::fread(out, 1, n, f) == n;
}

// The payload after its header: every feature's statistics, checked.
absl::StatusOr<KeyStats> DecodePayload(const char* p, uint64_t bytes, uint32_t num_sparse,
                                       uint32_t exact_limit, uint32_t precision,
                                       const std::string& name) {
  auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(name, ": key statistics: ", what));
  };
  const char* end = p + bytes;
  KeyStats stats;
  for (uint32_t f = 0; f < num_sparse; ++f) {
    if (end - p < 16) return bad(absl::StrCat("feature ", f, " is cut short"));
    FeatureKeyStats feature{Get<uint32_t>(p), DistinctCounter(exact_limit, precision)};
    const uint32_t kind = Get<uint32_t>(p + 4);
    const uint64_t n = Get<uint64_t>(p + 8);
    p += 16;
    if (kind == kExact) {
      if (n > exact_limit || static_cast<uint64_t>(end - p) < n * sizeof(Key)) {
        return bad(absl::StrCat("feature ", f, ": ", n, " exact keys do not fit"));
      }
      Key previous = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const Key key = Get<Key>(p + i * sizeof(Key));
        if (i > 0 && key <= previous) {
          return bad(absl::StrCat("feature ", f, ": keys not ascending at ", i));
        }
        feature.distinct.Add(key);
        previous = key;
      }
      p += n * sizeof(Key);
    } else if (kind == kRegisters) {
      if (n != (uint64_t{1} << precision) || static_cast<uint64_t>(end - p) < n) {
        return bad(absl::StrCat("feature ", f, ": ", n, " registers, expected ",
                                uint64_t{1} << precision));
      }
      feature.distinct = DistinctCounter::FromRegisters(exact_limit, static_cast<int>(precision),
                                                        std::vector<uint8_t>(p, p + n));
      p += n;
    } else {
      return bad(absl::StrCat("feature ", f, ": unknown kind ", kind));
    }
    stats.features.push_back(std::move(feature));
  }
  if (p != end) return bad("bytes after the last feature");
  return stats;
}

}  // namespace

KeyStats EmptyKeyStats(uint32_t num_sparse) {
  KeyStats stats;
  stats.features.resize(num_sparse);
  return stats;
}

void KeyStats::Add(const SampleBlock& block) {
  samples += block.size();
  for (size_t s = 0; s < block.size(); ++s) {
    for (uint32_t f = 0; f < features.size(); ++f) {
      const absl::Span<const uint64_t> keys = block.Keys(s, f);
      FeatureKeyStats& feature = features[f];
      feature.max_ids = std::max(feature.max_ids, static_cast<uint32_t>(keys.size()));
      for (Key key : keys) feature.distinct.Add(key);
    }
  }
}

void KeyStats::Merge(const KeyStats& other) {
  samples += other.samples;
  for (size_t f = 0; f < features.size(); ++f) {
    features[f].max_ids = std::max(features[f].max_ids, other.features[f].max_ids);
    features[f].distinct.Merge(other.features[f].distinct);
  }
}

std::string EncodeKeyStats(const KeyStats& stats) {
  const DistinctCounter defaults;
  std::string payload;
  for (const FeatureKeyStats& f : stats.features) {
    Put<uint32_t>(&payload, f.max_ids);
    if (f.distinct.exact()) {
      const std::vector<Key> keys = f.distinct.SortedKeys();
      Put<uint32_t>(&payload, kExact);
      Put<uint64_t>(&payload, keys.size());
      payload.append(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(Key));
    } else {
      const std::vector<uint8_t>& registers = f.distinct.registers();
      Put<uint32_t>(&payload, kRegisters);
      Put<uint64_t>(&payload, registers.size());
      payload.append(reinterpret_cast<const char*>(registers.data()), registers.size());
    }
  }
  const DistinctCounter& first =
      stats.features.empty() ? defaults : stats.features.front().distinct;
  std::string out(kKeyStatsMagic, 4);
  Put<uint32_t>(&out, static_cast<uint32_t>(stats.features.size()));
  Put<uint32_t>(&out, static_cast<uint32_t>(first.exact_limit()));
  Put<uint32_t>(&out, static_cast<uint32_t>(first.precision()));
  Put<uint64_t>(&out, payload.size());
  Put<uint32_t>(&out, Crc32(payload.data(), payload.size()));
  Put<uint32_t>(&out, Crc32(out.data(), out.size()));
  return out + payload;
}

std::string KeyStatsTrailer(uint64_t offset, uint64_t bytes) {
  std::string out(kTrailerMagic, 4);
  Put<uint32_t>(&out, 0);
  Put<uint64_t>(&out, offset);
  Put<uint64_t>(&out, bytes);
  Put<uint32_t>(&out, 0);
  Put<uint32_t>(&out, Crc32(out.data(), out.size()));
  return out;
}

absl::StatusOr<std::optional<KeyStats>> ReadBinaryKeyStats(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  if (fseeko(f.get(), 0, SEEK_END) != 0) return std::nullopt;
  const off_t size = ftello(f.get());
  char trailer[kKeyStatsTrailerBytes];
  if (size < static_cast<off_t>(kKeyStatsTrailerBytes) ||
      !ReadAt(f.get(), size - kKeyStatsTrailerBytes, trailer, sizeof(trailer)) ||
      std::memcmp(trailer, kTrailerMagic, 4) != 0) {
    return std::nullopt;  // ends at its end marker, or not a plain binary file
  }
  auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(path, ": key statistics: ", what));
  };
  if (Get<uint32_t>(trailer + 28) != Crc32(trailer, 28)) return bad("trailer checksum mismatch");
  const uint64_t at = Get<uint64_t>(trailer + 8);
  const uint64_t section = Get<uint64_t>(trailer + 16);
  char end[kEndBytes];
  char h[kKeyStatsHeaderBytes];
  if (at < kEndBytes || section < kKeyStatsHeaderBytes ||
      at + section + kKeyStatsTrailerBytes != static_cast<uint64_t>(size) ||
      !ReadAt(f.get(), at - kEndBytes, end, kEndBytes) || std::memcmp(end, kEndMagic, 4) != 0 ||
      Get<uint32_t>(end + 28) != Crc32(end, 28)) {
    return bad(absl::StrCat("offset ", at, " and ", section,
                            " bytes do not follow an end marker in a file of ", size, " bytes"));
  }
  if (!ReadAt(f.get(), at, h, sizeof(h)) || std::memcmp(h, kKeyStatsMagic, 4) != 0 ||
      Get<uint32_t>(h + 28) != Crc32(h, 28)) {
    return bad(absl::StrCat("bad header at offset ", at));
  }
  const uint32_t num_sparse = Get<uint32_t>(h + 4);
  const uint32_t exact_limit = Get<uint32_t>(h + 8);
  const uint32_t precision = Get<uint32_t>(h + 12);
  const uint64_t bytes = Get<uint64_t>(h + 16);
  if (num_sparse > DataSchema::kMaxSparse || precision < 4 || precision > 18 ||
      bytes != section - kKeyStatsHeaderBytes) {
    return bad(absl::StrCat(num_sparse, " features, precision ", precision, ", ", bytes,
                            " bytes do not fit"));
  }
  std::string payload(bytes, '\0');
  if (!ReadAt(f.get(), at + kKeyStatsHeaderBytes, payload.data(), bytes) ||
      Crc32(payload.data(), bytes) != Get<uint32_t>(h + 24)) {
    return bad("checksum mismatch");
  }
  HERALD_ASSIGN_OR_RETURN(KeyStats stats, DecodePayload(payload.data(), bytes, num_sparse,
                                                        exact_limit, precision, path));
  stats.samples = Get<uint64_t>(end + 8);
  return std::optional<KeyStats>(std::move(stats));
}

}  // namespace herald::data
