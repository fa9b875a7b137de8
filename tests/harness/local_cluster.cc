#include "tests/harness/local_cluster.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/status.h"

namespace herald::testing {

absl::StatusOr<std::unique_ptr<ChildProcess>> LocalCluster::StartProcess(
    const std::string& binary, const std::string& name, std::vector<std::string> args) {
  args.push_back("--port_file=" + dir_ + "/" + name + ".port");
  args.insert(args.end(), tls_flags_.begin(), tls_flags_.end());
  const std::string path =
      flags_.binary_dir.empty()
          ? RunfilePath(binary)
          : flags_.binary_dir + "/" + binary.substr(binary.find_last_of('/') + 1);
  return ChildProcess::Start(path, args, dir_ + "/" + name + ".log");
}

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(
    const std::string& name, int ps, int workers, const TestCerts* tls,
    const std::vector<std::string>& worker_devices, const ClusterFlags& extra) {
  std::unique_ptr<LocalCluster> c(new LocalCluster());
  c->flags_ = extra;
  rpc::ChannelOptions channel_options;
  if (tls != nullptr) {
    c->tls_flags_ = {"--tls_cert=" + tls->server_pem, "--tls_key=" + tls->server_key,
                     "--tls_ca=" + tls->ca_pem};
    channel_options.tls_root_cert_path = tls->ca_pem;
  }
  c->dir_ = MakeTestDir(name);
  c->token_file_ = c->dir_ + "/token";
  std::ofstream(c->token_file_) << kToken << "\n";
  std::vector<std::string> flags = {"--heartbeat_ms=200", "--liveness_timeout_ms=3000",
                                    // Two planner threads: tables planned and steps encoded
                                    // in parallel, which must change no bit of a job.
                                    "--planner_threads=2", "--token-file=" + c->token_file_};
  flags.insert(flags.end(), extra.scheduler.begin(), extra.scheduler.end());
  HERALD_ASSIGN_OR_RETURN(c->scheduler_,
                          c->StartProcess("scheduler/herald_scheduler", "scheduler", flags));
  HERALD_ASSIGN_OR_RETURN(int port,
                          c->scheduler_->WaitForPortFile(c->dir_ + "/scheduler.port", 20000));
  c->address_ = absl::StrCat("127.0.0.1:", port);
  for (int s = 0; s < ps; ++s) {
    HERALD_ASSIGN_OR_RETURN(
        std::unique_ptr<ChildProcess> p,
        c->StartProcess(c->flags_.ps_binary, absl::StrCat("ps", s), c->PsFlags(s)));
    c->ps_.push_back(std::move(p));
    c->ps_names_.push_back(absl::StrCat("ps", s));
  }
  c->worker_devices_ = worker_devices;
  for (int w = 0; w < workers; ++w) {
    HERALD_ASSIGN_OR_RETURN(
        std::unique_ptr<ChildProcess> p,
        c->StartProcess(c->flags_.worker_binary, absl::StrCat("worker", w), c->WorkerFlags(w)));
    c->workers_.push_back(std::move(p));
  }
  HERALD_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                          rpc::MakeChannel(c->address_, channel_options));
  c->jobs_ = proto::JobService::NewStub(channel);
  if (!c->WaitForNodes(ps + workers)) {
    return absl::DeadlineExceededError(
        absl::StrCat("the cluster never had ", ps + workers, " live nodes\n", c->Logs()));
  }
  return c;
}

std::vector<std::string> LocalCluster::WorkerFlags(int w) const {
  std::vector<std::string> args = {"--scheduler=" + address_, "--token_file=" + token_file_};
  if (!worker_devices_.empty()) args.push_back("--device=" + worker_devices_[w]);
  args.insert(args.end(), flags_.ps_and_workers.begin(), flags_.ps_and_workers.end());
  args.insert(args.end(), flags_.workers.begin(), flags_.workers.end());
  return args;
}

absl::StatusOr<std::unique_ptr<ChildProcess>> LocalCluster::StartListening(
    const std::string& binary, const std::string& name, std::vector<std::string> args) {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> p,
                          StartProcess(binary, name, std::move(args)));
  HERALD_RETURN_IF_ERROR(p->WaitForPortFile(dir_ + "/" + name + ".port", 20000).status());
  return p;
}

absl::Status LocalCluster::RestartWorker(int w) {
  HERALD_ASSIGN_OR_RETURN(
      workers_[w], StartListening(flags_.worker_binary, absl::StrCat("worker", w, "-restarted"),
                                  WorkerFlags(w)));
  return absl::OkStatus();
}

