#include "checkpoint/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::checkpoint {

absl::Status FileError(const std::string& what, const std::string& path, int err) {
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status FsyncDirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return FileError("cannot open directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return FileError("cannot fsync directory", dir, err);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes,
                                 Durability durability) {
  const bool durable = durability == Durability::kFsynced;
  const std::string temp = absl::StrCat(path, ".tmp-", ::getpid());
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) return FileError("cannot create", temp, errno);
  int err = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fflush(f) != 0 ||
      (durable && ::fsync(::fileno(f)) != 0)) {
    err = errno;
  }
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(temp.c_str());
    return FileError("cannot write", path, err);
  }
  return durable ? FsyncDirOf(path) : absl::OkStatus();
}

}  // namespace herald::checkpoint
