#include "common/data/input_stream.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/data/decompressing_input.h"

namespace herald::data {
namespace {

class FileInputStream final : public InputStream {
 public:
  FileInputStream(std::FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  ~FileInputStream() override { std::fclose(f_); }
  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    size_t got = std::fread(buf, 1, n, f_);
    if (got < n && std::ferror(f_)) {
      return absl::DataLossError(absl::StrCat(path_, ": read error: ", std::strerror(errno)));
    }
    return got;
  }
  absl::Status Skip(uint64_t n) override {
    const off_t at = ::ftello(f_);
    struct stat st;
    if (at < 0 || ::fstat(::fileno(f_), &st) != 0) {
      return absl::DataLossError(absl::StrCat(path_, ": cannot seek: ", std::strerror(errno)));
    }
    if (n > static_cast<uint64_t>(st.st_size - at)) {
      return absl::OutOfRangeError(absl::StrCat(path_, ": ", n, " bytes past offset ", at,
                                                " is beyond its end (", st.st_size, " bytes)"));
    }
    if (::fseeko(f_, at + static_cast<off_t>(n), SEEK_SET) != 0) {
      return absl::DataLossError(absl::StrCat(path_, ": cannot seek: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }

 private:
  std::FILE* f_;
  std::string path_;
};

class MemoryInputStream final : public InputStream {
 public:
  explicit MemoryInputStream(absl::string_view data) : data_(data) {}
  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  absl::Status Skip(uint64_t n) override {
    if (n > data_.size() - pos_) {
      return absl::OutOfRangeError(absl::StrCat(
          n, " bytes past offset ", pos_, " is beyond the input's end (", data_.size(), " bytes)"));
    }
    pos_ += n;
    return absl::OkStatus();
  }

 private:
  absl::string_view data_;
  size_t pos_ = 0;
};

}  // namespace

absl::Status InputStream::Skip(uint64_t n) {
  char buf[1 << 16];
  while (n > 0) {
    absl::StatusOr<size_t> k = Read(buf, std::min<uint64_t>(n, sizeof(buf)));
    if (!k.ok()) return k.status();
    if (*k == 0) return absl::OutOfRangeError("the input ends before the position skipped to");
    n -= *k;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<InputStream>> OpenFileInput(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    std::string msg = absl::StrCat("cannot open ", path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    return absl::UnavailableError(msg);
  }
  return Decompressing(std::make_unique<FileInputStream>(f, path), path);
}

InputOpener FileOpener(std::vector<std::string> paths) {
  return [paths = std::move(paths)](size_t i) { return OpenFileInput(paths.at(i)); };
}

InputOpener MemoryOpener(std::vector<absl::string_view> buffers) {
  return [buffers = std::move(buffers)](size_t i) -> absl::StatusOr<std::unique_ptr<InputStream>> {
    return std::make_unique<MemoryInputStream>(buffers.at(i));
  };
}

absl::StatusOr<std::vector<std::string>> ExpandInputPaths(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return absl::NotFoundError(absl::StrCat("no such input: ", p));
    if (fs::is_directory(st)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        std::string name = entry.path().filename().string();
        if (!name.empty() && name[0] != '.' && entry.is_regular_file()) {
          files.push_back(entry.path().string());
        }
      }
      std::sort(files.begin(), files.end());
      out.insert(out.end(), files.begin(), files.end());
    } else {
      out.push_back(p);
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("no input files");
  return out;
}

}  // namespace herald::data
