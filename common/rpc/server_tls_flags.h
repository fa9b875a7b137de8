#pragma once
// --tls_cert and --tls_key, the TLS flags of every Herald server
// (herald_scheduler, herald_ps, herald_worker's health service): with both
// set the process serves TLS only. A cluster serves TLS everywhere or
// nowhere; clients verify with --tls_ca (client_tls_flags.h,
// docs/operations.md).

#include "absl/status/status.h"
#include "common/rpc/server.h"

namespace herald::rpc {

// Copies --tls_cert/--tls_key into `options`. Errors: InvalidArgument when
// only one of them is set or a file cannot be read (naming the flag and path).
absl::Status ApplyServerTlsFlags(ServerOptions* options);

}  // namespace herald::rpc
