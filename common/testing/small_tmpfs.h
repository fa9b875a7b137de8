#pragma once
// A small file system that fills up, for tests of what a full disk does.

#include <string>

namespace herald::testing {

// Mounts a tmpfs of `size` (a mount option, e.g. "size=640k") at `dir`
// (created) in a mount namespace of this process's own: children inherit
// it, the host never sees it. Needs root and a single-threaded process (call
// it before anything starts a thread, e.g. in its own test binary). An
// empty string when it could; else why not (the caller skips, loudly).
std::string MountSmallTmpfs(const std::string& dir, const std::string& size);

}  // namespace herald::testing
