#pragma once
// --tls_ca and --tls_server_name, the TLS flags of every Herald process that
// dials another (herald_scheduler → PS shards, herald_ps and herald_worker →
// scheduler, herald_worker → PS shards, heraldctl → scheduler):
//   --tls_ca           PEM root certificate(s) the servers' certificates are
//                      verified with; when set every channel the process
//                      opens is TLS (and a plaintext server is refused).
//   --tls_server_name  the name the servers' certificates must carry instead
//                      of the host of the dialled address (certificates that
//                      name a DNS name while nodes register by IP).

#include "absl/status/statusor.h"
#include "common/rpc/channel.h"

namespace herald::rpc {

// Channel options from the flags (plaintext when --tls_ca is empty).
// Errors: InvalidArgument for an unreadable --tls_ca, or --tls_server_name
// without --tls_ca.
absl::StatusOr<ChannelOptions> ClientChannelOptionsFromFlags();

}  // namespace herald::rpc
