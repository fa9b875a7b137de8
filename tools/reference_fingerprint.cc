// Trains a job spec with the single-process reference trainer (CPU device)
// and prints a fingerprint of the result, to check that a change keeps a
// model's bits: run the binaries of two commits on one spec and compare.
//
//   reference_fingerprint SPEC [--iterations N]
//
// SPEC: a JobSpec in text format whose data paths are readable here
// (heraldctl gen-data). Trains the training split in the scheduler's batch
// order (at most N iterations when given). Prints one line:
//   iterations I dense D:<hash> rows R:<hash> losses <hash>
// each hash FNV-1a 64 over the bits: the dense parameters; every table's
// trained rows (values and optimizer state) in key order; the per-iteration
// losses. Exit codes: 0 trained, 1 the spec or data could not be used,
// 2 usage.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/command_line.h"
#include "common/text_proto.h"
#include "scheduler/data/batch_stream.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"

namespace {

class Fnv64 {
 public:
  void Add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) hash_ = (hash_ ^ p[i]) * 1099511628211ull;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

int Fail(const std::string& what) {
  std::fprintf(stderr, "reference_fingerprint: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace herald;
  const std::vector<std::string> args = ParseCommandLine(argc, argv);
  uint64_t limit = UINT64_MAX;
  std::string spec_path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--iterations" && i + 1 < args.size()) {
      limit = std::strtoull(args[++i].c_str(), nullptr, 10);
    } else if (spec_path.empty() && args[i].rfind("--", 0) != 0) {
      spec_path = args[i];
    } else {
      spec_path.clear();
      break;
    }
  }
  if (spec_path.empty()) {
    std::fprintf(stderr, "usage: reference_fingerprint SPEC [--iterations N]\n");
    return 2;
  }
  std::ifstream in(spec_path);
  if (!in) return Fail(spec_path + ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  proto::JobSpec spec;
  if (absl::Status s = ParseTextProto(text.str(), &spec); !s.ok()) {
    return Fail(spec_path + ":" + std::string(s.message()));
  }
  worker::CpuDevice device;
  auto trainer = worker::ReferenceTrainer::Create(spec, &device);
  if (!trainer.ok()) return Fail(std::string(trainer.status().message()));
  auto stream = scheduler::BatchStream::Open(
      scheduler::StreamOptionsFromSpec(spec, scheduler::Split::kTrain));
  if (!stream.ok()) return Fail(std::string(stream.status().message()));
  std::vector<absl::flat_hash_set<Key>> keys(spec.tables_size());
  Fnv64 losses;
  uint64_t iterations = 0;
  data::KeyBatch batch;
  while (iterations < limit) {
    auto more = (*stream)->Next(&batch);
    if (!more.ok()) return Fail(std::string(more.status().message()));
    if (!*more) break;
    auto loss = (*trainer)->Train(batch);
    if (!loss.ok()) return Fail(std::string(loss.status().message()));
    losses.Add(&*loss, sizeof(*loss));
    for (size_t t = 0; t < keys.size(); ++t) {
      keys[t].insert(batch.tables[t].keys.begin(), batch.tables[t].keys.end());
    }
    ++iterations;
  }
  Fnv64 dense, rows;
  const std::vector<float> values = (*trainer)->DenseValues();
  dense.Add(values.data(), values.size() * sizeof(float));
  size_t row_count = 0;
  for (size_t t = 0; t < keys.size(); ++t) {
    std::vector<Key> sorted(keys[t].begin(), keys[t].end());
    std::sort(sorted.begin(), sorted.end());
    for (Key k : sorted) {
      const std::vector<float> row = (*trainer)->Row(static_cast<uint32_t>(t), k);
      rows.Add(&k, sizeof(k));
      rows.Add(row.data(), row.size() * sizeof(float));
    }
    row_count += sorted.size();
  }
  std::printf("iterations %" PRIu64 " dense %zu:%016" PRIx64 " rows %zu:%016" PRIx64
              " losses %016" PRIx64 "\n",
              iterations, values.size(), dense.value(), row_count, rows.value(), losses.value());
  return 0;
}
