// herald_ps: one parameter-server shard. Serves the ParameterServer gRPC
// service (and gRPC health) until SIGTERM/SIGINT. Jobs are installed by the
// scheduler (StartJob) or, with --restore, from a checkpoint at start.

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cluster/node_membership.h"
#include "common/byte_size.h"
#include "common/command_line.h"
#include "common/logging.h"
#include "common/rpc/client_tls_flags.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/server_process.h"
#include "common/rpc/server_tls_flags.h"
#include "common/tunables.h"
#include "common/ucx/buffer_pool.h"
#include "ps_server/service/ps_core.h"
#include "ps_server/service/ps_service.h"
#include "ps_server/service/ucx_ps_server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "address to serve on (host:port; port 0 picks one)");
ABSL_FLAG(std::string, advertise, "",
          "address other hosts reach this shard at (registered with the scheduler); "
          "required when --listen binds every interface (0.0.0.0)");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once serving");
ABSL_FLAG(std::string, log_level, "info", "trace|debug|info|warn|error");
ABSL_FLAG(int, threads, 0, "threads serving one request's keys and commits (0: one per core)");
ABSL_FLAG(int, stripes, herald::tunables::kStripesPerTable,
          "stripes per table (lock granularity within a request)");
ABSL_FLAG(std::string, memory_budget, "0",
          "bytes of rows each job keeps in memory on this shard, with a K, M or G suffix "
          "(binary); the rest live on disk under --data_dir (0: every row in memory; a job's "
          "ps.memory_budget_bytes overrides it)");
ABSL_FLAG(std::string, data_dir, "", "where jobs' rows beyond their memory budget live");
ABSL_FLAG(std::string, restore, "",
          "checkpoint MANIFEST to load at start (the job, its spec and rows)");
ABSL_FLAG(int, shard, 0, "with --restore: this process's shard index");
ABSL_FLAG(int, num_shards, 0, "with --restore: shard count (0: the checkpoint's)");
ABSL_FLAG(std::string, scheduler, "",
          "herald_scheduler host:port to register with (as shard --shard) and heartbeat; "
          "empty: standalone");
ABSL_FLAG(std::string, token_file, "", "cluster token file (when the scheduler requires one)");
ABSL_FLAG(std::string, transport, "auto",
          "embedding data path: ucx (fetch, push and write-back over UCX: RDMA verbs, shared "
          "memory or TCP, as UCX picks; fail if it cannot start), grpc, or auto (ucx where it "
          "starts and TLS is off, else grpc); control calls are always gRPC");
ABSL_FLAG(bool, ucx_shared_memory, true,
          "UCX: reach workers of this host over shared memory where they offer it too (a "
          "dead peer is noticed by watching its process); false: TCP or verbs only");
ABSL_FLAG(std::string, ucx_address_file, "",
          "write the UCX data address (what a client connects to) to this file");
#ifdef HERALD_PS_TEST_HOOKS
// Only in //ps_server:herald_ps_with_test_hooks (testonly), never in herald_ps.
ABSL_FLAG(std::string, testing_checkpoint_stall_file, "",
          "TESTS ONLY: halfway through writing its first checkpoint, create this file and "
          "stall (--testing_checkpoint_stall_ms) so a test can act mid-checkpoint");
ABSL_FLAG(int64_t, testing_checkpoint_stall_ms, 120000, "TESTS ONLY: how long that stall lasts");
#endif

