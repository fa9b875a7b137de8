#include "cli/job_commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/status.h"
#include "common/text_proto.h"
#include "common/tunables.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "proto/scheduler.grpc.pb.h"
#include "scheduler/data/schema_file.h"

namespace herald::cli {
namespace {

int Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "heraldctl: %s: %s\n", what.c_str(), s.ToString().c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

struct Client {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<proto::JobService::Stub> stub;
  std::string token;
};

absl::Status Connect(const SchedulerConnection& c, Client* out) {
  if (c.address.empty()) return absl::InvalidArgumentError("--scheduler: required (host:port)");
  if (!c.token_file.empty()) {
    absl::StatusOr<std::string> token = rpc::ReadTokenFile(c.token_file);
    if (!token.ok()) return token.status();
    out->token = *token;
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = rpc::MakeChannel(c.address, c.channel);
  if (!channel.ok()) return channel.status();
  out->channel = *channel;
  out->stub = proto::JobService::NewStub(*channel);
  return absl::OkStatus();
}

// A call that failed because nothing listened at the address: it never
// reached a scheduler, so making it again cannot do anything twice.
bool Refused(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable &&
         absl::StrContains(s.message(), "Connection refused");
}

// Whether the scheduler accepted the connection within kCliConnectWaitMs
// (a scheduler still starting gets that long to listen).
bool AwaitScheduler(const Client& client) {
  return client.channel->WaitForConnected(std::chrono::system_clock::now() +
                                          std::chrono::milliseconds(tunables::kCliConnectWaitMs));
}

void Prepare(const Client& client, grpc::ClientContext* context, int64_t timeout_ms) {
  if (timeout_ms > 0) rpc::SetDeadline(context, timeout_ms);
  rpc::AttachToken(context, client.token);
}

// One unary JobService call: connects, attaches the token and the deadline,
// calls `method`.
template <typename Request, typename Response>
absl::Status Call(const SchedulerConnection& c, int64_t timeout_ms,
                  grpc::Status (proto::JobService::Stub::*method)(grpc::ClientContext*,
                                                                  const Request&, Response*),
                  const Request& request, Response* response) {
  Client client;
  if (absl::Status s = Connect(c, &client); !s.ok()) return s;
  auto call = [&] {
    grpc::ClientContext context;
    Prepare(client, &context, timeout_ms);
    return rpc::FromGrpcStatus((client.stub.get()->*method)(&context, request, response));
  };
  absl::Status s = call();
  if (!Refused(s)) return s;  // answered, or failed in a way waiting would not mend
  // Nothing listens yet (a scheduler starting, restarting): wait for it.
  std::fprintf(stderr, "heraldctl: no scheduler listens at %s yet; waiting up to %.0f s\n",
               c.address.c_str(), tunables::kCliConnectWaitMs / 1000.0);
  if (AwaitScheduler(client)) return call();
  return Annotate(s, absl::StrCat("no scheduler accepted a connection at ", c.address, " within ",
                                  tunables::kCliConnectWaitMs / 1000.0, " s"));
}

std::string Json(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, options);
  return out;
}

std::string Line(const proto::JobStatus& s) {
  const proto::JobProgress& p = s.progress();
  std::string total = p.total_iterations() > 0 ? absl::StrCat("/", p.total_iterations()) : "";
  std::string line = absl::StrFormat(
      "%s %-10s %-14s iter %d%s  %.0f samples/s  loss %.5f  hit %.1f%%  rows moved %d "
      "(vanilla est. %d)",
      s.job_id(), s.name(), proto::JobState_Name(s.state()), p.iteration(), total,
      p.samples_per_second(), p.loss(), 100 * p.cache_hit_rate(), p.rows_moved(),
      p.rows_moved_vanilla());
  if (p.evals_done() > 0 && p.eval_labels_size() == 0) {  // a scheduler before eval_labels
    absl::StrAppendFormat(&line, "  eval@%d AUC %.4f logloss %.4f", p.eval_iteration(),
                          p.eval_auc(), p.eval_logloss());
  }
  for (int i = 0; p.evals_done() > 0 && i < p.eval_labels_size(); ++i) {
    const proto::LabelMetrics& m = p.eval_labels(i);
    const std::string of = p.eval_labels_size() > 1 ? absl::StrCat(" ", m.label()) : "";
    if (m.regression()) {
      absl::StrAppendFormat(&line, "  eval@%d%s RMSE %.4f", p.eval_iteration(), of, m.rmse());
    } else {
      absl::StrAppendFormat(&line, "  eval@%d%s AUC %.4f logloss %.4f", p.eval_iteration(), of,
                            m.auc(), m.logloss());
    }
  }
  if (p.files_scored() > 0) {
    absl::StrAppendFormat(&line, "  files scored %d (newest %s)", p.files_scored(),
                          absl::StrJoin(p.eval_files(), ", "));
  }
  if (p.checkpoint_failures() > 0) {
    absl::StrAppendFormat(&line, "  checkpoints refused %d (%s)", p.checkpoint_failures(),
                          p.checkpoint_error());
  }
  if (!s.model_consistency().empty() && s.model_consistency() != "synchronous SGD") {
    absl::StrAppend(&line, "  model: ", s.model_consistency());
  }
  if (s.recoveries() > 0) {
    absl::StrAppendFormat(&line, "  recovered %dx (%d iterations trained again)", s.recoveries(),
                          s.iterations_retrained());
  }
  if (p.eta_seconds() > 0 && s.state() == proto::JOB_RUNNING) {
    absl::StrAppendFormat(&line, "  ETA %.0fs", p.eta_seconds());
  }
  if (!s.reason().empty()) absl::StrAppend(&line, "  (", s.reason(), ")");
  return line;
}

}  // namespace

absl::Status ReadJobSpecFile(const std::string& path, std::string* text, bool* json) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::stringstream content;
  content << in.rdbuf();
  *text = content.str();
  const size_t first = text->find_first_not_of(" \t\r\n");
  *json = first != std::string::npos && (*text)[first] == '{';
  return absl::OkStatus();
}