std::vector<std::string> LocalCluster::PsFlags(int shard) const {
  std::vector<std::string> flags = {"--scheduler=" + address_, absl::StrCat("--shard=", shard),
                                    "--token_file=" + token_file_, "--threads=1",
                                    // Where jobs with a memory budget keep the rest.
                                    absl::StrCat("--data_dir=", dir_, "/ps", shard, "-data")};
  flags.insert(flags.end(), flags_.ps_and_workers.begin(), flags_.ps_and_workers.end());
  flags.insert(flags.end(), flags_.ps.begin(), flags_.ps.end());
  return flags;
}

absl::Status LocalCluster::RestartPs(int shard) {
  const std::string name = absl::StrCat("ps", shard, "-restarted");
  HERALD_ASSIGN_OR_RETURN(ps_[shard], StartListening(flags_.ps_binary, name, PsFlags(shard)));
  ps_names_[shard] = name;
  return absl::OkStatus();
}

std::vector<std::string> LocalCluster::PsAddresses() const {
  std::vector<std::string> out;
  for (size_t s = 0; s < ps_.size(); ++s) {
    std::ifstream in(absl::StrCat(dir_, "/", ps_names_[s], ".port"));
    int port = 0;
    in >> port;
    out.push_back(absl::StrCat("127.0.0.1:", port));
  }
  return out;
}

void LocalCluster::Authorize(grpc::ClientContext* context, int64_t timeout_ms) const {
  rpc::SetDeadline(context, timeout_ms);
  rpc::AttachToken(context, kToken);
}

bool LocalCluster::WaitForNodes(int count) {
  for (int attempt = 0; attempt < 400; ++attempt) {
    grpc::ClientContext context;
    Authorize(&context);
    proto::ListNodesResponse nodes;
    if (jobs_->ListNodes(&context, {}, &nodes).ok()) {
      int alive = 0;
      for (const auto& n : nodes.nodes()) alive += n.alive();
      if (alive >= count) return true;
    }
    absl::SleepFor(absl::Milliseconds(50));  // polling a remote state, bounded
  }
  return false;
}

absl::StatusOr<std::string> LocalCluster::Submit(const proto::JobSpec& spec) {
  grpc::ClientContext context;
  Authorize(&context);
  proto::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  proto::SubmitJobResponse response;
  HERALD_RETURN_IF_ERROR(rpc::FromGrpcStatus(jobs_->SubmitJob(&context, request, &response)));
  return response.job_id();
}

absl::Status LocalCluster::Cancel(const std::string& job_id) {
  grpc::ClientContext context;
  Authorize(&context);
  proto::CancelJobRequest request;
  request.set_job_id(job_id);
  proto::CancelJobResponse response;
  return rpc::FromGrpcStatus(jobs_->CancelJob(&context, request, &response));
}

proto::JobStatus LocalCluster::Watch(const std::string& job_id,
                                     const std::function<bool(const proto::JobStatus&)>& until) {
  grpc::ClientContext context;
  Authorize(&context, 300000);
  proto::WatchJobRequest request;
  request.set_job_id(job_id);
  auto reader = jobs_->WatchJob(&context, request);
  proto::JobStatus status, last;
  while (reader->Read(&status)) {
    last = status;
    if (until && until(status)) {
      context.TryCancel();
      break;
    }
  }
  reader->Finish();
  return last;
}

absl::StatusOr<proto::JobStatus> LocalCluster::Status(const std::string& job_id,
                                                      bool include_losses, bool include_history) {
  grpc::ClientContext context;
  Authorize(&context);
  proto::JobStatusRequest request;
  request.set_job_id(job_id);
  request.set_include_losses(include_losses);
  request.set_include_history(include_history);
  proto::JobStatusResponse response;
  HERALD_RETURN_IF_ERROR(rpc::FromGrpcStatus(jobs_->GetJobStatus(&context, request, &response)));
  if (response.jobs_size() != 1) return absl::InternalError("expected one job");
  return response.jobs(0);
}

absl::StatusOr<proto::ExportJobResponse> LocalCluster::Export(const std::string& job_id,
                                                              const std::string& out_dir,
                                                              const std::string& since) {
  grpc::ClientContext context;
  Authorize(&context, 120000);
  proto::ExportJobRequest request;
  request.set_job_id(job_id);
  request.set_out_dir(out_dir);
  request.set_since(since);
  proto::ExportJobResponse response;
  HERALD_RETURN_IF_ERROR(rpc::FromGrpcStatus(jobs_->ExportJob(&context, request, &response)));
  return response;
}

std::string LocalCluster::Logs() const {
  std::string out = "--- scheduler\n" + scheduler_->LogTail(4000);
  for (size_t s = 0; s < ps_.size(); ++s) {
    out += absl::StrCat("--- ps ", s, "\n", ps_[s]->LogTail(2000));
  }
  for (size_t w = 0; w < workers_.size(); ++w) {
    out += absl::StrCat("--- worker ", w, "\n", workers_[w]->LogTail(4000));
  }
  return out;
}

}  // namespace herald::testing
