#include "common/process/process_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace herald {
namespace {

uint64_t NamespaceInode(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return std::string(absl::StripAsciiWhitespace(id));
}

}  // namespace

std::optional<uint64_t> ProcessStartTime(int32_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
  // the fields are counted from the last ')'. Field 22 is the start time.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(paren + 1), ' ', absl::SkipEmpty());
  uint64_t start = 0;
  // Fields after comm start at field 3 (state): field 22 is index 19.
  if (fields.size() < 20 || !absl::SimpleAtoi(fields[19], &start)) return std::nullopt;
  return start;
}

ProcessIdentity ProcessIdentity::Self() {
  ProcessIdentity self;
  self.boot_id = BootId();
  self.pid_ns = NamespaceInode("/proc/self/ns/pid");
  self.ipc_ns = NamespaceInode("/proc/self/ns/ipc");
  self.net_ns = NamespaceInode("/proc/self/ns/net");
  const std::optional<uint64_t> start = ProcessStartTime(::getpid());
  if (self.boot_id.empty() || self.pid_ns == 0 || self.ipc_ns == 0 || self.net_ns == 0 || !start) {
    return {};
  }
  self.pid = static_cast<int32_t>(::getpid());
  self.start_time = *start;
  return self;
}

bool ProcessIdentity::SameHostAs(const ProcessIdentity& other) const {
  return valid() && other.valid() && boot_id == other.boot_id && pid_ns == other.pid_ns &&
         ipc_ns == other.ipc_ns && net_ns == other.net_ns;
}

std::string ProcessIdentity::Encode() const {
  return absl::StrCat(boot_id, "/", pid_ns, "/", ipc_ns, "/", net_ns, "/", pid, "/", start_time);
}

std::optional<ProcessIdentity> ProcessIdentity::Decode(std::string_view text) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(absl::string_view(text.data(), text.size()), '/');
  ProcessIdentity id;
  if (parts.size() != 6 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &id.pid_ns) ||
      !absl::SimpleAtoi(parts[2], &id.ipc_ns) || !absl::SimpleAtoi(parts[3], &id.net_ns) ||
      !absl::SimpleAtoi(parts[4], &id.pid) || !absl::SimpleAtoi(parts[5], &id.start_time) ||
      id.pid <= 0) {
    return std::nullopt;
  }
  id.boot_id = std::string(parts[0]);
  return id;
}

}  // namespace herald
