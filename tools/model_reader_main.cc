// model_reader: reads an exported model (heraldctl export) or a periodic
// checkpoint, checking every CRC, and prints what it holds.
//
//   model_reader DIR [--key TABLE:KEY] [--dump]
//
// Prints the job, the iterations trained, the dense parameters and, per
// table, its dim, row width and rows; with --key, the row of KEY in TABLE
// (embedding, then optimizer state). Exit codes: 0 read, 1 the model could
// not be read (the message names the file and the problem) or the key is
// not in it, 2 usage. --dump then prints every value exactly (C's %a):
// "dense" and the dense parameters on one line, then per table and key in
// the reader's order "TABLE KEY" and the row's floats.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/command_line.h"
#include "tools/model_reader.h"

ABSL_FLAG(std::string, key, "", "TABLE:KEY: print this row (table index, key)");
ABSL_FLAG(bool, dump, false, "print every dense parameter and row exactly (%a)");

int main(int argc, char** argv) {
  const std::vector<std::string> args = herald::ParseCommandLine(argc, argv);
  if (args.size() != 1) {
    std::fprintf(stderr, "usage: model_reader DIR [--key TABLE:KEY] [--dump]\n");
    return 2;
  }
  auto model = herald::tools::ReadModelExport(args[0]);
  if (absl::IsNotFound(model.status())) model = herald::tools::ReadCheckpointModel(args[0]);
  if (!model.ok()) {
    std::fprintf(stderr, "model_reader: %s\n", std::string(model.status().message()).c_str());
    return 1;
  }
  const herald::proto::ModelExport& m = model->manifest;
  std::printf("job %s: %llu iterations, %zu dense parameters (crc32 %s), %zu tables\n",
              m.job_id().c_str(), static_cast<unsigned long long>(m.iterations()),
              model->dense.size(), m.dense_crc32().c_str(), model->tables.size());
  for (size_t t = 0; t < model->tables.size(); ++t) {
    const herald::tools::ExportedTable& table = model->tables[t];
    std::printf("table %zu: dim %u, %u floats per row, %zu rows\n", t, table.dim, table.row_floats,
                table.keys.size());
  }
  if (const std::string key = absl::GetFlag(FLAGS_key); !key.empty()) {
    std::vector<std::string> parts = absl::StrSplit(key, ':');
    uint32_t table = 0;
    uint64_t k = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &table) ||
        !absl::SimpleAtoi(parts[1], &k) || table >= model->tables.size()) {
      std::fprintf(stderr, "model_reader: --key %s: expected TABLE:KEY with TABLE < %zu\n",
                   key.c_str(), model->tables.size());
      return 2;
    }
    const float* row = model->tables[table].Find(k);
    if (row == nullptr) {
      std::fprintf(stderr, "model_reader: key %llu is not in table %u (never trained)\n",
                   static_cast<unsigned long long>(k), table);
      return 1;
    }
    for (uint32_t i = 0; i < model->tables[table].row_floats; ++i) {
      std::printf(i == 0 ? "%.9g" : " %.9g", row[i]);
    }
    std::printf("\n");
  }
  if (absl::GetFlag(FLAGS_dump)) {
    std::printf("dense");
    for (float v : model->dense) std::printf(" %a", v);
    std::printf("\n");
    for (size_t t = 0; t < model->tables.size(); ++t) {
      const herald::tools::ExportedTable& table = model->tables[t];
      for (size_t i = 0; i < table.keys.size(); ++i) {
        std::printf("%zu %llu", t, static_cast<unsigned long long>(table.keys[i]));
        for (uint32_t f = 0; f < table.row_floats; ++f) {
          std::printf(" %a", table.rows[i * table.row_floats + f]);
        }
        std::printf("\n");
      }
    }
  }
  return 0;
}