absl::Status LoadJobSpecFile(const std::string& path, proto::JobSpec* spec) {
  std::string text;
  bool json = false;
  HERALD_RETURN_IF_ERROR(ReadJobSpecFile(path, &text, &json));
  if (json) {
    auto s = google::protobuf::util::JsonStringToMessage(text, spec);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a JobSpec in JSON: ", std::string(s.message())));
    }
  } else if (absl::Status s = ParseTextProto(text, spec); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", s.message()));
  }
  // A schema in its own file goes inline, read from beside the spec.
  return scheduler::InlineSchemaFile(spec, std::filesystem::path(path).parent_path().string());
}

int RunSubmit(const SchedulerConnection& c, const std::string& spec_path, const std::string& resume,
              const std::string& checkpoint_dir) {
  proto::SubmitJobRequest request;
  if (absl::Status s = LoadJobSpecFile(spec_path, request.mutable_spec()); !s.ok()) {
    return Fail("submit", s);
  }
  // The scheduler reads both: absolute paths.
  if (!checkpoint_dir.empty()) {
    request.mutable_spec()->mutable_checkpoint()->set_dir(
        std::filesystem::absolute(checkpoint_dir).lexically_normal().string());
  }
  if (!resume.empty()) {
    request.mutable_spec()->mutable_checkpoint()->set_resume_from(
        std::filesystem::absolute(resume).lexically_normal().string());
  }
  proto::SubmitJobResponse response;
  absl::Status s = Call(c, tunables::kCliCallDeadlineMs, &proto::JobService::Stub::SubmitJob,
                        request, &response);
  if (!s.ok()) return Fail("submit", s);
  std::printf("%s\n", response.job_id().c_str());
  return 0;
}

