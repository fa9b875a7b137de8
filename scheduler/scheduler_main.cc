// herald_scheduler: the cluster's coordinator (registration, heartbeats,
// rendezvous), job service (queue, lifecycle) and embedding scheduler (data
// loader + planner feeding each worker's step stream). Serves until
// SIGTERM/SIGINT; a running job is then stopped: cancelled, or with
// --state_dir left running in the job store for the next scheduler to
// resume.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "common/command_line.h"
#include "common/logging.h"
#include "common/rpc/client_tls_flags.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/server.h"
#include "common/rpc/server_process.h"
#include "common/rpc/server_tls_flags.h"
#include "common/tunables.h"
#include "scheduler/http/status_http.h"
#include "scheduler/jobs/job_manager.h"
#include "scheduler/rpc/coordinator_service.h"
#include "scheduler/rpc/job_service.h"
#include "scheduler/rpc/worker_service.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "address to serve on (host:port; port 0 picks one)");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once serving");
ABSL_FLAG(std::string, log_level, "info", "trace|debug|info|warn|error");
ABSL_FLAG(std::string, token_file, "",
          "cluster token file; when set every call must carry the token (x-herald-token)");
ABSL_FLAG(int, heartbeat_ms, herald::tunables::kHeartbeatIntervalMs,
          "heartbeat interval asked of the nodes");
ABSL_FLAG(int, liveness_timeout_ms, herald::tunables::kLivenessTimeoutMs,
          "a node silent for longer is dead (its running job fails)");
ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics on http://HOST:PORT/metrics (port 0 picks one; empty: off)");
ABSL_FLAG(std::string, metrics_port_file, "", "write the bound metrics port to this file");
ABSL_FLAG(std::string, state_dir, "",
          "record every job in <dir>/scheduler.db (SQLite) and read them back at start: queued "
          "jobs stay queued, a job that was running is failed (empty: jobs live in memory only)");
ABSL_FLAG(std::string, http_listen, "",
          "serve the status page on http://HOST:PORT/ (https with --tls_cert; port 0 picks "
          "one; empty: off); with --token_file it asks for the token");
ABSL_FLAG(std::string, http_port_file, "", "write the bound status page port to this file");
ABSL_FLAG(std::string, chart_js, "/usr/share/javascript/chart.js/chart.min.js",
          "Chart.js for the status page's charts (Debian's libjs-chart.js)");
ABSL_FLAG(int, step_queue, herald::tunables::kStepQueueCapacity,
          "steps queued per worker ahead of it (back-pressure bound)");
ABSL_FLAG(int, planner_threads, herald::tunables::kPlannerThreads,
          "threads planning a batch's tables at once (0: one per core; 0..64; plans are the same "
          "for any value)");

