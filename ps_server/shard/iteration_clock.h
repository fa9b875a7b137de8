#pragma once
// A job shard's iteration clock (docs/protocol.md, "Parameter server"): the
// first iteration still accepting reports (`open`), the first whose commit
// has not finished (`committed`) and whether the job was ended, with the
// conditions the shard's requests wait for.
//
// The clock has no mutex of its own: the shard's mutex guards it together
// with the iteration buffers (a report and the commit it completes are one
// step). The rows' lock orders after that mutex, and both are held and
// handed over only through scoped objects: a reader takes the rows shared
// before the shard's mutex is released (so no commit slips in between), and
// a commit holds them in a CommitWindow, which releases the shard's mutex
// while the tables are written (so commits apply in iteration order while
// reports for later iterations go on).

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/synchronization/mutex.h"

namespace herald::ps {

class IterationClock {
 public:
  explicit IterationClock(uint64_t first_iteration)
      : open_(first_iteration), committed_(first_iteration) {}

  uint64_t open() const { return open_; }
  uint64_t committed() const { return committed_; }
  bool ended() const { return !ended_.empty(); }
  // Why the job was ended ("ended" when no reason was given).
  const std::string& ended_reason() const { return ended_; }
  void End(const std::string& why) { ended_ = why.empty() ? "ended" : why; }

  // Iteration t's starting rows are the tables': t - 1 committed (or the
  // job ended: the waiter then fails).
  bool StartReady(uint64_t t) const { return committed_ >= t || ended(); }
  // Iteration t committed and no later one committing: the tables hold
  // exactly its state (or the job ended).
  bool SettledAt(uint64_t t) const { return (committed_ > t && open_ == committed_) || ended(); }

  // The open iteration's commit begins: returns it; reports go to the next.
  uint64_t BeginCommit() { return open_++; }
  // Iteration t's commit finished.
  void FinishCommit(uint64_t t) { committed_ = std::max(committed_, t + 1); }

 private:
  uint64_t open_;
  uint64_t committed_;
  std::string ended_;  // empty while serving
};

// While it lives, the rows are held (exclusively, or shared where the
// commit writes each stripe under its own mutex and readers wait per stripe)
// and the shard's mutex is released; destroyed, the shard's mutex is held
// again. REQUIRES: the shard's mutex held on construction, the rows' lock
// not held.
class CommitWindow {
 public:
  enum class Rows { kExclusive, kShared };
  CommitWindow(absl::Mutex* shard, absl::Mutex* rows, Rows mode) ABSL_NO_THREAD_SAFETY_ANALYSIS
      : shard_(shard),
        rows_(rows),
        mode_(mode) {
    // Before the shard's mutex is released: commits stay in order.
    if (mode_ == Rows::kExclusive) {
      rows_->WriterLock();
    } else {
      rows_->ReaderLock();
    }
    shard_->Unlock();
  }
  // Lets writers (or readers) at the rows before the window closes.
  void ReleaseRows() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (rows_ == nullptr) return;
    if (mode_ == Rows::kExclusive) {
      rows_->WriterUnlock();
    } else {
      rows_->ReaderUnlock();
    }
    rows_ = nullptr;
  }
  ~CommitWindow() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    ReleaseRows();
    shard_->Lock();
  }
  CommitWindow(const CommitWindow&) = delete;
  CommitWindow& operator=(const CommitWindow&) = delete;

 private:
  absl::Mutex* const shard_;
  absl::Mutex* rows_;
  const Rows mode_;
};

}  // namespace herald::ps
