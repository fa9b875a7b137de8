// TSV parsing throughput, next to two baselines measured on the same file in
// the same run (page cache warm, one core):
//   read   : fread of the whole file in 4 MiB chunks (touching every byte)
//   lines  : the same plus finding every line end with memchr
//   parse  : CriteoTsvReader into columnar SampleBlocks (full validation)
//   csv    : CsvReader with the Criteo preset schema (CriteoColumns(), tab,
//            no header) on the same file: the general schema reader
// Prints MB/s for each, parse/read and parse/lines ratios, and the schema
// reader's µs per sample against the Criteo reader's and the line split's.
// Targets: parse at least 0.5x the plain read; csv at most 1.5x parse.

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/data/column_schema.h"
#include "common/data/criteo_tsv.h"
#include "common/data/csv_reader.h"
#include "common/data/generator.h"

ABSL_FLAG(uint64_t, rows, 500000, "rows in the generated test file");
ABSL_FLAG(std::string, file, "", "benchmark this TSV file instead of generating one");
ABSL_FLAG(int, repeats, 3, "runs per method; the best is reported");

namespace {

using Clock = std::chrono::steady_clock;

double BestSeconds(int repeats, const std::function<uint64_t()>& fn, uint64_t* checksum) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = Clock::now();
    *checksum = fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

uint64_t PlainRead(const std::string& path, bool find_lines) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::vector<char> buf(4 << 20);
  uint64_t acc = 0;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    if (find_lines) {
      const char* p = buf.data();
      const char* end = p + n;
      while ((p = static_cast<const char*>(std::memchr(p, '\n', end - p))) != nullptr) {
        ++acc;
        ++p;
      }
    } else {
      // Touch every byte so the baseline is not just a memcpy from the page cache.
      const uint64_t* w = reinterpret_cast<const uint64_t*>(buf.data());
      for (size_t i = 0; i < n / 8; ++i) acc += w[i];
    }
  }
  std::fclose(f);
  return acc;
}

uint64_t Parse(const std::string& path, bool schema_reader) {
  herald::data::ReaderOptions o;
  o.on_malformed = herald::data::OnMalformed::kFail;
  absl::StatusOr<std::unique_ptr<herald::data::SampleReader>> reader;
  if (schema_reader) {
    reader = herald::data::CsvReader::Open({path}, herald::data::CriteoColumns(), o);
  } else {
    reader = herald::data::CriteoTsvReader::Open({path}, o);
  }
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
    std::exit(1);
  }
  herald::data::SampleBlock block;
  uint64_t rows = 0;
  while (true) {
    block.Clear();
    auto n = (*reader)->Read(8192, &block);
    if (!n.ok()) {
      std::fprintf(stderr, "%s\n", std::string(n.status().message()).c_str());
      std::exit(1);
    }
    if (*n == 0) break;
    rows += *n;
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::string path = absl::GetFlag(FLAGS_file);
  bool generated = path.empty();
  if (generated) {
    path = std::filesystem::temp_directory_path() / "herald_tsv_bench.tsv";
    herald::data::GeneratorOptions go;
    go.seed = 1;
    herald::data::SyntheticGenerator gen(go);
    auto writer = herald::data::CriteoTsvWriter::Create(path);
    uint64_t rows = absl::GetFlag(FLAGS_rows);
    for (uint64_t first = 0; first < rows; first += 65536) {
      herald::data::SampleBlock b(gen.schema());
      gen.Generate(first, std::min<uint64_t>(65536, rows - first), &b);
      (void)(*writer)->Write(b);
    }
    (void)(*writer)->Close();
  }
  const double mb = std::filesystem::file_size(path) / 1e6;
  const int repeats = absl::GetFlag(FLAGS_repeats);
  uint64_t sink = 0;
  PlainRead(path, false);  // warm the page cache
  double t_read = BestSeconds(
      repeats, [&] { return PlainRead(path, false); }, &sink);
  double t_lines = BestSeconds(
      repeats, [&] { return PlainRead(path, true); }, &sink);
  uint64_t rows = 0;
  double t_parse = BestSeconds(
      repeats, [&] { return Parse(path, false); }, &rows);
  uint64_t csv_rows = 0;
  double t_csv = BestSeconds(
      repeats, [&] { return Parse(path, true); }, &csv_rows);
  if (csv_rows != rows) {
    std::fprintf(stderr, "the schema reader read %llu rows, the Criteo reader %llu\n",
                 static_cast<unsigned long long>(csv_rows), static_cast<unsigned long long>(rows));
    return 1;
  }
  std::printf("file: %s (%.1f MB, %llu rows)\n", path.c_str(), mb,
              static_cast<unsigned long long>(rows));
  std::printf("%-8s %10s\n", "method", "MB/s");
  std::printf("%-8s %10.1f\n", "read", mb / t_read);
  std::printf("%-8s %10.1f\n", "lines", mb / t_lines);
  std::printf("%-8s %10.1f   (%.2f M rows/s)\n", "parse", mb / t_parse, rows / t_parse / 1e6);
  std::printf("%-8s %10.1f   (%.2f M rows/s)\n", "csv", mb / t_csv, rows / t_csv / 1e6);
  std::printf("ratio parse/read  = %.2f (target >= 0.50)\n", t_read / t_parse);
  std::printf("ratio parse/lines = %.2f\n", t_lines / t_parse);
  const double us = 1e6 / static_cast<double>(rows);
  std::printf("us/sample: lines %.3f, parse %.3f, csv %.3f\n", t_lines * us, t_parse * us,
              t_csv * us);
  std::printf("ratio csv/parse   = %.2f (target <= 1.50)\n", t_csv / t_parse);
  std::printf("ratio csv/lines   = %.2f\n", t_csv / t_lines);
  if (generated) std::filesystem::remove(path);
  return 0;
}
