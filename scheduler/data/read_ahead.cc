#include "scheduler/data/read_ahead.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/thread_name.h"

namespace herald::scheduler {

ReadAhead::ReadAhead(std::unique_ptr<BatchStream> stream, uint32_t window, uint64_t skip,
                     CursorWanted cursor_wanted)
    : window_(window),
      skip_(skip),
      cursor_wanted_(std::move(cursor_wanted)),
      stream_(std::move(stream)) {
  thread_ = std::thread([this] {
    NameThisThread("read-ahead");
    Run();
  });
}

ReadAhead::~ReadAhead() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  stream_->Stop();  // a stream following a directory stops waiting for files
  thread_.join();
}

void ReadAhead::Run() {
  if (skip_ > 0) {
    absl::StatusOr<uint64_t> skipped = stream_->Skip(skip_);
    absl::MutexLock lock(&mu_);
    malformed_ = stream_->malformed();
    dropped_tail_ = stream_->dropped_tail_samples();
    if (!skipped.ok() || *skipped < skip_) {
      if (!skipped.ok()) error_ = skipped.status();
      skipped_ = skipped.ok() ? *skipped : 0;
      done_ = true;
      return;
    }
    skipped_ = *skipped;
  }
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || ready_.size() < window_;
      };
      mu_.Await(absl::Condition(&room));
      if (stopping_) return;
    }
    data::KeyBatch batch;
    {
      absl::MutexLock lock(&mu_);
      if (!spare_.empty()) {  // a batch the consumer is done with: its memory reused
        batch = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    absl::StatusOr<bool> more = stream_->Next(&batch);
    std::optional<absl::StatusOr<std::string>> cursor;
    if (more.ok() && *more && cursor_wanted_ && cursor_wanted_(stream_->batches())) {
      cursor = stream_->SaveCursor();
    }
    absl::MutexLock lock(&mu_);
    malformed_ = stream_->malformed();
    dropped_tail_ = stream_->dropped_tail_samples();
    if (!more.ok() || !*more) {
      if (!more.ok()) error_ = more.status();
      done_ = true;
      return;
    }
    if (cursor) {
      cursors_.insert_or_assign(stream_->batches(), *std::move(cursor));
      // The consumer asks for the cursor after the batch it plans, while
      // holding up to two more and with `window` read: keep that many.
      if (cursors_.size() > window_ + 4) cursors_.erase(cursors_.begin());
    }
    ready_.push_back(std::move(batch));
  }
}

absl::StatusOr<bool> ReadAhead::Next(data::KeyBatch* out) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !ready_.empty() || done_; };
  mu_.Await(absl::Condition(&ready));
  if (!ready_.empty()) {
    // The caller's old batch comes back for the reader to refill.
    std::swap(*out, ready_.front());
    if (spare_.size() < window_ + 1) spare_.push_back(std::move(ready_.front()));
    ready_.pop_front();
    return true;
  }
  if (!error_.ok()) return error_;
  return false;
}

size_t ReadAhead::buffered() const {
  absl::MutexLock lock(&mu_);
  return ready_.size();
}

uint64_t ReadAhead::malformed() const {
  absl::MutexLock lock(&mu_);
  return malformed_;
}

uint64_t ReadAhead::skipped() const {
  absl::MutexLock lock(&mu_);
  return skipped_;
}

absl::StatusOr<std::string> ReadAhead::CursorAfter(uint64_t batches) {
  absl::MutexLock lock(&mu_);
  auto it = cursors_.find(batches);
  if (it == cursors_.end()) {
    return absl::NotFoundError(absl::StrCat("no data cursor saved after batch ", batches));
  }
  absl::StatusOr<std::string> cursor = std::move(it->second);
  cursors_.erase(cursors_.begin(), std::next(it));
  return cursor;
}

uint64_t ReadAhead::dropped_tail_samples() const {
  absl::MutexLock lock(&mu_);
  return dropped_tail_;
}

}  // namespace herald::scheduler
