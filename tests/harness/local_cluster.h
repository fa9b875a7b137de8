#pragma once
// A real Herald cluster on 127.0.0.1 for multi-process tests: one
// herald_scheduler, `ps` herald_ps shards and `workers` herald_worker, all
// sharing a cluster token, every port 0 (read from port files). Client
// helpers call the JobService with the token. Every wait is bounded.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/scheduler.grpc.pb.h"
#include "tests/harness/process.h"
#include "tests/harness/test_certs.h"

namespace herald::testing {

// More flags for the cluster's processes, by role (e.g. ps_and_workers =
// {"--transport=grpc"}).
struct ClusterFlags {
  // The PS binary (runfiles path): herald_ps_with_test_hooks for the tests
  // that stall a checkpoint (--testing_checkpoint_stall_*).
  std::string ps_binary = "ps_server/herald_ps";
  // The worker binary (runfiles path): herald_worker_with_test_hooks for
  // --device null (bench/pipeline_bench).
  std::string worker_binary = "worker/herald_worker";
  // When set, every binary is this directory's file of the same name (e.g.
  // another commit's build), not the runfiles'.
  std::string binary_dir;
  std::vector<std::string> scheduler;
  std::vector<std::string> ps;
  std::vector<std::string> workers;
  std::vector<std::string> ps_and_workers;
};

class LocalCluster {
 public:
  static constexpr char kToken[] = "cluster-secret-42";

  // Starts every process in a fresh test directory named `name` and waits
  // until all of them are registered and alive. With `tls`, every server
  // serves TLS with its certificate and every client (the processes' and
  // this harness's) verifies with its CA. Errors: a process that did not come
  // up (with its log tail).
  // `worker_devices[w]`: worker w's --device (empty: every worker on the CPU).
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Start(
      const std::string& name, int ps, int workers, const TestCerts* tls = nullptr,
      const std::vector<std::string>& worker_devices = {}, const ClusterFlags& flags = {});

  const std::string& dir() const { return dir_; }
  const std::string& address() const { return address_; }  // the scheduler's
  const std::string& token_file() const { return token_file_; }
  proto::JobService::Stub* jobs() { return jobs_.get(); }
  // Closes this harness's channel to the scheduler (jobs() is null after),
  // e.g. before timing the scheduler's shutdown, which gives a connected
  // client gRPC's shutdown grace.
  void CloseClient() { jobs_.reset(); }
  ChildProcess& worker(int w) { return *workers_[w]; }
  ChildProcess& scheduler() { return *scheduler_; }
  ChildProcess& ps(int shard) { return *ps_[shard]; }
  // Starts a new herald_ps for `shard` (as systemd restarts a crashed one),
  // replacing the process handle; the old process must have exited.
  // Errors: the new process did not come up.
  absl::Status RestartPs(int shard);
  // The same for worker `w` (its log and port file get a "-restarted" name).
  absl::Status RestartWorker(int w);
  // Addresses of the PS shards, by shard index.
  std::vector<std::string> PsAddresses() const;

  // Deadline + token on a client context.
  void Authorize(grpc::ClientContext* context, int64_t timeout_ms = 10000) const;
  // Polls ListNodes until `count` live nodes (bounded). True if reached.
  bool WaitForNodes(int count);
  // Errors: the RPC's status.
  absl::StatusOr<std::string> Submit(const proto::JobSpec& spec);
  // Follows WatchJob until the job ends (or `until` says stop); returns the
  // last status seen.
  proto::JobStatus Watch(const std::string& job_id,
                         const std::function<bool(const proto::JobStatus&)>& until = nullptr);
  // Errors: the RPC's status.
  absl::Status Cancel(const std::string& job_id);
  absl::StatusOr<proto::JobStatus> Status(const std::string& job_id, bool include_losses,
                                          bool include_history = false);
  // With `since`: an increment of that export (ExportJobRequest.since).
  absl::StatusOr<proto::ExportJobResponse> Export(const std::string& job_id,
                                                  const std::string& out_dir,
                                                  const std::string& since = "");
  // The tail of every process's log, for failure messages.
  std::string Logs() const;

 private:
  LocalCluster() = default;
  // herald_ps's flags for shard `shard`.
  std::vector<std::string> PsFlags(int shard) const;
  std::vector<std::string> WorkerFlags(int w) const;
  // StartProcess, then waits (20 s) for its port file: a restarted server.
  absl::StatusOr<std::unique_ptr<ChildProcess>> StartListening(const std::string& binary,
                                                               const std::string& name,
                                                               std::vector<std::string> args);
  absl::StatusOr<std::unique_ptr<ChildProcess>> StartProcess(const std::string& binary,
                                                             const std::string& name,
                                                             std::vector<std::string> args);

  std::string dir_, token_file_, address_;
  std::vector<std::string> tls_flags_;  // given to every process (empty: plaintext)
  ClusterFlags flags_;
  std::vector<std::string> worker_devices_;
  std::unique_ptr<ChildProcess> scheduler_;
  std::vector<std::unique_ptr<ChildProcess>> ps_, workers_;
  std::vector<std::string> ps_names_;  // per shard: its process's name (port file, log)
  std::unique_ptr<proto::JobService::Stub> jobs_;
};

}  // namespace herald::testing
