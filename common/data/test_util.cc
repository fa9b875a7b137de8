#include "common/data/test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/strings/str_cat.h"

namespace herald::data::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = absl::StrCat(base ? base : "/tmp", "/herald_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string DiffBlocks(const SampleBlock& a, const SampleBlock& b) {
  if (!(a.schema == b.schema)) return "schemas differ";
  if (a.size() != b.size()) return absl::StrCat("sizes differ: ", a.size(), " vs ", b.size());
  for (size_t s = 0; s < a.size(); ++s) {
    for (uint32_t j = 0; j < a.schema.num_labels; ++j) {
      if (a.Label(s, j) != b.Label(s, j)) return absl::StrCat("sample ", s, ": label ", j);
    }
    for (uint32_t i = 0; i < a.schema.num_dense; ++i) {
      if (a.DenseMissing(s, i) != b.DenseMissing(s, i)) {
        return absl::StrCat("sample ", s, ": missing mask, dense ", i);
      }
    }
    for (uint32_t i = 0; i < a.schema.num_dense; ++i) {
      if (a.Dense(s, i) != b.Dense(s, i)) return absl::StrCat("sample ", s, ": dense ", i);
    }
    for (uint32_t f = 0; f < a.schema.num_sparse; ++f) {
      auto ka = a.Keys(s, f), kb = b.Keys(s, f);
      if (ka != kb) return absl::StrCat("sample ", s, ": categorical ", f);
      if (a.schema.weighted && a.Weights(s, f) != b.Weights(s, f)) {
        return absl::StrCat("sample ", s, ": weights of categorical ", f);
      }
    }
  }
  return "";
}

}  // namespace herald::data::testing
