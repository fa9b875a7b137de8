#include "common/rpc/server_process.h"

#include <pthread.h>

#include <csignal>

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
// Set by the handler when a termination signal reaches a thread that does
// not block it: threads started before main() (OpenBLAS's pool) never saw
// BlockTerminationSignals(), and without a handler the default action
// would kill the process there.
volatile std::sig_atomic_t g_caught_signal = 0;

void RecordSignal(int sig) { g_caught_signal = sig; }

}  // namespace

void BlockTerminationSignals() {
  struct sigaction action = {};
  action.sa_handler = RecordSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  sigset_t set = TerminationSignals();
  const struct timespec tick = {0, 100 * 1000 * 1000};
  for (;;) {
    const int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig > 0) return sig;
    if (g_caught_signal != 0) return g_caught_signal;
  }
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
