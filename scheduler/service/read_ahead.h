#pragma once
// Runs a BatchStream on its own thread, keeping at most `window` global
// batches read ahead of the consumer (the data loader's read-ahead L), so
// reading and parsing overlap planning while memory stays bounded.

#include <cstdint>
#include <deque>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/service/batch_stream.h"

namespace herald::scheduler {

class ReadAhead {
 public:
  // Starts reading at once, first skipping `skip` batches (BatchStream::Skip:
  // a resumed job's place). REQUIRES: window >= 1.
  ReadAhead(std::unique_ptr<BatchStream> stream, uint32_t window, uint64_t skip = 0);
  // Stops the reader thread (waits for its current batch).
  ~ReadAhead();

  // The next batch, waiting for the reader if needed; false at the end.
  // After an error, every call returns that error.
  absl::StatusOr<bool> Next(data::KeyBatch* out);

  // Batches read and not yet taken (≤ window).
  size_t buffered() const;
  uint64_t malformed() const;
  uint64_t dropped_tail_samples() const;
  // Batches skipped at the start; fewer than asked when the stream ended
  // first. Final once Next has returned.
  uint64_t skipped() const;

 private:
  void Run();

  const uint32_t window_;
  const uint64_t skip_;
  std::unique_ptr<BatchStream> stream_;
  mutable absl::Mutex mu_;
  std::deque<data::KeyBatch> ready_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // the stream ended (or failed)
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t malformed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_tail_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t skipped_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace herald::scheduler
