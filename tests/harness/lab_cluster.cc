#include "tests/harness/lab_cluster.h"

#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "proto/scheduler.pb.h"

namespace herald::testing {
namespace {

constexpr char kToken[] = "lab-cluster-secret";
constexpr int64_t kStartMs = 20000;

// Runs `argv` to completion (bounded); its exit code and output.
CommandResult Run(const std::string& dir, const std::string& what,
                  const std::vector<std::string>& argv) {
  static int n = 0;
  const std::string log = absl::StrCat(dir, "/", what, "_", n++, ".log");
  auto child = ChildProcess::Start(argv[0], {argv.begin() + 1, argv.end()}, log);
  if (!child.ok()) return {-1, std::string(child.status().message())};
  auto code = (*child)->WaitForExit(60000);
  return {code.ok() ? *code : -1, (*child)->LogTail(100000)};
}

}  // namespace

std::string LabCluster::UnavailableReason() {
  CommandResult r =
      Run(MakeTestDir("lab_check"), "check", {RunfilePath("deploy/lab/lab.sh"), "check"});
  if (r.code == 0) return "";
  return r.output.empty() ? "lab.sh check failed"
                          : std::string(absl::StripTrailingAsciiWhitespace(r.output));
}

LabCluster::~LabCluster() {
  processes_.clear();  // SIGKILL and reap whatever still runs
  if (!name_.empty()) RunLab({"down"}).IgnoreError();
}

std::string LabCluster::HostAddress(int host) const { return absl::StrCat("198.18.0.", host); }

absl::Status LabCluster::RunLab(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {lab_script_, args[0], "--name", name_};
  argv.insert(argv.end(), args.begin() + 1, args.end());
  CommandResult r = Run(dir_, "lab", argv);
  if (r.code != 0) {
    return absl::InternalError(
        absl::StrCat("lab.sh ", args[0], " failed (exit ", r.code, "): ", r.output));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ChildProcess>> LabCluster::StartOn(int host,
                                                                  const std::string& binary,
                                                                  const std::string& name,
                                                                  std::vector<std::string> args) {
  std::vector<std::string> argv = {"exec", "--name", name_, std::to_string(host),
                                   RunfilePath(binary)};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--port_file=" + dir_ + "/" + name + ".port");
  argv.push_back("--token_file=" + token_file_);
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> p,
                          ChildProcess::Start(lab_script_, argv, dir_ + "/" + name + ".log"));
  HERALD_RETURN_IF_ERROR(p->WaitForPortFile(dir_ + "/" + name + ".port", kStartMs).status());
  return p;
}

absl::StatusOr<std::unique_ptr<LabCluster>> LabCluster::Start(const std::string& name,
                                                              const LabLayout& layout) {
  std::unique_ptr<LabCluster> c(new LabCluster());
  c->lab_script_ = RunfilePath("deploy/lab/lab.sh");
  c->dir_ = MakeTestDir(name);
  // The namespaces carry this process's id, so two runs at once (a test
  // run twice in parallel) make labs of their own.
  c->name_ = absl::StrCat(name, "-", ::getpid());
  c->token_file_ = c->dir_ + "/token";
  std::ofstream(c->token_file_) << kToken << "\n";
  const int hosts = layout.workers + 2;
  HERALD_RETURN_IF_ERROR(c->RunLab({"up", "--hosts", std::to_string(hosts), "--link-gbps",
                                    absl::StrCat(layout.link_gbps), "--no-probe"}));
  HERALD_ASSIGN_OR_RETURN(
      std::unique_ptr<ChildProcess> scheduler,
      c->StartOn(1, "scheduler/herald_scheduler", "scheduler",
                 {"--listen=" + c->HostAddress(1) + ":0", "--heartbeat_ms=200",
                  absl::StrCat("--liveness_timeout_ms=", layout.liveness_timeout_ms)}));
  c->processes_.push_back(std::move(scheduler));
  std::ifstream port_file(c->dir_ + "/scheduler.port");
  int port = 0;
  port_file >> port;
  c->scheduler_ = absl::StrCat(c->HostAddress(1), ":", port);
  const std::vector<std::vector<std::string>> ps_listen = {
      {"--listen=" + c->HostAddress(1) + ":0"},
      {"--listen=0.0.0.0:0", "--advertise=" + c->HostAddress(hosts)}};
  const int ps_hosts[] = {1, hosts};
  for (int s = 0; s < 2; ++s) {
    std::vector<std::string> args = ps_listen[s];
    args.insert(args.end(),
                {"--scheduler=" + c->scheduler_, absl::StrCat("--shard=", s), "--threads=1"});
    HERALD_ASSIGN_OR_RETURN(
        std::unique_ptr<ChildProcess> p,
        c->StartOn(ps_hosts[s], "ps_server/herald_ps", absl::StrCat("ps", s), std::move(args)));
    c->processes_.push_back(std::move(p));
  }
  for (int w = 0; w < layout.workers; ++w) {
    const int host = 2 + w;
    HERALD_ASSIGN_OR_RETURN(
        std::unique_ptr<ChildProcess> p,
        c->StartOn(host, "worker/herald_worker", absl::StrCat("worker", w),
                   {"--listen=" + c->HostAddress(host) + ":0", "--scheduler=" + c->scheduler_}));
    c->processes_.push_back(std::move(p));
  }
  if (!c->WaitForNodes(2 + layout.workers)) {
    return absl::DeadlineExceededError(
        absl::StrCat("the lab cluster never had ", 2 + layout.workers, " live nodes\n", c->Logs()));
  }
  return c;
}

CommandResult LabCluster::Ctl(std::vector<std::string> args) {
  args.insert(args.end(), {"--scheduler=" + scheduler_, "--token-file=" + token_file_});
  return RunHeraldctl(dir_, args, {lab_script_, "exec", "--name", name_, "1"});
}

bool LabCluster::WaitForNodes(int count) {
  const absl::Time deadline = absl::Now() + absl::Milliseconds(kStartMs);
  while (absl::Now() < deadline) {
    CommandResult r = Ctl({"nodes"});
    int alive = 0;
    for (size_t at = r.output.find(" alive"); at != std::string::npos;
         at = r.output.find(" alive", at + 1)) {
      ++alive;
    }
    if (r.code == 0 && alive >= count) return true;
    absl::SleepFor(absl::Milliseconds(100));  // poll interval of a bounded wait
  }
  return false;
}

absl::StatusOr<std::string> LabCluster::Submit(const proto::JobSpec& spec) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(spec, &text);
  static int n = 0;
  const std::string path = absl::StrCat(dir_, "/job_", n++, ".txt");
  std::ofstream(path) << text;
  CommandResult r = Ctl({"submit", path});
  if (r.code != 0) return absl::InternalError("heraldctl submit: " + r.output);
  return std::string(absl::StripAsciiWhitespace(r.output));
}

absl::StatusOr<proto::JobStatus> LabCluster::Status(const std::string& job_id) {
  CommandResult r = Ctl({"status", job_id, "--json"});
  if (r.code != 0) return absl::InternalError("heraldctl status: " + r.output);
  proto::JobStatusResponse response;
  auto parsed = google::protobuf::util::JsonStringToMessage(r.output, &response);
  if (!parsed.ok() || response.jobs_size() != 1) {
    return absl::InternalError("heraldctl status --json: unexpected output: " + r.output);
  }
  return response.jobs(0);
}

absl::Status LabCluster::LinkDown(int host) {
  return RunLab({"link", std::to_string(host), "down"});
}

absl::Status LabCluster::StopProcesses() { return RunLab({"stop"}); }

std::string LabCluster::Logs() const {
  std::string out;
  for (const auto& p : processes_) {
    absl::StrAppend(&out, "---- ", p->log_path(), "\n", p->LogTail(1500), "\n");
  }
  return out;
}

}  // namespace herald::testing