namespace {

// The UCX data path per --transport: started (auto: where UCX initialises
// and TLS is off), or null for gRPC only. Errors: InvalidArgument for a bad
// --transport, Unavailable when --transport=ucx cannot start.
absl::StatusOr<std::unique_ptr<herald::ps::UcxPsServer>> StartUcx(herald::ps::PsCore* core,
                                                                  const std::string& transport,
                                                                  const std::string& listen,
                                                                  bool tls,
                                                                  const std::string& token) {
  if (transport != "auto" && transport != "ucx" && transport != "grpc") {
    return absl::InvalidArgumentError(
        absl::StrCat("--transport: \"", transport, "\" is not auto, ucx or grpc"));
  }
  if (transport == "grpc") return nullptr;
  if (transport == "auto" && tls) {
    HLOG_INFO("data path: gRPC (TLS is configured; UCX traffic would not be encrypted)");
    return nullptr;
  }
  herald::ucx::RpcServerOptions options;
  options.token = token;
  // Serving 127.0.0.1 only: UCX stays on the loopback interface too.
  options.ucx.loopback_only = absl::StartsWith(listen, "127.");
  options.ucx.shared_memory = absl::GetFlag(FLAGS_ucx_shared_memory);
  absl::StatusOr<std::unique_ptr<herald::ps::UcxPsServer>> server =
      herald::ps::UcxPsServer::Start(core, options);
  if (!server.ok()) {
    if (transport == "ucx") return server.status();
    HLOG_WARN("data path: gRPC (UCX did not start: {})", std::string(server.status().message()));
    return nullptr;
  }
  if (tls) HLOG_WARN("data path: UCX although TLS is configured: rows travel unencrypted");
  HLOG_INFO("data path: UCX (fetch, push, write-back; control over gRPC){}{}",
            options.ucx.loopback_only ? ", loopback only" : "",
            options.ucx.shared_memory ? ", shared memory with this host's workers" : "");
  if (const std::string file = absl::GetFlag(FLAGS_ucx_address_file); !file.empty()) {
    std::ofstream(file) << (*server)->address() << "\n";
  }
  return server;
}

#ifdef HERALD_PS_TEST_HOOKS
// Test hook: once half of the rows are written, announce the stall, then
// hold the checkpoint there (the process's first checkpoint only).
void StallCheckpoint(const std::string& marker, uint64_t written, uint64_t total) {
  static std::atomic<bool> stalled{false};
  if (written * 2 < total || stalled.exchange(true)) return;
  std::ofstream(marker) << "stalled\n";
  HLOG_WARN("checkpoint stalled on purpose (--testing_checkpoint_stall_file)");
  absl::SleepFor(absl::Milliseconds(absl::GetFlag(FLAGS_testing_checkpoint_stall_ms)));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  herald::rpc::BlockTerminationSignals();
  absl::SetProgramUsageMessage("herald_ps: one parameter-server shard");
  const std::vector<std::string> positional = herald::ParseCommandLine(argc, argv);
  if (!positional.empty()) {
    std::fprintf(stderr, "unexpected argument '%s'\n", positional[0].c_str());
    return 2;
  }
  const int shard = absl::GetFlag(FLAGS_shard);
  absl::Status s = herald::InitLogging("ps", shard, absl::GetFlag(FLAGS_log_level));
  if (!s.ok()) {
    std::fprintf(stderr, "herald_ps: --log_level: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_threads) < 0 || absl::GetFlag(FLAGS_stripes) < 1 || shard < 0 ||
      absl::GetFlag(FLAGS_num_shards) < 0) {
    std::fprintf(stderr,
                 "herald_ps: --threads, --shard and --num_shards must be >= 0, "
                 "--stripes >= 1\n");
    return 2;
  }
  herald::rpc::ServerOptions server_options;
  s = herald::rpc::ApplyServerTlsFlags(&server_options);
  absl::StatusOr<herald::rpc::ChannelOptions> scheduler_channel =
      herald::rpc::ClientChannelOptionsFromFlags();
  if (!s.ok() || !scheduler_channel.ok()) {
    std::fprintf(stderr, "herald_ps: %s\n",
                 std::string((s.ok() ? scheduler_channel.status() : s).message()).c_str());
    return 2;
  }
  herald::ps::PsCoreOptions core_options;
  core_options.threads = absl::GetFlag(FLAGS_threads) > 0
                             ? absl::GetFlag(FLAGS_threads)
                             : std::max(1u, std::thread::hardware_concurrency());
  core_options.stripes_per_table = absl::GetFlag(FLAGS_stripes);
  absl::StatusOr<uint64_t> budget = herald::ParseByteSize(absl::GetFlag(FLAGS_memory_budget));
  if (!budget.ok()) {
    std::fprintf(stderr, "herald_ps: --memory_budget: %s\n",
                 std::string(budget.status().message()).c_str());
    return 2;
  }
  core_options.memory_budget = *budget;
  core_options.data_dir = absl::GetFlag(FLAGS_data_dir);
  if (*budget > 0 && core_options.data_dir.empty()) {
    std::fprintf(stderr, "herald_ps: --memory_budget needs --data_dir (where rows beyond it go)\n");
    return 2;
  }
#ifdef HERALD_PS_TEST_HOOKS
  if (const std::string marker = absl::GetFlag(FLAGS_testing_checkpoint_stall_file);
      !marker.empty()) {
    core_options.checkpoint_progress = [marker](uint64_t written, uint64_t total) {
      StallCheckpoint(marker, written, total);
    };
  }
#endif
  herald::ps::PsCore core(core_options);
  if (const std::string manifest = absl::GetFlag(FLAGS_restore); !manifest.empty()) {
    herald::proto::PsStartJobResponse restored;
    s = core.RestoreAtStart(manifest, shard, absl::GetFlag(FLAGS_num_shards), &restored);
    if (!s.ok()) {
      HLOG_ERROR("herald_ps: cannot restore {}: {}", manifest, std::string(s.message()));
      return 1;
    }
  }
  std::string token;
  if (const std::string path = absl::GetFlag(FLAGS_token_file); !path.empty()) {
    absl::StatusOr<std::string> read = herald::rpc::ReadTokenFile(path);
    if (!read.ok()) {
      std::fprintf(stderr, "herald_ps: --token_file: %s\n",
                   std::string(read.status().message()).c_str());
      return 2;
    }
    token = *read;
  }
  absl::StatusOr<std::unique_ptr<herald::ps::UcxPsServer>> ucx =
      StartUcx(&core, absl::GetFlag(FLAGS_transport), absl::GetFlag(FLAGS_listen),
               !server_options.tls_cert_path.empty(), token);
  if (!ucx.ok()) {
    HLOG_ERROR("herald_ps: {}", std::string(ucx.status().message()));
    return absl::IsInvalidArgument(ucx.status()) ? 2 : 1;
  }
  herald::ps::PsService service(&core);
  herald::rpc::ServeOptions options;
  options.role = "herald_ps";
  options.server = server_options;
  options.server.listen_address = absl::GetFlag(FLAGS_listen);
  options.server.advertise_host = absl::GetFlag(FLAGS_advertise);
  if (absl::Status a = herald::rpc::CheckAdvertised(options.server); !a.ok()) {
    std::fprintf(stderr, "herald_ps: %s\n", std::string(a.message()).c_str());
    return 2;
  }
  options.port_file = absl::GetFlag(FLAGS_port_file);
  std::unique_ptr<herald::cluster::NodeMembership> membership;
  if (const std::string scheduler = absl::GetFlag(FLAGS_scheduler); !scheduler.empty()) {
    herald::cluster::MembershipOptions m;
    m.scheduler_address = scheduler;
    m.channel = *scheduler_channel;
    m.token = token;
    m.registration.set_role(herald::proto::NODE_ROLE_PS);
    m.registration.set_requested_rank(shard);
    if (*ucx) m.registration.set_ucx_address((*ucx)->address());
    options.on_serving = [&membership, m](const std::string& address) mutable -> absl::Status {
      m.registration.set_address(address);
      absl::StatusOr<std::unique_ptr<herald::cluster::NodeMembership>> started =
          herald::cluster::NodeMembership::Start(m);
      if (!started.ok()) return started.status();
      membership = std::move(*started);
      return absl::OkStatus();
    };
  }
  s = herald::rpc::ServeUntilSignal(options, {&service});
  if (!s.ok()) {
    HLOG_ERROR("herald_ps: {}", std::string(s.message()));
    return 1;
  }
  if (*ucx) {
    const herald::ucx::BufferPool::Stats pool = herald::ucx::BufferPool::Shared().stats();
    HLOG_INFO("UCX message buffers: {} reused, {} allocated, {} freed past the bound", pool.reused,
              pool.allocated, pool.freed);
  }
  return 0;
}
