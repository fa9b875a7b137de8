#include "scheduler/data/follow_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/tunables.h"

namespace herald::scheduler {
namespace {

// Position()'s first word.
enum State : uint64_t { kNothingTaken = 0, kInFile = 1, kFileDone = 2 };

void PackName(const std::string& name, std::vector<uint64_t>* out) {
  out->push_back(name.size());
  for (size_t i = 0; i < name.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, name.data() + i, std::min<size_t>(8, name.size() - i));
    out->push_back(word);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<FollowReader>> FollowReader::Open(
    std::string dir, data::DataSchema schema, absl::Duration idle, OpenFile open,
    std::shared_ptr<std::atomic<bool>> stop) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.follow: ", dir, " is not a directory (data.paths names one)"));
  }
  return std::unique_ptr<FollowReader>(
      new FollowReader(std::move(dir), schema, idle, std::move(open), std::move(stop)));
}

absl::StatusOr<bool> FollowReader::NextFile() {
  const absl::Time idle_since = absl::Now();
  for (;;) {
    if (stop_->load()) return absl::CancelledError("data.follow: the job's reader was stopped");
    std::string next;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name[0] == '.' || !entry.is_regular_file()) continue;
      const bool new_name = listed_.insert(name).second;
      if (name <= last_) {
        // Read before, or there before this reader's first listing; or a
        // late file, never to be read.
        if (new_name && listings_ > 0) {
          HLOG_WARN("data.follow: {}/{} appeared after {} was taken and sorts before it: not read",
                    dir_, name, last_);
        }
        continue;
      }
      if (next.empty() || name < next) next = name;
    }
    ++listings_;
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("data.follow: listing ", dir_, ": ", ec.message()));
    }
    if (!next.empty()) {
      HERALD_ASSIGN_OR_RETURN(file_, open_(dir_ + "/" + next));
      last_ = next;
      started_.push_back(next);
      return true;
    }
    if (idle_ > absl::ZeroDuration() && absl::Now() - idle_since >= idle_) return false;
    absl::SleepFor(absl::Milliseconds(tunables::kFollowPollMs));
  }
}

void FollowReader::FinishFile() {
  malformed_.Merge(file_->malformed());
  file_.reset();
  ++files_done_;
}

absl::StatusOr<size_t> FollowReader::Read(size_t max_samples, data::SampleBlock* out) {
  for (;;) {
    if (file_ == nullptr) {
      HERALD_ASSIGN_OR_RETURN(bool more, NextFile());
      if (!more) {
        shown_ = malformed_;
        return 0;
      }
    }
    HERALD_ASSIGN_OR_RETURN(size_t n, file_->Read(max_samples, out));
    shown_ = malformed_;
    shown_.Merge(file_->malformed());
    if (n > 0) return n;
    FinishFile();
  }
}

absl::StatusOr<std::vector<uint64_t>> FollowReader::Position() const {
  std::vector<uint64_t> words;
  if (last_.empty()) {
    words.push_back(kNothingTaken);
    return words;
  }
  words.push_back(file_ != nullptr ? kInFile : kFileDone);
  PackName(last_, &words);
  if (file_ != nullptr) {
    HERALD_ASSIGN_OR_RETURN(std::vector<uint64_t> inner, file_->Position());
    words.insert(words.end(), inner.begin(), inner.end());
  }
  return words;
}

absl::Status FollowReader::Seek(const std::vector<uint64_t>& position) {
  auto invalid = [](const char* why) {
    return absl::InvalidArgumentError(absl::StrCat("data.follow position: ", why));
  };
  if (position.empty() || position[0] > kFileDone) return invalid("unknown state");
  if (position[0] == kNothingTaken) return absl::OkStatus();
  if (position.size() < 2) return invalid("no file name");
  const uint64_t length = position[1];
  const size_t words = (length + 7) / 8;
  if (length == 0 || position.size() < 2 + words) return invalid("a truncated file name");
  std::string name(words * 8, '\0');
  std::memcpy(name.data(), position.data() + 2, words * 8);
  name.resize(length);
  last_ = name;
  if (position[0] == kFileDone) return absl::OkStatus();
  const std::string path = dir_ + "/" + name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::DataLossError(
        absl::StrCat("data.follow: ", path, ", the file the cursor was reading, is gone"));
  }
  HERALD_ASSIGN_OR_RETURN(file_, open_(path));
  return file_->Seek(std::vector<uint64_t>(position.begin() + 2 + words, position.end()));
}

}  // namespace herald::scheduler
