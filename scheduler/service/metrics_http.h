#pragma once
// Serves GET /metrics (Prometheus text, metrics_text.h) over HTTP with
// cpp-httplib on its own thread. Other paths answer 404.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "scheduler/service/job_manager.h"
#include "scheduler/service/node_registry.h"

namespace httplib {
class Server;
}

namespace herald::scheduler {

class MetricsHttpServer {
 public:
  // Binds `listen` (host:port; port 0 picks one) and starts serving.
  // `jobs` and `registry` must outlive the server. Errors: InvalidArgument
  // for a malformed address, Unavailable when the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& listen,
                                                                  const JobManager* jobs,
                                                                  const NodeRegistry* registry);
  ~MetricsHttpServer();  // stops and joins

  int port() const { return port_; }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace herald::scheduler
