#pragma once
// Who a process is, precisely enough for a peer to watch it: the host (its
// boot id), the pid, IPC and network namespaces it lives in, its pid and
// its start time (so that a pid reused by a later process is not mistaken
// for it). Two processes may share memory and one may watch the other's pid
// only when both are on one host and in the same namespaces (SameHostAs).
// The network namespace counts too: processes in different ones are meant
// to talk over a network (containers, emulated hosts), not around it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace herald {

struct ProcessIdentity {
  std::string boot_id;  // /proc/sys/kernel/random/boot_id
  uint64_t pid_ns = 0;  // inode of /proc/self/ns/pid
  uint64_t ipc_ns = 0;  // inode of /proc/self/ns/ipc
  uint64_t net_ns = 0;  // inode of /proc/self/ns/net
  int32_t pid = 0;
  uint64_t start_time = 0;  // clock ticks after boot (/proc/PID/stat, field 22)

  // This process; pid 0 (invalid) where /proc cannot tell.
  static ProcessIdentity Self();
  bool valid() const { return pid > 0 && !boot_id.empty(); }
  // Same boot, pid, IPC and network namespaces: the pid names the same
  // process for both, and shared memory reaches from one to the other.
  bool SameHostAs(const ProcessIdentity& other) const;

  // "boot_id/pid_ns/ipc_ns/net_ns/pid/start_time", and back (nullopt for text
  // that is not one).
  std::string Encode() const;
  static std::optional<ProcessIdentity> Decode(std::string_view text);
};

// The start time of process `pid` as ProcessIdentity has it; nullopt when
// there is no such process.
std::optional<uint64_t> ProcessStartTime(int32_t pid);

}  // namespace herald
