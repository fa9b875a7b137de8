// Placeholder main shared by herald_worker and herald_scheduler until
// their services are built (each BUILD sets HERALD_ROLE to worker or scheduler).
//
// Current state (see README): the process starts, serves the standard gRPC
// health service on --listen, writes its port to --port_file and shuts down
// cleanly on SIGTERM/SIGINT. Its domain service is not built yet.

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/logging.h"
#include "common/rpc/server_process.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "address to serve on (host:port; port 0 picks one)");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once serving");
ABSL_FLAG(std::string, log_level, "info", "trace|debug|info|warn|error");
ABSL_FLAG(int, rank, -1, "rank shown in log lines (-1: none)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate; with --tls_key, serve TLS only");
ABSL_FLAG(std::string, tls_key, "", "PEM private key");

#define HERALD_STRINGIFY_INNER(x) #x
#define HERALD_STRINGIFY(x) HERALD_STRINGIFY_INNER(x)

namespace {
constexpr char kRole[] = HERALD_STRINGIFY(HERALD_ROLE);

std::string Description() {
  const std::string role = kRole;
  if (role == "worker") return "one trainer (dense model replica + embedding cache)";
  return "cluster coordinator, data loader and embedding scheduler";
}
}  // namespace

int main(int argc, char** argv) {
  herald::rpc::BlockTerminationSignals();
  absl::SetProgramUsageMessage(Description());
  absl::ParseCommandLine(argc, argv);
  absl::Status s = herald::InitLogging(kRole, absl::GetFlag(FLAGS_rank),
                                       absl::GetFlag(FLAGS_log_level));
  if (!s.ok()) {
    std::fprintf(stderr, "herald_%s: --log_level: %s\n", kRole, std::string(s.message()).c_str());
    return 2;
  }
  herald::rpc::ServeOptions options;
  options.role = std::string("herald_") + kRole;
  options.server.listen_address = absl::GetFlag(FLAGS_listen);
  options.server.tls_cert_path = absl::GetFlag(FLAGS_tls_cert);
  options.server.tls_key_path = absl::GetFlag(FLAGS_tls_key);
  options.port_file = absl::GetFlag(FLAGS_port_file);
  s = herald::rpc::ServeUntilSignal(options, {});
  if (!s.ok()) {
    HLOG_ERROR("{}: {}", options.role, std::string(s.message()));
    return 1;
  }
  return 0;
}
