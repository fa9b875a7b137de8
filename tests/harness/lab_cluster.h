#pragma once
// A real Herald cluster across emulated hosts (deploy/lab/lab.sh): each host
// a network namespace with its own address (198.18.0.<i>) and a shaped NIC.
// Layout: host 1 runs herald_scheduler and PS shard 0, hosts 2..W+1 one
// herald_worker each, host W+2 PS shard 1 (listening on 0.0.0.0 with
// --advertise, the way a multi-homed machine is set up). Clients are the
// real heraldctl, run on host 1. Every wait is bounded; the destructor
// stops every process and removes the lab.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/process.h"

namespace herald::testing {

struct LabLayout {
  int workers = 2;
  double link_gbps = 1;  // every host's NIC, both directions; 0: unshaped
  int liveness_timeout_ms = 3000;
};

class LabCluster {
 public:
  // Why the lab cannot run here (not root, no `ip netns`), or "" if it can.
  static std::string UnavailableReason();

  // A lab named `name` and this process's id (its namespaces'
  // prefix). Errors: the lab or a process did not come up (with log tails).
  static absl::StatusOr<std::unique_ptr<LabCluster>> Start(const std::string& name,
                                                           const LabLayout& layout);
  ~LabCluster();

  const std::string& dir() const { return dir_; }
  const std::string& scheduler_address() const { return scheduler_; }
  std::string HostAddress(int host) const;

  // heraldctl on host 1 against the scheduler (with the cluster token).
  CommandResult Ctl(std::vector<std::string> args);
  // Submits `spec` (written as a text-format file); returns the job id.
  absl::StatusOr<std::string> Submit(const proto::JobSpec& spec);
  // The job's status (heraldctl status --json), parsed.
  absl::StatusOr<proto::JobStatus> Status(const std::string& job_id);
  // Takes host `host`'s NIC down (a failed link).
  absl::Status LinkDown(int host);
  // Kills every process on every host and keeps the hosts (lab.sh stop).
  absl::Status StopProcesses();

  std::string Logs() const;

 private:
  LabCluster() = default;
  absl::StatusOr<std::unique_ptr<ChildProcess>> StartOn(int host, const std::string& binary,
                                                        const std::string& name,
                                                        std::vector<std::string> args);
  absl::Status RunLab(const std::vector<std::string>& args);
  bool WaitForNodes(int count);

  std::string lab_script_, name_, dir_, token_file_, scheduler_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;
};

}  // namespace herald::testing
