// Compares two exported models (heraldctl export): the largest absolute
// difference of the dense parameters and of the embedding rows (values and
// optimizer state) of the keys both trained, and the keys only one has.
//
//   model_diff DIR_A DIR_B
//
// Prints one line:
//   dense N max_abs_diff X; embeddings R rows max_abs_diff Y; keys only in a: P, only in b: Q
// Exit codes: 0 compared, 1 an export could not be read or the models have
// different shapes, 2 usage.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/model_reader.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args = herald::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: model_diff DIR_A DIR_B\n");
    return 2;
  }
  auto a = herald::tools::ReadModelExport(args[0]);
  auto b = herald::tools::ReadModelExport(args[1]);
  for (const auto* m : {&a, &b}) {
    if (!m->ok()) {
      std::fprintf(stderr, "model_diff: %s\n", std::string(m->status().message()).c_str());
      return 1;
    }
  }
  if (a->dense.size() != b->dense.size() || a->tables.size() != b->tables.size()) {
    std::fprintf(stderr, "model_diff: different shapes: %zu vs %zu dense, %zu vs %zu tables\n",
                 a->dense.size(), b->dense.size(), a->tables.size(), b->tables.size());
    return 1;
  }
  double dense_diff = 0;
  for (size_t i = 0; i < a->dense.size(); ++i) {
    dense_diff = std::max(dense_diff, std::fabs(double{a->dense[i]} - b->dense[i]));
  }
  double row_diff = 0;
  uint64_t rows = 0, only_a = 0, only_b = 0;
  for (size_t t = 0; t < a->tables.size(); ++t) {
    const herald::tools::ExportedTable& ta = a->tables[t];
    const herald::tools::ExportedTable& tb = b->tables[t];
    if (ta.row_floats != tb.row_floats) {
      std::fprintf(stderr, "model_diff: table %zu: %u vs %u floats per row\n", t, ta.row_floats,
                   tb.row_floats);
      return 1;
    }
    uint64_t shared = 0;
    for (size_t i = 0; i < ta.keys.size(); ++i) {
      const float* rb = tb.Find(ta.keys[i]);
      if (rb == nullptr) {
        ++only_a;
        continue;
      }
      ++shared;
      const float* ra = ta.rows.data() + i * ta.row_floats;
      for (uint32_t f = 0; f < ta.row_floats; ++f) {
        row_diff = std::max(row_diff, std::fabs(double{ra[f]} - rb[f]));
      }
    }
    rows += shared;
    only_b += tb.keys.size() - shared;
  }
  std::printf(
      "dense %zu max_abs_diff %.3g; embeddings %llu rows max_abs_diff %.3g; "
      "keys only in a: %llu, only in b: %llu\n",
      a->dense.size(), dense_diff, static_cast<unsigned long long>(rows), row_diff,
      static_cast<unsigned long long>(only_a), static_cast<unsigned long long>(only_b));
  return 0;
}