// The evaluation columns past eval_auc and eval_logloss (which hold the
// first binary label's): each regression label's RMSE, each other binary
// label's AUC and log loss, in the order the history names them.
std::vector<const proto::LabelMetrics*> OtherLabels(const proto::HistoryPoint& p) {
  std::vector<const proto::LabelMetrics*> other;
  bool first_binary = true;
  for (const proto::LabelMetrics& m : p.eval_labels()) {
    if (!m.regression() && first_binary) {
      first_binary = false;
      continue;
    }
    other.push_back(&m);
  }
  return other;
}

struct LabelColumn {
  std::string label;
  std::string metric;  // "auc", "logloss" or "rmse"
  // The point's value, or nullopt where it has none.
  std::optional<double> Of(const proto::HistoryPoint& p) const {
    for (const proto::LabelMetrics* m : OtherLabels(p)) {
      if (m->label() != label) continue;
      return metric == "rmse" ? m->rmse() : metric == "auc" ? m->auc() : m->logloss();
    }
    return std::nullopt;
  }
};

std::vector<LabelColumn> LabelColumns(const proto::JobStatus& job) {
  std::vector<LabelColumn> columns;
  std::set<std::string> seen;
  for (const proto::HistoryPoint& p : job.history()) {
    for (const proto::LabelMetrics* m : OtherLabels(p)) {
      if (!seen.insert(m->label()).second) continue;
      if (m->regression()) {
        columns.push_back({m->label(), "rmse"});
      } else {
        columns.push_back({m->label(), "auc"});
        columns.push_back({m->label(), "logloss"});
      }
    }
  }
  return columns;
}

