#pragma once
// heraldctl commands that talk to herald_scheduler's JobService: submit,
// status, watch, cancel, export, nodes. Exit codes: 0 success (watch: the job
// succeeded), 1 the call or the job failed, 2 usage / invalid spec.

#include <string>

#include "absl/status/status.h"
#include "common/rpc/channel.h"
#include "proto/job.pb.h"

namespace herald::cli {

struct SchedulerConnection {
  std::string address;          // host:port
  std::string token_file;       // cluster token (empty: none)
  rpc::ChannelOptions channel;  // TLS settings (--tls_ca, --tls_server_name)
};

// Reads a job spec in text-format protobuf (.txt/.pbtxt) or JSON (.json, or
// any file starting with '{'). Errors: InvalidArgument naming file and
// position.
absl::Status ReadJobSpecFile(const std::string& path, std::string* text_or_json, bool* json);
// ReadJobSpecFile, parsed, with a data.schema_file read inline (a relative
// path from the spec's directory), as submit sends it. Errors:
// InvalidArgument naming file and position, the schema file's.
absl::Status LoadJobSpecFile(const std::string& path, proto::JobSpec* spec);

// Each prints its result (JSON with `json`) and returns the exit code.
// `resume` (may be empty): continue from that checkpoint (a MANIFEST or a
// job's checkpoint directory), as checkpoint.resume_from; `checkpoint_dir`
// (may be empty): replaces checkpoint.dir.
int RunSubmit(const SchedulerConnection& c, const std::string& spec_path,
              const std::string& resume = "", const std::string& checkpoint_dir = "");
// How `status` prints: a line per job, or JSON; with `history`, the job's
// history (one row per point) as a table, JSON or CSV.
enum class StatusFormat { kText, kJson, kCsv };
int RunStatus(const SchedulerConnection& c, const std::string& job_id, StatusFormat format,
              bool history);
int RunWatch(const SchedulerConnection& c, const std::string& job_id, bool json);
int RunCancel(const SchedulerConnection& c, const std::string& job_id);
int RunNodes(const SchedulerConnection& c, bool json);
// Exports a succeeded job's model to `out_dir` (made absolute; written by
// the scheduler and the PS shards, see docs/export.md); with `since` (an
// earlier export, made absolute), only the rows changed since it. With
// `download` (a local directory), the export's files are then copied from
// the scheduler's host into it (JobService DownloadExport); without
// `out_dir`, the newest export this scheduler process wrote of the job is.
int RunExport(const SchedulerConnection& c, const std::string& job_id, const std::string& out_dir,
              const std::string& since, bool json, const std::string& download = "");

}  // namespace herald::cli
