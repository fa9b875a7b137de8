#include "common/data/line_source.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace herald::data {

LineSource::LineSource(std::vector<std::string> names, InputOpener opener, size_t buffer_bytes,
                       std::string what)
    : names_(std::move(names)),
      opener_(std::move(opener)),
      what_(std::move(what)),
      buf_(std::max<size_t>(buffer_bytes, 64)) {}

absl::Status LineSource::OpenNext() {
  input_.reset();
  HERALD_ASSIGN_OR_RETURN(input_, opener_(input_index_));
  ++input_index_;
  line_number_ = 0;
  buf_offset_ = 0;
  pos_ = end_ = 0;
  input_eof_ = false;
  return absl::OkStatus();
}

std::vector<uint64_t> LineSource::Position() const {
  if (input_ == nullptr) return {0, input_index_};
  return {1, input_index_ - 1, buf_offset_ + pos_, line_number_};
}

absl::Status LineSource::Seek(const std::vector<uint64_t>& p) {
  auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what_, " position (", p.size(), " words): ", why));
  };
  if (p.size() == 2 && p[0] == 0) {
    if (p[1] > names_.size()) return bad("input index beyond the inputs");
    input_.reset();
    input_index_ = p[1];
    return absl::OkStatus();
  }
  if (p.size() != 4 || p[0] != 1) return bad("not a position");
  if (p[1] >= names_.size()) return bad("input index beyond the inputs");
  input_index_ = p[1];
  HERALD_RETURN_IF_ERROR(OpenNext());
  if (p[2] > 0) {
    // The byte before a position ends a line, or the input ends there (a
    // last line without a newline was read).
    char before = 0, after = 0;
    absl::Status s = input_->Skip(p[2] - 1);
    absl::StatusOr<size_t> got = s.ok() ? input_->Read(&before, 1) : absl::StatusOr<size_t>(s);
    bool at_end = false;
    if (got.ok() && *got == 1 && before != '\n') {
      absl::StatusOr<size_t> more = input_->Read(&after, 1);
      at_end = more.ok() && *more == 0;
    }
    if (!got.ok() || *got != 1 || (before != '\n' && !at_end)) {
      return absl::DataLossError(absl::StrCat(names_[p[1]], ": offset ", p[2],
                                              " is not the start of a line (the input changed "
                                              "since the position was taken)"));
    }
  }
  buf_offset_ = p[2];
  line_number_ = p[3];
  return absl::OkStatus();
}

absl::StatusOr<bool> LineSource::Next(absl::string_view* line) {
  while (true) {
    if (input_ != nullptr) {
      const char* start = buf_.data() + pos_;
      const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
      if (nl != nullptr) {
        *line = absl::string_view(start, nl - start);
        pos_ = nl - buf_.data() + 1;
        ++line_number_;
        return true;
      }
      if (!input_eof_) {
        // Move the partial line to the front, grow if it fills the buffer, refill.
        size_t partial = end_ - pos_;
        if (pos_ > 0) std::memmove(buf_.data(), buf_.data() + pos_, partial);
        buf_offset_ += pos_;
        pos_ = 0;
        end_ = partial;
        if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
        HERALD_ASSIGN_OR_RETURN(size_t got, input_->Read(buf_.data() + end_, buf_.size() - end_));
        if (got == 0) input_eof_ = true;
        end_ += got;
        continue;
      }
      if (end_ > pos_) {  // last line without '\n'
        *line = absl::string_view(buf_.data() + pos_, end_ - pos_);
        pos_ = end_;
        ++line_number_;
        return true;
      }
      input_.reset();
    }
    if (input_index_ >= names_.size()) return false;
    HERALD_RETURN_IF_ERROR(OpenNext());
  }
}

absl::StatusOr<std::string> LineSource::FirstLine(size_t index) const {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, opener_(index));
  std::string line;
  char buf[4096];
  for (;;) {
    HERALD_ASSIGN_OR_RETURN(size_t got, in->Read(buf, sizeof(buf)));
    if (got == 0) break;
    const char* nl = static_cast<const char*>(std::memchr(buf, '\n', got));
    line.append(buf, nl != nullptr ? nl - buf : got);
    if (nl != nullptr) break;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(names_[index], ":1: no header line"));
  }
  return line;
}

}  // namespace herald::data
