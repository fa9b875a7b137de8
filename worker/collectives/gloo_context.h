#pragma once
// A Gloo TCP full mesh among a job's ranks, found through a KvStore: each
// rank publishes its address under "<prefix>/..." and connects to every
// other. Shared by the dense all-reducer and the row exchanger (each with
// its own prefix, so each has its own connections).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tunables.h"
#include "worker/collectives/kv_store.h"

namespace gloo {
class Context;
}

namespace herald::worker {

struct GlooOptions {
  std::string hostname = "127.0.0.1";  // interface address this rank listens on
  std::string prefix = "gloo";         // key prefix in the store (e.g. job id)
  absl::Duration timeout = absl::Milliseconds(tunables::kGlooTimeoutMs);
};

// Blocks until all `size` ranks connected or the timeout passed. `store` is
// used only during the call. Errors: InvalidArgument (rank), Unavailable
// (the rendezvous or a connection failed; Gloo's reason quoted).
absl::StatusOr<std::shared_ptr<gloo::Context>> ConnectGloo(KvStore* store, int rank, int size,
                                                           const GlooOptions& options);

}  // namespace herald::worker
