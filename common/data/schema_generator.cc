#include "common/data/schema_generator.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/data/zipf.h"
#include "common/rng.h"

namespace herald::data {
namespace {

// A weight in [-1, 1) fixed by (seed, column, id).
double Weight(uint64_t seed, size_t column, uint64_t id) {
  const uint64_t h = Mix64(seed ^ Mix64(column * 0x9E3779B97F4A7C15ull + id));
  return static_cast<double>(h >> 11) / static_cast<double>(1ull << 52) - 1.0;
}

// The id `rank` written as the column writes ids.
std::string IdText(const ColumnSchema& c, uint64_t rank) {
  switch (c.ids) {
    case IdFormat::kHex:
      return absl::StrFormat("%x", rank);
    case IdFormat::kDecimal:
      return absl::StrCat(rank);
    case IdFormat::kString:
      return absl::StrCat(c.name, "-", rank);
  }
  return "";
}

}  // namespace

SchemaGenerator::SchemaGenerator(ColumnsSchema schema, SchemaGeneratorOptions options)
    : schema_(std::move(schema)), options_(options) {}

std::string SchemaGenerator::Header() const {
  std::string out;
  for (size_t c = 0; c < schema_.columns.size(); ++c) {
    if (c > 0) out.push_back(schema_.separator);
    out += schema_.columns[c].name;
  }
  return out;
}

std::string SchemaGenerator::Row(uint64_t row) const {
  CounterRng rng(options_.seed, /*stream=*/0x736368656d61ull, row);  // "schema"
  const ZipfDistribution zipf(options_.cardinality, 1.1);
  const size_t n = schema_.columns.size();
  std::vector<std::string> fields(n);
  double logit = 0;
  for (size_t c = 0; c < n; ++c) {
    const ColumnSchema& col = schema_.columns[c];
    switch (col.role) {
      case ColumnRole::kDense: {
        const double x = rng.NextGaussian() * static_cast<double>(c + 1);
        if (rng.NextDouble() < options_.missing_rate) break;
        fields[c] = absl::StrFormat("%.4f", x);
        logit += 0.3 * Weight(options_.seed, c, 0) * x / static_cast<double>(c + 1);
        break;
      }
      case ColumnRole::kSparse: {
        if (rng.NextDouble() < options_.missing_rate) break;
        const int count = col.multi_hot_separator != 0 ? 1 + static_cast<int>(rng.NextBelow(3)) : 1;
        for (int k = 0; k < count; ++k) {
          const uint64_t rank = zipf.Sample(rng);
          if (k > 0) fields[c].push_back(col.multi_hot_separator);
          fields[c] += IdText(col, rank);
          double weight = 1.0;
          if (col.weight_separator != 0) {  // weights 0.25, 0.5, …, 2
            weight = 0.25 * static_cast<double>(1 + rng.NextBelow(8));
            fields[c].push_back(col.weight_separator);
            fields[c] += absl::StrFormat("%g", weight);
          }
          logit += weight * Weight(options_.seed, c, rank) / count;
        }
        break;
      }
      case ColumnRole::kIgnore:
        fields[c] = absl::StrCat("w", rng.NextBelow(100));
        break;
      case ColumnRole::kLabel:
        break;  // below, from the teacher's logit
    }
  }
  for (size_t c = 0; c < n; ++c) {
    const ColumnSchema& col = schema_.columns[c];
    if (col.role != ColumnRole::kLabel) continue;
    if (col.label == LabelKind::kBinary) {
      fields[c] = rng.NextDouble() < 1.0 / (1.0 + std::exp(-logit)) ? "1" : "0";
    } else {
      fields[c] = absl::StrFormat("%.4f", logit + 0.1 * rng.NextGaussian());
    }
  }
  std::string out;
  for (size_t c = 0; c < n; ++c) {
    if (c > 0) out.push_back(schema_.separator);
    out += fields[c];
  }
  return out;
}

}  // namespace herald::data
