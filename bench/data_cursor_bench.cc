// What a resumed job pays to find its place in the data stream: restoring
// the checkpoint's data cursor (BatchStream::RestoreCursor: the binary
// file reopened at the recorded block, the shuffle pool refilled from the
// cursor) against the baseline measured in the same run, reading the
// batches before the checkpoint without building them (BatchStream::Skip,
// what a resume does without a cursor). Also checks that both streams give
// the same next batch.
//
//   bazel build -c opt //bench:data_cursor_bench
//   ./bazel-out/k8-opt/bin/bench/data_cursor_bench [--samples 2400000] [--at 100,500,1000]
//
// Data: the generator's Criteo-shaped samples written to a binary file in
// a temporary directory (blocks of 4 096), global batches of 2 048, a
// shuffle buffer of 100 000 samples.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/data/binary_format.h"
#include "common/data/generator.h"
#include "scheduler/data/batch_stream.h"

ABSL_FLAG(uint64_t, samples, 2400000, "samples in the data file");
ABSL_FLAG(std::string, at, "100,500,1000", "checkpoint batches to measure, ascending");
ABSL_FLAG(uint32_t, batch, 2048, "global batch size");
ABSL_FLAG(uint64_t, shuffle, 100000, "shuffle buffer (samples)");

namespace herald {
namespace {

double MsSince(absl::Time t) { return absl::ToDoubleMilliseconds(absl::Now() - t); }

int Main() {
  const std::string dir = absl::StrCat(std::filesystem::temp_directory_path().string(),
                                       "/data_cursor_bench-", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/data.bin";
  data::GeneratorOptions go;
  data::SyntheticGenerator gen(go);
  {
    auto w = data::BinaryWriter::Create(path, gen.schema(), 4096);
    if (!w.ok()) return std::printf("%s\n", w.status().ToString().c_str()), 1;
    const uint64_t n = absl::GetFlag(FLAGS_samples);
    for (uint64_t first = 0; first < n; first += 65536) {
      data::SampleBlock block(gen.schema());
      gen.Generate(first, std::min<uint64_t>(65536, n - first), &block);
      if (!(*w)->Write(block).ok()) return 1;
    }
    if (!(*w)->Close().ok()) return 1;
  }
  scheduler::BatchStreamOptions o;
  o.data.set_format(proto::DATA_FORMAT_HERALD_BINARY);
  o.data.add_paths(path);
  o.data.set_shuffle_buffer(absl::GetFlag(FLAGS_shuffle));
  o.schema = gen.schema();
  o.global_batch_size = absl::GetFlag(FLAGS_batch);
  o.iterations = 1 << 30;
  std::printf("== data cursor: %lu samples in one binary file, batches of %u, shuffle %lu ==\n",
              absl::GetFlag(FLAGS_samples), o.global_batch_size, absl::GetFlag(FLAGS_shuffle));
  std::printf("%10s %12s %14s %14s %12s\n", "at batch", "cursor", "restore ms", "read ms (base)",
              "restore/read");
  int failures = 0;
  for (absl::string_view a : absl::StrSplit(absl::GetFlag(FLAGS_at), ',')) {
    uint64_t at = 0;
    if (!absl::SimpleAtoi(a, &at)) return 2;
    // The cursor a checkpoint after `at` batches writes.
    auto saved = scheduler::BatchStream::Open(o);
    if (!saved.ok()) return std::printf("%s\n", saved.status().ToString().c_str()), 1;
    if (!(*saved)->Skip(at).ok()) return 1;
    const std::string cursor = *(*saved)->SaveCursor();
    // Baseline: a fresh stream reads its way there.
    absl::Time t = absl::Now();
    auto read = scheduler::BatchStream::Open(o);
    const uint64_t skipped = *(*read)->Skip(at);
    const double read_ms = MsSince(t);
    t = absl::Now();
    auto restored = scheduler::BatchStream::Open(o);
    const absl::Status s = (*restored)->RestoreCursor(cursor);
    const double restore_ms = MsSince(t);
    data::KeyBatch x, y;
    if (!s.ok() || skipped != at || !*(*read)->Next(&x) || !*(*restored)->Next(&y) ||
        x.tables[0].keys != y.tables[0].keys || x.labels != y.labels) {
      std::printf("at %lu: the restored stream differs (%s)\n", at, s.ToString().c_str());
      ++failures;
    }
    std::printf("%10lu %9.1f MB %14.1f %14.1f %12.4f\n", at, cursor.size() / 1e6, restore_ms,
                read_ms, restore_ms / read_ms);
  }
  std::filesystem::remove_all(dir);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::Main();
}
