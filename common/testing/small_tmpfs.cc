#include "common/testing/small_tmpfs.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::testing {

std::string MountSmallTmpfs(const std::string& dir, const std::string& size) {
  if (::unshare(CLONE_NEWNS) != 0) {
    return absl::StrCat("unshare(CLONE_NEWNS): ", std::strerror(errno));
  }
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return absl::StrCat("making / private: ", std::strerror(errno));
  }
  ::mkdir(dir.c_str(), 0755);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, size.c_str()) != 0) {
    return absl::StrCat("mount tmpfs at ", dir, ": ", std::strerror(errno));
  }
  return "";
}

}  // namespace herald::testing
