#include "ps_server/service/ps_core.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checkpoint/manifest.h"
#include "common/logging.h"
#include "common/status.h"
#include "google/protobuf/util/message_differencer.h"
#include "ps_server/service/shard_adaptor.h"
#include "ps_server/shard/job_tables.h"
#include "ps_server/shard/restore.h"

namespace herald::ps {

PsCore::PsCore(PsCoreOptions options)
    : options_(std::move(options)), pool_(std::max<uint32_t>(options_.threads, 1), "ps-stripes") {}

absl::Time PsCore::Bound(absl::Time deadline) const {
  return deadline == absl::InfiniteFuture() ? absl::Now() + options_.default_wait : deadline;
}

absl::StatusOr<std::shared_ptr<JobShard>> PsCore::Shard(const std::string& job_id,
                                                        uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) {
    const uint64_t serving = it->second.start.run_id();
    if (run_id != 0 && serving != 0 && run_id != serving) {
      return absl::FailedPreconditionError(
          absl::StrCat("job '", job_id, "' on this shard is run ", serving, "; a request of run ",
                       run_id, " comes from a worker of an earlier run and is refused"));
    }
    return it->second.shard;
  }
  std::vector<std::string> names;
  for (const auto& [name, job] : jobs_) names.push_back(name);
  return absl::NotFoundError(absl::StrCat("job '", job_id, "' is not running on this shard",
                                          names.empty() ? " (no jobs)" : " (jobs: ",
                                          absl::StrJoin(names, ", "), names.empty() ? "" : ")"));
}

absl::Status PsCore::StartJob(const proto::PsStartJobRequest& request,
                              proto::PsStartJobResponse* response) {
  if (request.restore_manifest().empty()) return Install(request, nullptr, "", response);
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest,
                          checkpoint::ReadManifest(request.restore_manifest()));
  const std::string& expected =
      request.restore_job_id().empty() ? request.job_id() : request.restore_job_id();
  if (manifest.job_id() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("restore_manifest ", request.restore_manifest(),
                                                   " is a checkpoint of job ", manifest.job_id(),
                                                   ", not ", expected));
  }
  return Install(request, &manifest, checkpoint::ManifestDir(request.restore_manifest()), response);
}

absl::Status PsCore::RestoreAtStart(const std::string& manifest_path, uint32_t shard,
                                    uint32_t num_shards, proto::PsStartJobResponse* response) {
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest,
                          checkpoint::ReadManifest(manifest_path));
  proto::PsStartJobRequest request;
  request.set_job_id(manifest.job_id());
  *request.mutable_spec() = manifest.spec();
  request.set_shard(shard);
  request.set_num_shards(num_shards == 0 ? manifest.num_shards() : num_shards);
  request.set_num_workers(manifest.num_workers());
  request.set_restore_manifest(manifest_path);
  return Install(request, &manifest, checkpoint::ManifestDir(manifest_path), response);
}

absl::Status PsCore::Install(const proto::PsStartJobRequest& request,
                             const proto::CheckpointManifest* manifest,
                             const std::string& manifest_dir, proto::PsStartJobResponse* response) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(request.job_id());
    if (it != jobs_.end()) {
      const proto::PsStartJobRequest& had = it->second.start;
      if (had.shard() == request.shard() && had.num_shards() == request.num_shards() &&
          had.num_workers() == request.num_workers() &&
          had.restore_manifest() == request.restore_manifest() &&
          had.run_id() == request.run_id() &&
          google::protobuf::util::MessageDifferencer::Equals(had.spec(), request.spec())) {
        response->set_next_iteration(it->second.shard->next_iteration());
        return absl::OkStatus();
      }
      return absl::AlreadyExistsError(absl::StrCat(
          "job '", request.job_id(), "' is already running on this shard with another ",
          "configuration; end it first"));
    }
  }
  HERALD_ASSIGN_OR_RETURN(std::vector<TableOptions> tables,
                          TableOptionsFromSpec(request.spec(), request.num_shards()));
  JobShardOptions o;
  o.job_id = request.job_id();
  o.shard = request.shard();
  o.num_shards = request.num_shards();
  o.num_workers = request.num_workers();
  o.tables = std::move(tables);
  o.stripes_per_table = options_.stripes_per_table;
  o.first_iteration = manifest == nullptr ? 0 : manifest->iteration() + 1;
  const uint64_t budget = request.spec().ps().memory_budget_bytes() > 0
                              ? request.spec().ps().memory_budget_bytes()
                              : options_.memory_budget;
  if (budget > 0) {
    if (options_.data_dir.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("job '", request.job_id(), "' has a memory budget of ", budget,
                       " bytes per shard: herald_ps needs --data_dir for the rows beyond it"));
    }
    o.disk.memory_budget = budget;
    o.disk.path = absl::StrCat(options_.data_dir, "/", request.job_id(), "/shard-", o.shard, "-of-",
                               o.num_shards);
    o.disk.owner = {o.job_id, o.shard, o.num_shards};
  }
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<JobShard> shard, JobShard::Create(o, &pool_));
  uint64_t restored = 0;
  if (manifest != nullptr) {
    HERALD_ASSIGN_OR_RETURN(restored, RestoreShard(*manifest, manifest_dir, shard.get()));
  }
  absl::MutexLock lock(&mu_);
  if (jobs_.count(request.job_id())) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", request.job_id(), "' was started concurrently"));
  }
  response->set_next_iteration(o.first_iteration);
  response->set_rows_restored(restored);
  HLOG_INFO(
      "job {}: run {}, shard {}/{}, {} tables, {} workers, next iteration {}{}{}", o.job_id,
      request.run_id(), o.shard, o.num_shards, o.tables.size(), o.num_workers, o.first_iteration,
      manifest ? absl::StrCat(", ", restored, " rows restored") : std::string(),
      budget > 0
          ? absl::StrCat(", memory budget ", budget, " bytes, rows beyond it in ", o.disk.path)
          : std::string());
  jobs_[request.job_id()] = Job{request, std::move(shard)};
  return absl::OkStatus();
}

