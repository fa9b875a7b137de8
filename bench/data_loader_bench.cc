// The scheduler's data loader alone: CPU microseconds per sample to read a
// Herald binary file into global batches, raw (BatchStream::NextSamples,
// what the cache-sizing pass reads) and converted to KeyBatch
// (BatchStream::Next, what the planner gets), without and with a shuffle
// buffer. The raw pass is the baseline in the same run: the conversion's
// cost is the difference. A fingerprint of the batches tells two builds
// that give the same batches.
//
//   bazel build -c opt //bench:data_loader_bench
//   bazel-bin/bench/data_loader_bench --data FILE [--batch 16384] [--shuffle 100000]

#include <sys/resource.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "scheduler/data/batch_stream.h"

ABSL_FLAG(std::string, data, "", "a Herald binary file (heraldctl gen-data --format bin)");
ABSL_FLAG(uint32_t, batch, 16384, "global batch size");
ABSL_FLAG(uint32_t, shuffle, 100000, "shuffle buffer of the shuffled runs (samples)");

namespace herald::scheduler {
namespace {

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// A fingerprint of every batch's keys, in order: two builds that give the
// same batches print the same one.
uint64_t Fingerprint(uint64_t h, const data::SampleBlock& b) {
  for (uint64_t k : b.keys) h = (h ^ k) * 0x100000001b3ULL;
  for (float l : b.labels) h = (h ^ static_cast<uint64_t>(l * 2)) * 0x100000001b3ULL;
  return h;
}

// CPU µs per sample over one epoch; -1 on error. `fingerprint`: of the raw
// batches.
double Measure(uint32_t shuffle, bool convert, uint64_t* fingerprint = nullptr) {
  BatchStreamOptions o;
  o.data.set_format(proto::DATA_FORMAT_HERALD_BINARY);
  o.data.add_paths(absl::GetFlag(FLAGS_data));
  o.data.set_shuffle_buffer(shuffle);
  o.global_batch_size = absl::GetFlag(FLAGS_batch);
  o.epochs = 1;
  absl::StatusOr<std::unique_ptr<BatchStream>> stream = BatchStream::Open(o);
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", std::string(stream.status().message()).c_str());
    return -1;
  }
  const double start = CpuSeconds();
  uint64_t samples = 0;
  data::KeyBatch batch;
  const data::SampleBlock* raw = nullptr;
  for (;;) {
    absl::StatusOr<bool> more = convert ? (*stream)->Next(&batch) : (*stream)->NextSamples(&raw);
    if (!more.ok() || !*more) break;
    if (fingerprint != nullptr && !convert) *fingerprint = Fingerprint(*fingerprint, *raw);
    samples += o.global_batch_size;
  }
  return samples == 0 ? -1 : (CpuSeconds() - start) * 1e6 / samples;
}

}  // namespace
}  // namespace herald::scheduler

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  using herald::scheduler::Measure;
  const uint32_t shuffle = absl::GetFlag(FLAGS_shuffle);
  std::printf("data_loader_bench: CPU us/sample, batch %u\n", absl::GetFlag(FLAGS_batch));
  std::printf("%-22s %8s %10s %8s   %s\n", "", "raw", "KeyBatch", "ratio", "batches' fingerprint");
  for (uint32_t s : {0u, shuffle}) {
    uint64_t fingerprint = 0xcbf29ce484222325ULL;
    const double raw = Measure(s, false, &fingerprint), converted = Measure(s, true);
    if (raw < 0 || converted < 0) return 1;
    std::printf("shuffle buffer %-7u %8.3f %10.3f %7.2fx   %016llx\n", s, raw, converted,
                converted / raw, static_cast<unsigned long long>(fingerprint));
  }
  return 0;
}
