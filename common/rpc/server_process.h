#pragma once
// The life of a server process: serve until SIGTERM or SIGINT, then shut down
// cleanly. Used by the herald_* mains.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/rpc/server.h"

namespace herald::rpc {

// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts
// afterwards, so WaitForTerminationSignal() can receive them synchronously,
// and installs a handler that records them when they reach a thread started
// before main() (library thread pools), instead of the default kill.
// Call first thing in main().
void BlockTerminationSignals();

// Waits for SIGTERM or SIGINT (checking every 100 ms for one the handler
// recorded) and returns its number.
// REQUIRES: BlockTerminationSignals() was called before any thread started.
int WaitForTerminationSignal();

struct ServeOptions {
  ServerOptions server;
  // If set, the bound port is written here (atomically) once serving.
  std::string port_file;
  // Role name for log lines, e.g. "herald_ps".
  std::string role;
  // Called once serving, with the dialable address (e.g. to register with
  // the scheduler); an error stops the server and is returned.
  std::function<absl::Status(const std::string& address)> on_serving;
  // Called on the termination signal, before the server shuts down (e.g.
  // to cancel long-running calls).
  std::function<void()> on_stopping;
};

// Starts `services`, logs the address, writes the port file, waits for a
// termination signal and shuts the server down. Returns an error if the
// server could not start.
absl::Status ServeUntilSignal(const ServeOptions& options,
                              const std::vector<grpc::Service*>& services);

}  // namespace herald::rpc
