// herald_worker: one training worker. Registers with the scheduler (rank,
// device, cache memory), heartbeats, joins the jobs that include it,
// executes their steps and reports each iteration; serves gRPC health.
// SIGTERM/SIGINT: the current step finishes, the job is told this worker
// abandons it, and the process exits 0.

#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cluster/node_membership.h"
#include "cluster/scheduler_client.h"
#include "common/command_line.h"
#include "common/ids.h"
#include "common/logging.h"
#include "common/rpc/client_tls_flags.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/server.h"
#include "common/rpc/server_process.h"
#include "common/rpc/server_tls_flags.h"
#include "common/tunables.h"
#include "worker/runtime/device_factory.h"
#include "worker/runtime/worker_agent.h"
#ifdef HERALD_WORKER_TEST_HOOKS
#include "worker/device/null_device.h"
#endif

ABSL_FLAG(std::string, scheduler, "", "herald_scheduler address host:port (required)");
ABSL_FLAG(std::string, token_file, "", "cluster token file (when the scheduler requires one)");
ABSL_FLAG(std::string, device, "cpu",
          "cpu, or cuda:N: GPU N (needs a build with --config=cuda; see docs/worker.md)");
ABSL_FLAG(int, rank, -1, "worker rank to ask for (-1: the scheduler picks)");
ABSL_FLAG(uint64_t, cache_memory_mb, 4096,
          "memory this worker offers its embedding cache, MiB (GPU memory for cuda:N)");
ABSL_FLAG(uint64_t, pinned_staging_mb, 16,
          "cuda:N: size of each of the two pinned host buffers transfers go through, MiB");
ABSL_FLAG(std::string, listen, "127.0.0.1:0", "health service address (host:port; port 0 picks)");
ABSL_FLAG(std::string, port_file, "", "write the bound health port to this file once serving");
ABSL_FLAG(std::string, advertise, "",
          "address other hosts reach this worker at (registered with the scheduler); "
          "required when --listen binds every interface (0.0.0.0)");
ABSL_FLAG(std::string, gloo_host, "",
          "interface address the Gloo all-reduce and row exchange listen on "
          "(empty: --advertise, else the --listen host)");
ABSL_FLAG(std::string, log_level, "info", "trace|debug|info|warn|error");
ABSL_FLAG(bool, ucx_shared_memory, true,
          "UCX: reach PS shards of this host over shared memory where they offer it too (a "
          "dead shard is noticed by watching its process); false: TCP or verbs only");
ABSL_FLAG(bool, overlap, true,
          "overlap the PS transfers with each other and with compute, and fetch later "
          "steps' early rows during the current one (the model is the same either way)");
ABSL_FLAG(uint32_t, prefetch_steps, herald::tunables::kPrefetchSteps,
          "with --overlap: how many steps ahead the rows a plan marks early are requested, "
          "1..3 (each no earlier than its distance allows; the model is the same)");
ABSL_FLAG(uint64_t, all_reduce_bucket_bytes, herald::tunables::kAllReduceBucketBytes,
          "with --overlap and Gloo: dense gradients the backward has finished start their "
          "all-reduce once this many bytes of them are final (the model is the same)");
ABSL_FLAG(int, check_threads, 0,
          "threads that check each step's plan against the embedding cache, tables in "
          "parallel; 0: min(4, cores / 4)");
ABSL_FLAG(std::string, transport, "auto",
          "embedding data path to the PS shards: ucx (fail a job whose shards do not all serve "
          "UCX), grpc, or auto (ucx where every shard serves it, TLS is off and it connects, "
          "else grpc); control calls are always gRPC. A job's spec data_path overrides it");

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "herald_worker: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  herald::rpc::BlockTerminationSignals();
  absl::SetProgramUsageMessage(
      "herald_worker --scheduler HOST:PORT [--token_file F] [--device cpu|cuda:N]: one training "
      "worker");
  const std::vector<std::string> positional = herald::ParseCommandLine(argc, argv);
  if (!positional.empty()) return Fail("unexpected argument '" + positional[0] + "'");
  const int rank = absl::GetFlag(FLAGS_rank);
  absl::Status s =
      herald::InitLogging("worker", rank < 0 ? 0 : rank, absl::GetFlag(FLAGS_log_level));
  if (!s.ok()) return Fail("--log_level: " + std::string(s.message()));
  if (absl::GetFlag(FLAGS_scheduler).empty()) return Fail("--scheduler is required");
#ifdef HERALD_WORKER_TEST_HOOKS
  herald::worker::RegisterNullDevice();  // --device null: no computation (bench/pipeline_bench)
