#pragma once
// The scheduler's HTTP(S) server (cpp-httplib on its own thread): the
// read-only status page, or only the metrics (options.page false): the cluster's nodes, the job
// queue and, per job, its spec, state, progress and charts of its history (status_page.h). Routes:
//   GET  /             the page (a login form when a token is required and
//                      not given)
//   GET  /api/status   {"nodes": ListNodesResponse, "jobs": JobStatusResponse
//                      with every job's history}, protobuf JSON
//   GET  /chart.js     Chart.js from Debian's libjs-chart.js (404 where the
//                      file is missing: the page then shows tables only)
//   GET  /metrics      the Prometheus text (metrics_text.h)
//   POST /login        form field `token`; GET /login?token=T for scripts.
//                      The right token sets an HttpOnly cookie and redirects
//                      to /; a wrong one answers 401.
// With a cluster token every route but /login and /chart.js requires it, as
// `Authorization: Bearer T` or the cookie. With a certificate and key the
// server speaks only HTTPS.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "scheduler/jobs/job_manager.h"
#include "scheduler/membership/node_registry.h"

namespace httplib {
class Server;
}

namespace herald::scheduler {

struct StatusHttpOptions {
  std::string listen;  // host:port; port 0 picks one
  // false: only /metrics (herald_scheduler --metrics_listen, for scrapers).
  bool page = true;
  std::string flag = "--http_listen";       // the flag named in errors
  std::string token;                        // the cluster token; empty: the page is open
  std::string tls_cert_path, tls_key_path;  // both: HTTPS only
  std::string chart_js_path = "/usr/share/javascript/chart.js/chart.min.js";
};

class StatusHttpServer {
 public:
  // `jobs` and `registry` must outlive the server. Errors: InvalidArgument
  // for a malformed address or a certificate that cannot be loaded,
  // Unavailable when the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<StatusHttpServer>> Start(const StatusHttpOptions& options,
                                                                 const JobManager* jobs,
                                                                 const NodeRegistry* registry);
  ~StatusHttpServer();  // stops and joins

  int port() const { return port_; }
  bool tls() const { return tls_; }

 private:
  StatusHttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace herald::scheduler
