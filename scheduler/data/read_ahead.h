#pragma once
// Runs a BatchStream on its own thread, keeping at most `window` global
// batches read ahead of the consumer (the data loader's read-ahead L), so
// reading and parsing overlap planning while memory stays bounded.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/data/batch_stream.h"

namespace herald::scheduler {

class ReadAhead {
 public:
  // Whether to save the stream's cursor once it has given this many
  // batches (counting any read before): a checkpoint will want it.
  using CursorWanted = std::function<bool(uint64_t batches)>;

  // Starts reading at once, first skipping `skip` batches (BatchStream::Skip:
  // a resumed job's place). REQUIRES: window >= 1.
  ReadAhead(std::unique_ptr<BatchStream> stream, uint32_t window, uint64_t skip = 0,
            CursorWanted cursor_wanted = nullptr);
  // Stops the reader thread (waits for its current batch).
  ~ReadAhead();

  // The next batch, waiting for the reader if needed; false at the end.
  // What `out` held is handed back to the reader, which refills its memory.
  // After an error, every call returns that error.
  absl::StatusOr<bool> Next(data::KeyBatch* out);

  // Batches read and not yet taken (≤ window).
  size_t buffered() const;
  uint64_t malformed() const;
  uint64_t dropped_tail_samples() const;
  // Batches skipped at the start; fewer than asked when the stream ended
  // first. Final once Next has returned.
  uint64_t skipped() const;
  // The cursor saved once the stream had given `batches` batches (saved on
  // the reader's thread as it passed there, so it may be asked for after
  // the reader moved on); older ones are dropped. Errors: NotFound (none
  // was saved there), SaveCursor's.
  absl::StatusOr<std::string> CursorAfter(uint64_t batches);

 private:
  void Run();

  const uint32_t window_;
  const uint64_t skip_;
  const CursorWanted cursor_wanted_;
  // Saved cursors by batch count (window + 4 at most: the reader is at
  // most `window` batches ahead of the planner, which holds three and
  // takes the cursor after the first; older ones are dropped).
  std::map<uint64_t, absl::StatusOr<std::string>> cursors_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<BatchStream> stream_;
  mutable absl::Mutex mu_;
  std::deque<data::KeyBatch> ready_ ABSL_GUARDED_BY(mu_);
  // Batches the consumer handed back (Next swaps): refilled, not reallocated.
  std::vector<data::KeyBatch> spare_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // the stream ended (or failed)
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t malformed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_tail_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t skipped_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace herald::scheduler
