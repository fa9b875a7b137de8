#pragma once
// Byte sources for the readers: files, or memory (tests and fuzzers).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace herald::data {

// Sequential reader. Not thread-safe.
class InputStream {
 public:
  virtual ~InputStream() = default;
  // Reads up to `n` bytes into `buf`; returns the count, 0 at end of input.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t n) = 0;
  // Moves `n` bytes ahead without reading them (by default reads and drops
  // them). Errors: OutOfRange when the input ends first, the read's errors.
  virtual absl::Status Skip(uint64_t n);
};

// Opens input number `index` of a reader's list (named by `names[index]`).
using InputOpener = std::function<absl::StatusOr<std::unique_ptr<InputStream>>(size_t index)>;

// Opens a file; a gzip or zstd file reads as its decompressed bytes
// (decompressing_input.h). Errors: NotFound / PermissionDenied naming the path.
absl::StatusOr<std::unique_ptr<InputStream>> OpenFileInput(const std::string& path);

// An opener over files `paths`.
InputOpener FileOpener(std::vector<std::string> paths);

// An opener over in-memory buffers (not copied; they must outlive the reader).
InputOpener MemoryOpener(std::vector<absl::string_view> buffers);

// Expands each path: a directory becomes its regular files (sorted, hidden
// files skipped); a file stays. Errors: NotFound naming the path, or
// InvalidArgument if nothing remains.
absl::StatusOr<std::vector<std::string>> ExpandInputPaths(const std::vector<std::string>& paths);

}  // namespace herald::data
