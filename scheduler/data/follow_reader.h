#pragma once
// data.follow (docs/data-formats.md, "Following a directory"): the samples
// of the files in one directory, file after file in name order, including
// files that appear while the job trains. A file is taken once it is in
// the directory under a name not starting with '.', and read once, whole:
// writers put a file in place by renaming it in. A file that appears with
// a name sorting before the last one taken is never read (logged once).
//
// When no later file is there, Read waits, listing the directory every
// tunables::kFollowPollMs, until one appears; after `idle` without one it
// reports the end of the input (Read returns 0). Setting the `stop` flag
// (from any thread) makes a waiting or later Read return Cancelled.
//
// Position words: the file being read (or the last one read whole) and
// the position inside it, so a resumed job continues in the right file.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/data/reader.h"

namespace herald::scheduler {

class FollowReader : public data::SampleReader {
 public:
  // Opens one file of the directory (its reader checks the file's schema).
  using OpenFile =
      std::function<absl::StatusOr<std::unique_ptr<data::SampleReader>>(const std::string& path)>;

  // `idle` ≤ 0: never ends on its own. `stop` may be null. Errors:
  // InvalidArgument naming `dir` when it is not a directory.
  static absl::StatusOr<std::unique_ptr<FollowReader>> Open(
      std::string dir, data::DataSchema schema, absl::Duration idle, OpenFile open,
      std::shared_ptr<std::atomic<bool>> stop);

  absl::StatusOr<size_t> Read(size_t max_samples, data::SampleBlock* out) override;
  // Every file's so far (the one being read included, as of the last Read).
  const data::MalformedLog& malformed() const override { return shown_; }
  data::DataSchema schema() const override { return schema_; }
  absl::StatusOr<std::vector<uint64_t>> Position() const override;
  absl::Status Seek(const std::vector<uint64_t>& position) override;

  // Files read whole so far.
  uint64_t files_done() const { return files_done_; }
  // The files Read opened since the last call (by name, in order): each
  // one's first samples were read then. A file Seek moved into is not
  // among them.
  std::vector<std::string> TakeStarted() { return std::exchange(started_, {}); }

 private:
  FollowReader(std::string dir, data::DataSchema schema, absl::Duration idle, OpenFile open,
               std::shared_ptr<std::atomic<bool>> stop)
      : dir_(std::move(dir)),
        schema_(schema),
        idle_(idle),
        open_(std::move(open)),
        stop_(stop != nullptr ? std::move(stop) : std::make_shared<std::atomic<bool>>(false)) {}
  // The next file to read (the first name after last_), waiting for it;
  // false at the idle end.
  absl::StatusOr<bool> NextFile();
  // Ends a file's reader, keeping its malformed lines.
  void FinishFile();

  const std::string dir_;
  const data::DataSchema schema_;
  const absl::Duration idle_;
  const OpenFile open_;
  const std::shared_ptr<std::atomic<bool>> stop_;
  std::string last_;                          // the file being read, or the last one read whole
  std::unique_ptr<data::SampleReader> file_;  // null between files
  uint64_t files_done_ = 0;
  std::vector<std::string> started_;  // opened by NextFile since TakeStarted
  data::MalformedLog malformed_;      // of the files read whole
  data::MalformedLog shown_;          // malformed_ and the current file's
  // Every name listed so far, and how many listings: a new name sorting
  // before last_ is a late file (logged once).
  absl::flat_hash_set<std::string> listed_;
  uint64_t listings_ = 0;
};

}  // namespace herald::scheduler