int main(int argc, char** argv) {
  herald::rpc::BlockTerminationSignals();
  absl::SetProgramUsageMessage(
      "herald_scheduler: coordinator, job service and embedding scheduler");
  const std::vector<std::string> positional = herald::ParseCommandLine(argc, argv);
  if (!positional.empty()) {
    std::fprintf(stderr, "unexpected argument '%s'\n", positional[0].c_str());
    return 2;
  }
  absl::Status s = herald::InitLogging("scheduler", 0, absl::GetFlag(FLAGS_log_level));
  if (!s.ok()) {
    std::fprintf(stderr, "herald_scheduler: --log_level: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_heartbeat_ms) < 1 ||
      absl::GetFlag(FLAGS_liveness_timeout_ms) <= absl::GetFlag(FLAGS_heartbeat_ms) ||
      absl::GetFlag(FLAGS_step_queue) < 1 || absl::GetFlag(FLAGS_planner_threads) < 0 ||
      absl::GetFlag(FLAGS_planner_threads) > 64) {
    std::fprintf(stderr,
                 "herald_scheduler: need --heartbeat_ms >= 1, --liveness_timeout_ms > "
                 "--heartbeat_ms, --step_queue >= 1 and --planner_threads in 0..64\n");
    return 2;
  }
  std::string token;
  if (const std::string path = absl::GetFlag(FLAGS_token_file); !path.empty()) {
    absl::StatusOr<std::string> t = herald::rpc::ReadTokenFile(path);
    if (!t.ok()) {
      std::fprintf(stderr, "herald_scheduler: --token_file: %s\n",
                   std::string(t.status().message()).c_str());
      return 2;
    }
    token = *t;
  }
  herald::rpc::ServeOptions options;
  options.role = "herald_scheduler";
  options.server.listen_address = absl::GetFlag(FLAGS_listen);
  options.port_file = absl::GetFlag(FLAGS_port_file);
  s = herald::rpc::ApplyServerTlsFlags(&options.server);
  absl::StatusOr<herald::rpc::ChannelOptions> ps_channel =
      herald::rpc::ClientChannelOptionsFromFlags();
  if (!s.ok() || !ps_channel.ok()) {
    std::fprintf(stderr, "herald_scheduler: %s\n",
                 std::string((s.ok() ? ps_channel.status() : s).message()).c_str());
    return 2;
  }
  herald::scheduler::NodeRegistry registry(
      absl::Milliseconds(absl::GetFlag(FLAGS_liveness_timeout_ms)));
  herald::scheduler::KvRendezvous rendezvous;
  herald::scheduler::JobManagerOptions job_options;
  job_options.run.step_queue_capacity = absl::GetFlag(FLAGS_step_queue);
  job_options.run.planner_threads = static_cast<uint32_t>(absl::GetFlag(FLAGS_planner_threads));
  job_options.run.ps_channel = *ps_channel;
  std::unique_ptr<herald::scheduler::JobStore> store;
  if (const std::string dir = absl::GetFlag(FLAGS_state_dir); !dir.empty()) {
    auto opened = herald::scheduler::JobStore::Open(dir);
    if (!opened.ok()) {
      HLOG_ERROR("herald_scheduler: --state_dir: {}", std::string(opened.status().message()));
      return 1;
    }
    store = std::move(*opened);
    auto restored = store->Load();
    if (!restored.ok()) {
      HLOG_ERROR("herald_scheduler: --state_dir: {}", std::string(restored.status().message()));
      return 1;
    }
    HLOG_INFO("jobs recorded in {} ({} read back)", store->path(), restored->size());
    job_options.store = store.get();
    job_options.run.sizing_dir = dir + "/sizing";
    job_options.restored = std::move(*restored);
  }
  herald::scheduler::JobManager jobs(&registry, &rendezvous, std::move(job_options));
  herald::scheduler::CoordinatorService coordinator(&registry, &rendezvous, token,
                                                    absl::GetFlag(FLAGS_heartbeat_ms));
  herald::scheduler::JobServiceImpl job_service(&jobs, &registry, token);
  herald::scheduler::WorkerServiceImpl worker_service(&jobs, token);
  std::unique_ptr<herald::scheduler::StatusHttpServer> metrics;
  if (const std::string listen = absl::GetFlag(FLAGS_metrics_listen); !listen.empty()) {
    herald::scheduler::StatusHttpOptions o;
    o.listen = listen;
    o.page = false;  // scrapers: metrics only, no token
    o.flag = "--metrics_listen";
    auto started = herald::scheduler::StatusHttpServer::Start(o, &jobs, &registry);
    if (!started.ok()) {
      HLOG_ERROR("herald_scheduler: {}", std::string(started.status().message()));
      return started.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    }
    metrics = std::move(*started);
    HLOG_INFO("metrics on http://{}:{}/metrics", listen.substr(0, listen.rfind(':')),
              metrics->port());
    if (const std::string file = absl::GetFlag(FLAGS_metrics_port_file); !file.empty()) {
      if (absl::Status w = herald::rpc::WritePortFile(file, metrics->port()); !w.ok()) {
        HLOG_ERROR("herald_scheduler: {}", std::string(w.message()));
        return 1;
      }
    }
  }
  std::unique_ptr<herald::scheduler::StatusHttpServer> status_page;
  if (const std::string listen = absl::GetFlag(FLAGS_http_listen); !listen.empty()) {
    herald::scheduler::StatusHttpOptions o;
    o.listen = listen;
    o.token = token;
    o.tls_cert_path = options.server.tls_cert_path;
    o.tls_key_path = options.server.tls_key_path;
    o.chart_js_path = absl::GetFlag(FLAGS_chart_js);
    auto started = herald::scheduler::StatusHttpServer::Start(o, &jobs, &registry);
    if (!started.ok()) {
      HLOG_ERROR("herald_scheduler: {}", std::string(started.status().message()));
      return started.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    }
    status_page = std::move(*started);
    HLOG_INFO("status page on {}://{}:{}/", status_page->tls() ? "https" : "http",
              listen.substr(0, listen.rfind(':')), status_page->port());
    if (const std::string file = absl::GetFlag(FLAGS_http_port_file); !file.empty()) {
      if (absl::Status w = herald::rpc::WritePortFile(file, status_page->port()); !w.ok()) {
        HLOG_ERROR("herald_scheduler: {}", std::string(w.message()));
        return 1;
      }
    }
  }
  // Stopping the job manager first cancels a running job and releases the
  // calls that wait on it (JoinJob, WatchJob, step streams), so the server
  // shuts down without waiting out their timeouts.
  options.on_stopping = [&jobs] { jobs.Stop(); };
  s = herald::rpc::ServeUntilSignal(options, {&coordinator, &job_service, &worker_service});
  if (!s.ok()) {
    HLOG_ERROR("herald_scheduler: {}", std::string(s.message()));
    return 1;
  }
  status_page.reset();  // both stop serving before the job manager goes away
  metrics.reset();
  return 0;
}