// A job's history: one row per point, the evaluation's AUC and log loss
// after the training values (empty / "-" where none ran), then the other
// labels' metrics (eval_<metric>[<label>]), each worker's phase times last.
// A point of an evaluation alone has only the evaluation's.
void PrintHistory(const proto::JobStatus& job, bool csv) {
  size_t workers = 0;
  for (const proto::HistoryPoint& p : job.history()) {
    workers = std::max<size_t>(workers, p.workers_size());
  }
  const std::vector<LabelColumn> label_columns = LabelColumns(job);
  std::string header =
      csv ? "iteration,unix_ms,loss,samples_per_second,rows_fetched,rows_pushed,"
            "rows_written_back,rows_transferred,rows_vanilla,cache_hit_rate,eval_auc,eval_logloss,"
            "ps_disk_rows_critical,ps_disk_rows_ahead"
          : absl::StrFormat("%9s %10s %12s %9s %9s %9s %9s %9s %6s %8s %8s %9s %9s", "iteration",
                            "loss", "samples/s", "fetched", "pushed", "written", "transfer",
                            "vanilla", "hit%", "eval_auc", "eval_ll", "disk_crit", "disk_ahd");
  for (const LabelColumn& c : label_columns) {
    absl::StrAppend(&header, csv ? "," : " ", "eval_", c.metric, "[", c.label, "]");
  }
  // eval.each_file: the files each evaluation scored (';' between them).
  const bool files = std::any_of(job.history().begin(), job.history().end(),
                                 [](const proto::HistoryPoint& p) { return p.eval_files_size(); });
  if (files) absl::StrAppend(&header, csv ? "," : " ", "eval_files");
  for (size_t w = 0; w < workers; ++w) {
    for (const char* phase : {"fetch", "compute", "allreduce", "push", "writeback", "step_wait",
                              "device", "decode", "stage", "commit", "report"}) {
      absl::StrAppend(&header, csv ? absl::StrFormat(",w%d_%s_ms", w, phase)
                                   : absl::StrFormat(" w%d_%s", w, phase));
    }
  }
  std::printf("%s\n", header.c_str());
  for (const proto::HistoryPoint& p : job.history()) {
    const bool trained = p.workers_size() > 0;  // not an evaluation's point alone
    std::string line;
    if (csv) {
      line = trained ? absl::StrFormat("%d,%d,%.9g,%.6g,%d,%d,%d,%d,%d,%.6g", p.iteration(),
                                       p.unix_ms(), p.loss(), p.samples_per_second(),
                                       p.rows_fetched(), p.rows_pushed(), p.rows_written_back(),
                                       p.rows_transferred(), p.rows_vanilla(), p.cache_hit_rate())
                     : absl::StrFormat("%d,%d,,,,,,,,", p.iteration(), p.unix_ms());
      absl::StrAppend(&line, p.has_eval_auc()
                                 ? absl::StrFormat(",%.9g,%.9g", p.eval_auc(), p.eval_logloss())
                                 : ",,");
      absl::StrAppend(&line, trained ? absl::StrFormat(",%d,%d", p.ps_disk_rows_critical(),
                                                       p.ps_disk_rows_ahead())
                                     : ",,");
    } else {
      line = trained ? absl::StrFormat("%9d %10.5f %12.1f %9d %9d %9d %9d %9d %6.1f", p.iteration(),
                                       p.loss(), p.samples_per_second(), p.rows_fetched(),
                                       p.rows_pushed(), p.rows_written_back(), p.rows_transferred(),
                                       p.rows_vanilla(), 100 * p.cache_hit_rate())
                     : absl::StrFormat("%9d %10s %12s %9s %9s %9s %9s %9s %6s", p.iteration(), "-",
                                       "-", "-", "-", "-", "-", "-", "-");
      absl::StrAppend(&line, p.has_eval_auc()
                                 ? absl::StrFormat(" %8.4f %8.4f", p.eval_auc(), p.eval_logloss())
                                 : absl::StrFormat(" %8s %8s", "-", "-"));
      absl::StrAppend(&line, trained ? absl::StrFormat(" %9d %9d", p.ps_disk_rows_critical(),
                                                       p.ps_disk_rows_ahead())
                                     : absl::StrFormat(" %9s %9s", "-", "-"));
    }
    for (const LabelColumn& c : label_columns) {
      const std::optional<double> value = c.Of(p);
      absl::StrAppend(&line, csv ? "," : " ",
                      !value ? std::string(csv ? "" : "-")
                      : csv  ? absl::StrFormat("%.9g", *value)
                             : absl::StrFormat("%.4f", *value));
    }
    if (files) {
      const std::string named = absl::StrJoin(p.eval_files(), ";");
      absl::StrAppend(&line, csv ? "," : " ", named.empty() && !csv ? "-" : named);
    }
    for (const proto::WorkerPhases& w : p.workers()) {
      for (double ms : {w.fetch_ms(), w.compute_ms(), w.allreduce_ms(), w.push_ms(),
                        w.writeback_ms(), w.step_wait_ms(), w.device_ms(), w.decode_ms(),
                        w.stage_ms(), w.commit_ms(), w.report_ms()}) {
        absl::StrAppend(&line, csv ? absl::StrFormat(",%.3f", ms) : absl::StrFormat(" %.1f", ms));
      }
    }
    std::printf("%s\n", line.c_str());
  }
}

int RunStatus(const SchedulerConnection& c, const std::string& job_id, StatusFormat format,
              bool history) {
  if (history && job_id.empty()) {
    return Fail("status", absl::InvalidArgumentError("--history: name the job (status JOB)"));
  }
  if (format == StatusFormat::kCsv && !history) {
    return Fail("status", absl::InvalidArgumentError("--csv: only with --history"));
  }
  proto::JobStatusRequest request;
  request.set_job_id(job_id);
  request.set_include_history(history);
  proto::JobStatusResponse response;
  absl::Status s = Call(c, tunables::kCliCallDeadlineMs, &proto::JobService::Stub::GetJobStatus,
                        request, &response);
  if (!s.ok()) return Fail("status", s);
  if (format == StatusFormat::kJson) {
    std::printf("%s\n", Json(response).c_str());
  } else if (history) {
    for (const auto& j : response.jobs()) PrintHistory(j, format == StatusFormat::kCsv);
  } else {
    for (const auto& j : response.jobs()) std::printf("%s\n", Line(j).c_str());
  }
  return 0;
}

