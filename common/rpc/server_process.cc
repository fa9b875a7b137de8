#include "common/rpc/server_process.h"

#include <csignal>
#include <pthread.h>

#include "common/logging.h"
#include "common/status.h"

namespace herald::rpc {
namespace {
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}
}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSignals();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

absl::Status ServeUntilSignal(const ServeOptions& options,
                              const std::vector<grpc::Service*>& services) {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<RunningServer> server,
                          StartServer(options.server, services));
  HLOG_INFO("{} serving on {}", options.role, server->address());
  if (!options.port_file.empty()) {
    HERALD_RETURN_IF_ERROR(WritePortFile(options.port_file, server->port()));
  }
  if (options.on_serving) HERALD_RETURN_IF_ERROR(options.on_serving(server->address()));
  int sig = WaitForTerminationSignal();
  HLOG_INFO("{} received signal {}, shutting down", options.role, sig);
  if (options.on_stopping) options.on_stopping();
  server->Shutdown();
  HLOG_INFO("{} stopped", options.role);
  return absl::OkStatus();
}

}  // namespace herald::rpc
