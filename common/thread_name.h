#pragma once
// Thread names, so that per-thread CPU (/proc/PID/task/TID/stat, top -H,
// perf, gdb) says which part of a process a thread is. Linux keeps the
// first 15 bytes of a name.

#include <string>

#include "absl/strings/string_view.h"

namespace herald {

inline constexpr size_t kMaxThreadNameBytes = 15;

// Names the calling thread (truncated to kMaxThreadNameBytes). Best effort:
// a name the kernel refuses leaves the thread's old one.
void NameThisThread(absl::string_view name);

// The calling thread's name ("" if unreadable).
std::string ThisThreadName();

}  // namespace herald