int RunWatch(const SchedulerConnection& c, const std::string& job_id, bool json) {
  Client client;
  if (absl::Status s = Connect(c, &client); !s.ok()) return Fail("watch", s);
  proto::JobStatus last;
  // The job runs on whether or not anyone watches it: a scheduler out of
  // reach for a while (a connection that failed, a restart) is watched
  // again, with backoff, until kCliWatchReconnectMs have passed since it
  // last answered.
  absl::Time answered = absl::Now();
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    grpc::ClientContext context;
    Prepare(client, &context, 0);  // as long as the job runs
    proto::WatchJobRequest request;
    request.set_job_id(job_id);
    auto reader = client.stub->WatchJob(&context, request);
    proto::JobStatus status;
    while (reader->Read(&status)) {
      std::printf("%s\n", json ? Json(status).c_str() : Line(status).c_str());
      std::fflush(stdout);
      last = status;
      answered = absl::Now();
      backoff = absl::Milliseconds(100);
    }
    absl::Status s = rpc::FromGrpcStatus(reader->Finish());
    if (s.ok()) break;
    if (s.code() != absl::StatusCode::kUnavailable ||
        absl::Now() - answered > absl::Milliseconds(tunables::kCliWatchReconnectMs)) {
      return Fail("watch", s);
    }
    std::fprintf(stderr, "heraldctl: watch: %s; watching again\n",
                 std::string(s.message()).c_str());
    absl::SleepFor(backoff);
    backoff = std::min(2 * backoff, absl::Seconds(2));
  }
  return last.state() == proto::JOB_SUCCEEDED ? 0 : 1;
}

int RunCancel(const SchedulerConnection& c, const std::string& job_id) {
  proto::CancelJobRequest request;
  request.set_job_id(job_id);
  proto::CancelJobResponse response;
  absl::Status s = Call(c, tunables::kCliCallDeadlineMs, &proto::JobService::Stub::CancelJob,
                        request, &response);
  return s.ok() ? 0 : Fail("cancel", s);
}

namespace {

// Writes the export's files the scheduler streams into `local_dir` (each
// as FILE.part, renamed when whole; MODEL comes last). Returns the
// scheduler's directory.
absl::StatusOr<std::string> Download(const SchedulerConnection& c, const std::string& job_id,
                                     const std::string& remote_dir, const std::string& local_dir) {
  if (std::filesystem::exists(local_dir + "/MODEL")) {
    return absl::AlreadyExistsError(absl::StrCat(local_dir, " already holds an export"));
  }
  Client client;
  HERALD_RETURN_IF_ERROR(Connect(c, &client));
  grpc::ClientContext context;
  Prepare(client, &context, tunables::kCliExportDeadlineMs);
  proto::DownloadExportRequest request;
  request.set_job_id(job_id);
  request.set_dir(remote_dir);
  auto reader = client.stub->DownloadExport(&context, request);
  proto::ExportChunk chunk;
  std::string remote = remote_dir, path;
  std::ofstream out;
  uint64_t written = 0;
  while (reader->Read(&chunk)) {
    if (!chunk.dir().empty()) remote = chunk.dir();
    const std::filesystem::path target =
        (std::filesystem::path(local_dir) / chunk.file()).lexically_normal();
    if (chunk.file().empty() || chunk.file()[0] == '/' || absl::StrContains(chunk.file(), "..")) {
      context.TryCancel();
      return absl::DataLossError(
          absl::StrCat("the scheduler sent a file outside the export: ", chunk.file()));
    }
    if (!out.is_open()) {
      path = target.string();
      std::filesystem::create_directories(target.parent_path());
      out.open(path + ".part", std::ios::binary | std::ios::trunc);
      written = 0;
      if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path, ".part"));
    }
    if (target.string() != path || chunk.offset() != written) {
      context.TryCancel();
      return absl::DataLossError(
          absl::StrCat(chunk.file(), ": a chunk at ", chunk.offset(), " out of order"));
    }
    out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    written += chunk.data().size();
    if (written == chunk.file_bytes()) {
      out.close();
      if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path, ".part"));
      std::filesystem::rename(path + ".part", path);
    }
  }
  HERALD_RETURN_IF_ERROR(rpc::FromGrpcStatus(reader->Finish()));
  if (!std::filesystem::exists(local_dir + "/MODEL")) {
    return absl::DataLossError(absl::StrCat("the download of ", remote, " ended before MODEL"));
  }
  return remote;
}

}  // namespace

