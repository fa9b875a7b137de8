#pragma once
// Herald's version, the commit it was built from, and the wire version of
// the protocol between its processes.
//
// The version is the VERSION file at the repository's root; the commit is
// stamped by the build (`--define=herald_commit=...`, which
// deploy/package/build.sh passes; "unknown" otherwise).

#include <cstdint>
#include <string>

namespace herald {

// The protocol generation this build speaks between its processes (gRPC
// services, UCX messages, step encoding). It changes when a change to
// proto/ or to a wire format makes two builds unable to work together; a
// scheduler refuses a node that speaks another (RegisterRequest).
// 2: steps and eval batches carry the feature lengths of shared tables
// (a worker of version 1 would pool them as one feature).
// 3: steps and eval batches carry per-id weights (a worker of version 2
// would pool them unweighted), and labels are any finite number; the
// scheduler tells JobService clients its version (ListNodesResponse).
inline constexpr uint32_t kWireVersion = 3;

// "0.29.0".
const char* Version();
// The commit, e.g. "1a2b3c4d5e6f" or "1a2b3c4d5e6f-dirty"; "unknown" when
// the build was not stamped.
const char* Commit();
// What `--version` prints: "PROGRAM 0.29.0 (commit C, wire version 1)".
std::string VersionLine(const std::string& program);

// Whether a peer reporting `wire_version` (0: a build before wire versions
// existed) can work with this build.
inline bool SpeaksWireVersion(uint32_t wire_version) { return wire_version == kWireVersion; }

}  // namespace herald
