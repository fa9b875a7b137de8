#pragma once
// The byte stream a planner's state (Planner::SaveState / LoadState) and a
// data stream's cursor (BatchStream::SaveCursor) are saved to and loaded
// from: plain values and arrays of trivially
// copyable values, in this machine's byte order (the planner's header
// records it), each array preceded by its length. Every read is bounded by
// the bytes left, so a truncated or damaged stream fails with DataLoss
// naming the field instead of reading past its end or allocating from a
// length it cannot hold.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace herald {

class StateWriter {
 public:
  template <typename T>
  void Pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "raw bytes only");
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  template <typename T>
  void Vec(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>, "raw bytes only");
    Pod<uint64_t>(values.size());
    out_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  void Vec(const std::vector<bool>& values) {
    Pod<uint64_t>(values.size());
    for (bool b : values) out_.push_back(b ? 1 : 0);
  }
  template <typename T>
  void Vecs(const std::vector<std::vector<T>>& lists) {
    Pod<uint64_t>(lists.size());
    for (const auto& list : lists) Vec(list);
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what a StateWriter wrote, in the same order. The first failure
// sticks: later reads fail too and status() names the first field that did
// not fit.
class StateReader {
 public:
  // `what` names the stream in errors ("planner state", "data cursor").
  explicit StateReader(std::string_view in, std::string what = "planner state")
      : in_(in), what_(std::move(what)) {}

  template <typename T>
  bool Pod(const char* field, T* value) {
    static_assert(std::is_trivially_copyable_v<T>, "raw bytes only");
    if (!Take(field, sizeof(T))) return false;
    std::memcpy(value, in_.data() + at_ - sizeof(T), sizeof(T));
    return true;
  }
  template <typename T>
  bool Vec(const char* field, std::vector<T>* values) {
    static_assert(std::is_trivially_copyable_v<T>, "raw bytes only");
    uint64_t n;
    if (!Length(field, sizeof(T), &n)) return false;
    values->resize(n);
    if (n > 0) std::memcpy(values->data(), in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return true;
  }
  bool Vec(const char* field, std::vector<bool>* values) {
    uint64_t n;
    if (!Length(field, 1, &n)) return false;
    values->resize(n);
    for (uint64_t i = 0; i < n; ++i) (*values)[i] = in_[at_ + i] != 0;
    at_ += n;
    return true;
  }
  template <typename T>
  bool Vecs(const char* field, std::vector<std::vector<T>>* lists) {
    uint64_t n;
    if (!Length(field, sizeof(uint64_t), &n)) return false;
    lists->resize(n);
    for (auto& list : *lists) {
      if (!Vec(field, &list)) return false;
    }
    return true;
  }
  // Fails the read: `field` holds a value the planner cannot take.
  bool Invalid(const char* field, const std::string& why) {
    if (status_.ok()) {
      status_ = absl::DataLossError(absl::StrCat(what_, ": ", field, ": ", why));
    }
    return false;
  }

  bool AtEnd() const { return at_ == in_.size(); }
  size_t offset() const { return at_; }
  const absl::Status& status() const { return status_; }

 private:
  bool Take(const char* field, size_t bytes) {
    if (!status_.ok()) return false;
    if (in_.size() - at_ < bytes) {
      return Invalid(field, absl::StrCat("ends at byte ", in_.size(), ", ", bytes,
                                         " more needed at byte ", at_));
    }
    at_ += bytes;
    return true;
  }
  // A length of `element_bytes`-sized values that the bytes left can hold.
  bool Length(const char* field, size_t element_bytes, uint64_t* n) {
    if (!Pod(field, n)) return false;
    if (*n > (in_.size() - at_) / element_bytes) {
      return Invalid(field, absl::StrCat(*n, " entries of ", element_bytes, " bytes at byte ", at_,
                                         ", only ", in_.size() - at_, " bytes left"));
    }
    return true;
  }

  std::string_view in_;
  const std::string what_;
  size_t at_ = 0;
  absl::Status status_;
};

}  // namespace herald
