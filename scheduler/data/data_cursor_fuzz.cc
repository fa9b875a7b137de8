// Fuzz target: a checkpoint's data cursor (BatchStream::RestoreCursor) read
// back into a stream over generated data and over binary files.
// Invariants: no crash, no read outside the cursor, and a stream that
// accepted a cursor reads on (its batches or an error, never a crash).

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data/binary_format.h"
#include "common/data/fuzz/fuzz_target.h"
#include "common/data/generator.h"
#include "scheduler/data/batch_stream.h"

namespace {

using herald::scheduler::BatchStream;
using herald::scheduler::BatchStreamOptions;

BatchStreamOptions Generated() {
  BatchStreamOptions o;
  o.data.set_format(herald::proto::DATA_FORMAT_GENERATED);
  o.data.mutable_generator()->set_rows(300);
  o.data.mutable_generator()->set_cardinality_scale(0.001);
  o.data.set_shuffle_buffer(24);
  o.data.set_eval_fraction(0.1);
  o.schema = herald::data::kCriteoSchema;
  o.global_batch_size = 8;
  o.iterations = 100;
  return o;
}

// The same samples as one binary file (blocks of 7), written once.
BatchStreamOptions Binary() {
  static const std::string path = [] {
    const char* dir = std::getenv("TEST_TMPDIR");
    std::string p =
        absl::StrCat(dir != nullptr ? dir : "/tmp", "/data_cursor_fuzz-", ::getpid(), ".bin");
    herald::data::GeneratorOptions go;
    go.cardinality_scale = 0.001;
    herald::data::SyntheticGenerator gen(go);
    herald::data::SampleBlock block(gen.schema());
    gen.Generate(0, 300, &block);
    auto w = herald::data::BinaryWriter::Create(p, gen.schema(), 7);
    if (!w.ok() || !(*w)->Write(block).ok() || !(*w)->Close().ok()) FuzzFail("cannot write data");
    return p;
  }();
  BatchStreamOptions o = Generated();
  o.data.set_format(herald::proto::DATA_FORMAT_HERALD_BINARY);
  o.data.add_paths(path);
  return o;
}

std::string CursorAfter(const BatchStreamOptions& o, int batches) {
  auto stream = BatchStream::Open(o);
  if (!stream.ok()) FuzzFail(stream.status().ToString());
  herald::data::KeyBatch batch;
  for (int i = 0; i < batches; ++i) {
    if (!*(*stream)->Next(&batch)) FuzzFail("the seed stream ended");
  }
  auto cursor = (*stream)->SaveCursor();
  if (!cursor.ok()) FuzzFail(cursor.status().ToString());
  return *cursor;
}

void Restore(const BatchStreamOptions& o, const std::string& cursor) {
  auto stream = BatchStream::Open(o);
  if (!stream.ok()) FuzzFail(stream.status().ToString());
  if (!(*stream)->RestoreCursor(cursor).ok()) return;
  herald::data::KeyBatch batch;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<bool> more = (*stream)->Next(&batch);
    if (!more.ok() || !*more) return;
    if (batch.num_samples != o.global_batch_size) FuzzFail("a batch of the wrong size");
  }
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  std::vector<std::string> seeds;
  for (int batches : {0, 3, 11}) {
    seeds.push_back(CursorAfter(Generated(), batches));
    seeds.push_back(CursorAfter(Binary(), batches));
  }
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string cursor(reinterpret_cast<const char*>(data), size);
  Restore(Generated(), cursor);
  Restore(Binary(), cursor);
  return 0;
}