int RunExport(const SchedulerConnection& c, const std::string& job_id, const std::string& out_dir,
              const std::string& since, bool json, const std::string& download) {
  if (out_dir.empty() && download.empty()) {
    return Fail("export", absl::InvalidArgumentError("--out or --download: required"));
  }
  if (out_dir.empty()) {  // the newest export this scheduler wrote
    absl::StatusOr<std::string> remote = Download(c, job_id, "", download);
    if (!remote.ok()) return Fail("export --download", remote.status());
    std::printf("downloaded %s's export %s -> %s\n", job_id.c_str(), remote->c_str(),
                download.c_str());
    return 0;
  }
  proto::ExportJobRequest request;
  request.set_job_id(job_id);
  // The scheduler and the PS shards write it: they need an absolute path.
  request.set_out_dir(std::filesystem::absolute(out_dir).lexically_normal().string());
  if (!since.empty()) {
    request.set_since(std::filesystem::absolute(since).lexically_normal().string());
  }
  proto::ExportJobResponse response;
  absl::Status s = Call(c, tunables::kCliExportDeadlineMs, &proto::JobService::Stub::ExportJob,
                        request, &response);
  if (!s.ok()) return Fail("export", s);
  if (json) {
    std::printf("%s\n", Json(response).c_str());
  } else {
    std::printf("exported %s: %llu embedding rows, %llu dense parameters -> %s\n", job_id.c_str(),
                static_cast<unsigned long long>(response.rows()),
                static_cast<unsigned long long>(response.dense_floats()),
                response.manifest_path().c_str());
    if (!since.empty()) {
      std::printf("increment since %s: %llu of the model's %llu rows, %llu bytes (whole: %llu)\n",
                  request.since().c_str(), static_cast<unsigned long long>(response.rows()),
                  static_cast<unsigned long long>(response.full_rows()),
                  static_cast<unsigned long long>(response.bytes()),
                  static_cast<unsigned long long>(response.full_bytes()));
    }
  }
  if (!download.empty()) {
    const std::string remote = std::filesystem::absolute(out_dir).lexically_normal().string();
    absl::StatusOr<std::string> got = Download(c, job_id, remote, download);
    if (!got.ok()) return Fail("export --download", got.status());
    if (!json) std::printf("downloaded %s -> %s\n", got->c_str(), download.c_str());
  }
  return 0;
}

int RunNodes(const SchedulerConnection& c, bool json) {
  proto::ListNodesResponse response;
  absl::Status s = Call(c, tunables::kCliCallDeadlineMs, &proto::JobService::Stub::ListNodes,
                        proto::ListNodesRequest(), &response);
  if (!s.ok()) return Fail("nodes", s);
  if (json) {
    std::printf("%s\n", Json(response).c_str());
    return 0;
  }
  for (const auto& n : response.nodes()) {
    std::printf("%-14s %-6s rank %-3u %-22s %s\n", n.node_id().c_str(),
                n.role() == proto::NODE_ROLE_PS ? "ps" : "worker", n.rank(), n.address().c_str(),
                n.alive() ? "alive" : "DEAD");
  }
  return 0;
}

}  // namespace herald::cli
