#pragma once
// Helpers for data tests: temporary directories and block comparison.

#include <string>

#include "common/data/sample_block.h"

namespace herald::data::testing {

// A fresh directory under $TEST_TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFileOrDie(const std::string& path);

// Empty string if equal; otherwise where they first differ.
std::string DiffBlocks(const SampleBlock& a, const SampleBlock& b);

}  // namespace herald::data::testing