absl::Status PsCore::EndJob(const proto::PsEndJobRequest& request) {
  HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobShard> shard, Shard(request.job_id()));
  {
    absl::MutexLock lock(&mu_);
    jobs_.erase(request.job_id());
  }
  // Requests still holding the shard (a fetch waiting for a commit that will
  // never come) end now instead of at their deadline.
  shard->End("ended on this shard (EndJob)");
  HLOG_INFO("job {}: ended", request.job_id());
  return absl::OkStatus();
}

absl::Status PsCore::Fetch(const proto::FetchRequest& request, absl::Time deadline,
                           proto::FetchResponse* response) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id(), request.run_id()));
  return ServeFetch(*shard, request, Bound(deadline), response);
}

absl::Status PsCore::PushGradients(const proto::PushGradientsRequest& request) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id(), request.run_id()));
  return ServePush(*shard, request);
}

absl::Status PsCore::WriteBack(const proto::WriteBackRequest& request) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id(), request.run_id()));
  return ServeWriteBack(*shard, request);
}

absl::Status PsCore::IterationDone(const proto::IterationDoneRequest& request,
                                   proto::IterationDoneResponse* response) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id(), request.run_id()));
  return ServeIterationDone(*shard, request, response);
}

absl::Status PsCore::Checkpoint(const proto::CheckpointRequest& request, absl::Time deadline,
                                proto::CheckpointResponse* response) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id()));
  const absl::Time start = absl::Now();
  absl::Time logged = start;
  auto progress = [&](uint64_t written, uint64_t total) {
    if (options_.checkpoint_progress) options_.checkpoint_progress(written, total);
    const absl::Time now = absl::Now();
    if (now - logged < options_.checkpoint_log_every) return;
    logged = now;
    HLOG_INFO("job {}: checkpoint of iteration {}: {} of {} rows written ({:.0f}%) in {:.0f} s",
              request.job_id(), request.iteration(), written, total,
              total == 0 ? 100.0 : 100.0 * written / total, absl::ToDoubleSeconds(now - start));
  };
  return ServeCheckpoint(*shard, request, Bound(deadline), response, progress);
}

absl::Status PsCore::LookAhead(const proto::LookAheadRequest& request) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id(), request.run_id()));
  std::vector<LookAheadKeys> keys;
  for (int i = 0; i < request.keys_size(); ++i) {
    const std::string& bytes = request.keys(i).keys();
    if (bytes.size() % sizeof(Key) != 0) {
      return shard->Reject(absl::InvalidArgumentError(absl::StrCat(
          "look-ahead: keys[", i, "] is ", bytes.size(), " bytes, not a whole number of keys")));
    }
    LookAheadKeys& k = keys.emplace_back();
    k.table = request.keys(i).table_id();
    k.keys.resize(bytes.size() / sizeof(Key));
    std::memcpy(k.keys.data(), bytes.data(), bytes.size());
  }
  return shard->LookAhead(Iteration(request.iteration()), keys);
}

absl::Status PsCore::Stats(const proto::PsStatsRequest& request, proto::PsStatsResponse* response) {
  HERALD_ASSIGN_OR_RETURN(auto shard, Shard(request.job_id()));
  shard->Stats(response);
  return absl::OkStatus();
}

}  // namespace herald::ps