#endif
  const std::string device = absl::GetFlag(FLAGS_device);
  absl::StatusOr<herald::worker::DeviceDescription> described =
      herald::worker::DescribeDevice(device);
  if (!described.ok()) return Fail("--device: " + std::string(described.status().message()));
  const uint64_t cache_bytes = absl::GetFlag(FLAGS_cache_memory_mb) << 20;
  if (described->kind == herald::proto::DEVICE_KIND_CUDA && cache_bytes > described->memory_bytes) {
    return Fail(absl::StrCat("--cache_memory_mb ", absl::GetFlag(FLAGS_cache_memory_mb),
                             " exceeds the memory of ", device, " (", described->model, ", ",
                             described->memory_bytes >> 20, " MiB)"));
  }
  const uint64_t staging_mb = absl::GetFlag(FLAGS_pinned_staging_mb);
  if (staging_mb == 0 || staging_mb > 4096) {
    return Fail(absl::StrCat("--pinned_staging_mb ", staging_mb, ": expected 1..4096"));
  }
  std::string token;
  if (const std::string path = absl::GetFlag(FLAGS_token_file); !path.empty()) {
    absl::StatusOr<std::string> t = herald::rpc::ReadTokenFile(path);
    if (!t.ok()) return Fail("--token_file: " + std::string(t.status().message()));
    token = *t;
  }

  herald::rpc::ServerOptions server_options;
  server_options.listen_address = absl::GetFlag(FLAGS_listen);
  server_options.advertise_host = absl::GetFlag(FLAGS_advertise);
  if (absl::Status a = herald::rpc::CheckAdvertised(server_options); !a.ok()) {
    return Fail(std::string(a.message()));
  }
  if (absl::Status t = herald::rpc::ApplyServerTlsFlags(&server_options); !t.ok()) {
    return Fail(std::string(t.message()));
  }
  absl::StatusOr<herald::rpc::ChannelOptions> channel =
      herald::rpc::ClientChannelOptionsFromFlags();
  if (!channel.ok()) return Fail(std::string(channel.status().message()));

  // Health first, so supervisors see the process up while it registers.
  auto server = herald::rpc::StartServer(server_options, {});
  if (!server.ok()) {
    HLOG_ERROR("herald_worker: {}", std::string(server.status().message()));
    return 1;
  }
  HLOG_INFO("herald_worker health on {}, device {} ({})", (*server)->address(), device,
            described->model);
  if (const std::string pf = absl::GetFlag(FLAGS_port_file); !pf.empty()) {
    if (absl::Status w = herald::rpc::WritePortFile(pf, (*server)->port()); !w.ok()) {
      HLOG_ERROR("herald_worker: {}", std::string(w.message()));
      return 1;
    }
  }

  herald::cluster::MembershipOptions membership_options;
  membership_options.scheduler_address = absl::GetFlag(FLAGS_scheduler);
  membership_options.token = token;
  membership_options.channel = *channel;
  herald::proto::RegisterRequest& reg = membership_options.registration;
  reg.set_role(herald::proto::NODE_ROLE_WORKER);
  reg.set_address((*server)->address());
  reg.set_requested_rank(rank);
  reg.set_device(described->kind);
  reg.set_device_memory_bytes(described->memory_bytes);
  reg.set_device_uuid(described->uuid);
  reg.set_cache_memory_bytes(cache_bytes);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  reg.set_hostname(host);
  auto membership = herald::cluster::NodeMembership::Start(membership_options);
  if (!membership.ok()) return Fail("--scheduler: " + std::string(membership.status().message()));

  herald::worker::WorkerAgentOptions agent_options;
  agent_options.token = token;
  agent_options.gloo_host = absl::GetFlag(FLAGS_gloo_host);
  if (agent_options.gloo_host.empty()) {
    // The host part of the advertised address ("host:port", IPv6 in brackets).
    const std::string address = (*server)->address();
    std::string host = address.substr(0, address.rfind(':'));
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    agent_options.gloo_host = host;
  }
  agent_options.ps_channel = *channel;
  agent_options.transport = absl::GetFlag(FLAGS_transport);
  agent_options.overlap = absl::GetFlag(FLAGS_overlap);
  agent_options.all_reduce_bucket_bytes = absl::GetFlag(FLAGS_all_reduce_bucket_bytes);
  agent_options.prefetch_steps = absl::GetFlag(FLAGS_prefetch_steps);
  if (agent_options.prefetch_steps < 1 ||
      agent_options.prefetch_steps > herald::kMaxEarlyDistance) {
    return Fail(absl::StrCat("--prefetch_steps: ", agent_options.prefetch_steps, ", want 1..",
                             herald::kMaxEarlyDistance));
  }
  if (absl::GetFlag(FLAGS_check_threads) < 0) {
    return Fail("--check_threads: " + std::to_string(absl::GetFlag(FLAGS_check_threads)) +
                " is negative");
  }
  agent_options.check_threads = absl::GetFlag(FLAGS_check_threads);
  agent_options.ucx_shared_memory = absl::GetFlag(FLAGS_ucx_shared_memory);
  if (agent_options.transport != "auto" && agent_options.transport != "ucx" &&
      agent_options.transport != "grpc") {
    return Fail("--transport: \"" + agent_options.transport + "\" is not auto, ucx or grpc");
  }
  agent_options.device = device;
  agent_options.device_options.pinned_staging_bytes = staging_mb << 20;
  const std::unique_ptr<herald::cluster::SchedulerClient> scheduler =
      herald::cluster::MakeGrpcSchedulerClient((*membership)->channel(), token);
  herald::worker::WorkerAgent agent(membership->get(), scheduler.get(), agent_options);
  std::thread signals([&agent] {
    const int sig = herald::rpc::WaitForTerminationSignal();
    HLOG_INFO("herald_worker: signal {}, shutting down after the current step", sig);
    agent.Stop();
  });
  s = agent.Run();
  signals.join();
  (*server)->Shutdown();
  HLOG_INFO("herald_worker: shutting down");
  return s.ok() ? 0 : 1;
}
