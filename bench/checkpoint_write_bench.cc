// One PS shard's checkpoint write (JobShard::Checkpoint: gather and sort the
// keys, copy every row, CRC, write, fsync, rename) against a plain
// sequential write of the same number of bytes to the same directory with
// fsync, measured in the same run (the target: ≥ 0.7). Each is run
// --repeat times; the fastest of each counts.
//
//   bazel build -c opt //bench:checkpoint_write_bench
//   ./bazel-bin/bench/checkpoint_write_bench [--rows 1000000] [--dir /var/tmp]

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/thread_pool.h"
#include "ps_server/shard/job_shard.h"

ABSL_FLAG(uint64_t, rows, 1000000, "rows in the shard's one table");
ABSL_FLAG(uint32_t, dim, 16, "embedding dim (Adagrad: as many floats of state)");
ABSL_FLAG(std::string, dir, "/var/tmp", "where to write (the checkpoint disk)");
ABSL_FLAG(int, repeat, 3, "runs of each");

namespace herald::ps {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void Fail(const absl::Status& s) {
  std::fprintf(stderr, "checkpoint_write_bench: %s\n", std::string(s.message()).c_str());
  std::exit(1);
}

// Writes `bytes` to `path` in 1 MiB writes, then fsyncs: the baseline.
double SequentialWriteMs(const std::string& path, uint64_t bytes) {
  std::vector<char> chunk(1 << 20, 1);
  const Clock::time_point t0 = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) Fail(absl::InternalError("cannot create " + path));
  for (uint64_t left = bytes; left > 0;) {
    const size_t n = std::min<uint64_t>(left, chunk.size());
    if (::write(fd, chunk.data(), n) != static_cast<ssize_t>(n)) {
      Fail(absl::InternalError("cannot write " + path));
    }
    left -= n;
  }
  if (::fsync(fd) != 0) Fail(absl::InternalError("cannot fsync " + path));
  ::close(fd);
  const double ms = MsSince(t0);
  std::filesystem::remove(path);
  return ms;
}

int Main() {
  const uint64_t rows = absl::GetFlag(FLAGS_rows);
  const std::string dir = absl::GetFlag(FLAGS_dir) + "/herald-checkpoint-write-bench";
  std::filesystem::create_directories(dir);
  ThreadPool pool(2);
  JobShardOptions o;
  o.job_id = "bench";
  TableOptions table;
  table.id = TableId(0);
  table.dim = absl::GetFlag(FLAGS_dim);
  table.optimizer.kind = math::SparseOptimizerKind::kAdagrad;
  table.seed = 1;
  o.tables = {table};
  auto shard = JobShard::Create(o, &pool);
  if (!shard.ok()) Fail(shard.status());
  // Rows created by iteration 0's fetches, in an order unlike the keys'.
  std::vector<Key> keys(rows);
  for (uint64_t i = 0; i < rows; ++i) keys[i] = (i + 1) * 0x9E3779B97F4A7C15ull;
  std::vector<float> sink;
  for (uint64_t begin = 0; begin < rows; begin += 65536) {
    FetchIn in;
    in.iteration = 0;
    in.blocks.push_back(
        {0, absl::Span<const Key>(&keys[begin], std::min<uint64_t>(65536, rows - begin))});
    std::vector<uint64_t> versions(in.blocks[0].keys.size());
    const absl::Status fetched =
        (*shard)->Fetch(in, absl::InfiniteFuture(), [&](size_t, uint32_t row_floats) {
          sink.resize(in.blocks[0].keys.size() * row_floats);
          return RowsOut{reinterpret_cast<char*>(sink.data()),
                         reinterpret_cast<char*>(versions.data())};
        });
    if (!fetched.ok()) Fail(fetched);
  }
  if (auto done = (*shard)->IterationDone(Iteration(0), WorkerRank(0), 1); !done.ok())
    Fail(done.status());

  double best_checkpoint = 1e300, best_sequential = 1e300;
  uint64_t bytes = 0;
  for (int r = 0; r < absl::GetFlag(FLAGS_repeat); ++r) {
    const Clock::time_point t0 = Clock::now();
    auto info = (*shard)->Checkpoint(dir, 0, absl::InfiniteFuture());
    if (!info.ok()) Fail(info.status());
    best_checkpoint = std::min(best_checkpoint, MsSince(t0));
    bytes = info->bytes;
    std::filesystem::remove_all(dir + "/bench");
    best_sequential = std::min(best_sequential, SequentialWriteMs(dir + "/sequential", bytes));
  }
  std::filesystem::remove_all(dir);
  std::printf(
      "checkpoint of one shard: %llu rows of dim %u (Adagrad), %.1f MB in %.0f ms (%.0f MB/s); "
      "sequential write + fsync of the same bytes: %.0f ms (%.0f MB/s); ratio %.2f (target "
      "≥ 0.7)\n",
      static_cast<unsigned long long>(rows), table.dim, bytes / 1e6, best_checkpoint,
      bytes / 1e3 / best_checkpoint, best_sequential, bytes / 1e3 / best_sequential,
      best_sequential / best_checkpoint);
  return 0;
}

}  // namespace
}  // namespace herald::ps

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::ps::Main();
}
