#include "scheduler/jobs/job_run.h"

#include <algorithm>
#include <functional>
#include <thread>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/crc32.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/tunables.h"
#include "ps_server/client/sharded_ps_client.h"
#include "scheduler/data/batch_stream.h"
#include "scheduler/data/read_ahead.h"
#include "scheduler/jobs/dense_collective.h"
#include "scheduler/jobs/job_resume.h"
#include "scheduler/jobs/model_export.h"
#include "scheduler/planner/cache_refill.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/scheduling_spec.h"
#include "scheduler/planner/step_builder.h"

namespace herald::scheduler {
namespace {

// Nonzero (0 means "unchecked" to the PS) and unlike any earlier run's.
uint64_t NewRunId() {
  absl::BitGen gen;
  uint64_t id = 0;
  while (id == 0) id = absl::Uniform<uint64_t>(gen);
  return id;
}

}  // namespace

JobRun::JobRun(std::string job_id, proto::JobSpec spec, std::vector<NodeInfo> ps,
               std::vector<NodeInfo> workers, const NodeRegistry* registry, JobRunOptions options)
    : job_id_(std::move(job_id)),
      run_id_(NewRunId()),
      spec_(std::move(spec)),
      ps_nodes_(std::move(ps)),
      workers_(std::move(workers)),
      registry_(registry),
      options_(std::move(options)),
      eval_settings_(EvalSettingsFromSpec(spec_)),
      eval_(job_id_, static_cast<uint32_t>(workers_.size())),
      tracker_(static_cast<uint32_t>(workers_.size()), spec_.global_batch_size(),
               spec_.iterations(), options_.history_points, options_.history, absl::Now()) {
  for (size_t w = 0; w < workers_.size(); ++w) {
    queues_.push_back(std::make_unique<StepQueue>(options_.step_queue_capacity));
  }
  joined_.assign(workers_.size(), false);
  if (!spec_.checkpoint().dir().empty()) {
    checkpointer_ =
        std::make_unique<JobCheckpointer>(job_id_, spec_, static_cast<uint32_t>(workers_.size()));
  }
}

std::vector<std::string> JobRun::ps_node_ids() const {
  std::vector<std::string> ids;
  for (const NodeInfo& n : ps_nodes_) ids.push_back(n.node_id);
  return ids;
}

std::vector<std::string> JobRun::worker_node_ids() const {
  std::vector<std::string> ids;
  for (const NodeInfo& n : workers_) ids.push_back(n.node_id);
  return ids;
}

std::vector<std::string> JobRun::node_ids() const {
  std::vector<std::string> ids = ps_node_ids();
  for (std::string& id : worker_node_ids()) ids.push_back(std::move(id));
  return ids;
}

std::string JobRun::rendezvous_scope() const { return absl::StrCat(job_id_, "/run-", run_id_); }

int JobRun::WorkerIndex(const std::string& node_id) const {
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (workers_[w].node_id == node_id) return static_cast<int>(w);
  }
  return -1;
}

bool JobRun::HasWorker(const std::string& node_id) const { return WorkerIndex(node_id) >= 0; }

bool JobRun::Joinable(const std::string& node_id) const {
  const int w = WorkerIndex(node_id);
  absl::MutexLock lock(&mu_);
  return w >= 0 && !joined_[w];
}

void JobRun::Fail(absl::Status status) {
  {
    absl::MutexLock lock(&mu_);
    if (!failure_.ok()) return;
    failure_ = status;
    if (data_stop_ != nullptr) data_stop_->store(true);
  }
  for (auto& q : queues_) q->Close(status);
  eval_.Abort();  // an evaluation waiting for predictions ends now
}

void JobRun::Cancel(const std::string& reason) { Fail(absl::CancelledError(reason)); }

absl::Status JobRun::Health() {
  {
    absl::MutexLock lock(&mu_);
    if (!failure_.ok()) return failure_;
  }
  for (const auto& group : {&workers_, &ps_nodes_}) {
    for (const NodeInfo& node : *group) {
      if (!registry_->IsAlive(node.node_id)) {
        absl::Status dead = absl::UnavailableError(absl::StrCat(
            node.node_id, " (", node.registration.address(), ") stopped heartbeating for ",
            absl::FormatDuration(registry_->liveness_timeout())));
        Fail(dead);
        return dead;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<JobCacheSizing> JobRun::SizeCaches(const ResumePoint& resume, bool replay,
                                                  bool* loaded) {
  const uint32_t num_workers = static_cast<uint32_t>(workers_.size());
  *loaded = false;
  if (!replay) return SizeFromStoreOrData(num_workers, loaded);
  // The same training as the checkpoint's run: the same sizes, kept beside
  // the checkpoint, without reading the data again.
  absl::StatusOr<std::string> bytes = ReadBesideCheckpoint(resume, kCacheSizingFile);
  absl::StatusOr<JobCacheSizing> sizing =
      bytes.ok() ? LoadCacheSizing(*bytes, static_cast<size_t>(spec_.tables_size()))
                 : absl::StatusOr<JobCacheSizing>(bytes.status());
  if (sizing.ok()) {
    HLOG_INFO("job {}: cache sizes from {} (the data is not read again for them)", job_id_,
              resume.manifest);
    *loaded = true;
    return sizing;
  }
  HLOG_WARN("job {}: cache sizes read from the data again: {}", job_id_,
            std::string(sizing.status().message()));
  return SizeFromStoreOrData(num_workers, loaded);
}

absl::StatusOr<JobCacheSizing> JobRun::SizeFromStoreOrData(uint32_t num_workers, bool* loaded) {
  const std::string& dir = options_.sizing_dir;
  if (!SizingReadsData(spec_)) {
    HLOG_INFO(
        "job {}: cache sizes from scheduling.cache_rows_per_worker and the schema (the "
        "data is not read for them)",
        job_id_);
    return SizeJobCaches(spec_, num_workers);
  }
  if (std::optional<JobCacheSizing> stored = SizeFromKeyStats(spec_, num_workers)) {
    HLOG_INFO(
        "job {}: cache sizes from the key statistics stored in its binary files (the samples "
        "are not read for them)",
        job_id_);
    return *std::move(stored);
  }
  if (dir.empty()) return SizeJobCaches(spec_, num_workers);
  absl::StatusOr<std::string> key = SizingKey(spec_, num_workers);
  if (!key.ok()) return SizeJobCaches(spec_, num_workers);  // the pass names the error
  absl::StatusOr<JobCacheSizing> saved =
      LoadSizing(dir, *key, static_cast<size_t>(spec_.tables_size()));
  if (saved.ok()) {
    HLOG_INFO(
        "job {}: cache sizes of an earlier job's pass over the same data (the data is not "
        "read again for them)",
        job_id_);
    *loaded = true;
    return saved;
  }
  if (!absl::IsNotFound(saved.status())) {
    HLOG_WARN("job {}: saved cache sizes not used: {}", job_id_,
              std::string(saved.status().message()));
  }
  absl::StatusOr<JobCacheSizing> sizing = SizeJobCaches(spec_, num_workers);
  if (sizing.ok()) {
    if (absl::Status s = SaveSizing(dir, *key, *sizing); !s.ok()) {
      HLOG_WARN("job {}: cache sizes not saved for later jobs: {}", job_id_,
                std::string(s.message()));
    }
  }
  return sizing;
}

absl::Status JobRun::Prepare() {
  const uint32_t num_workers = static_cast<uint32_t>(workers_.size());
  ResumePoint resume;
  if (!spec_.checkpoint().resume_from().empty()) {
    HERALD_ASSIGN_OR_RETURN(resume, ReadResumePoint(spec_));
  }
  const bool replay = ContinuesSameTraining(resume, spec_, num_workers);
  bool sizing_loaded = false;
  HERALD_ASSIGN_OR_RETURN(JobCacheSizing sizing, SizeCaches(resume, replay, &sizing_loaded));
  if (checkpointer_ != nullptr) checkpointer_->KeepCacheSizing(SaveCacheSizing(sizing));
  HERALD_RETURN_IF_ERROR(eval_.Load(spec_, eval_settings_));
  std::vector<std::string> addresses;
  for (const NodeInfo& n : ps_nodes_) addresses.push_back(n.registration.address());
  ps::PsClientOptions ps_options;
  ps_options.channel = options_.ps_channel;
  ps_options.run_id = run_id_;
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<ps::PsClient> client,
                          options_.make_ps_client ? options_.make_ps_client(addresses, ps_options)
                                                  : ps::MakeGrpcPsClient(addresses, ps_options));
  {
    absl::MutexLock lock(&ps_mu_);  // PsStats() reads it from other threads
    ps_ = std::move(client);
  }
  HERALD_RETURN_IF_ERROR(StartJobOnPs(*ps_, job_id_, spec_, num_workers, resume));
  look_ahead_ = PsLookAhead::ForJob(ps_.get(), job_id_, spec_);
  absl::MutexLock lock(&mu_);
  sizing_ = std::move(sizing);
  replay_ = replay;
  if (!resume.manifest.empty()) {
    HLOG_INFO("job {}: resumed from {} at iteration {}{}", job_id_, resume.manifest,
              resume.first_iteration,
              replay ? " (same training: the planner continues from it)"
                     : " (another spec or worker count: a fresh planner)");
    if (!replay) sizing_.warm_keys.clear();
  }
  tracker_.StartAt(resume.first_iteration);
  tracker_.mutable_progress()->set_resumed_from(resume.manifest);
  tracker_.mutable_progress()->set_cache_sizing_loaded(sizing_loaded);
  initial_dense_ = std::move(resume.dense);
  initial_dense_state_ = std::move(resume.dense_state);
  resumed_ = std::move(resume);
  sized_ = true;
  return absl::OkStatus();
}

absl::StatusOr<proto::JoinJobResponse> JobRun::Join(const std::string& node_id,
                                                    absl::Duration wait) {
  const int w = WorkerIndex(node_id);
  if (w < 0) return absl::NotFoundError(absl::StrCat(node_id, " is not a worker of ", job_id_));
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return sized_ || !failure_.ok(); };
  if (!mu_.AwaitWithTimeout(absl::Condition(&ready), wait)) {
    return absl::UnavailableError(absl::StrCat("job ", job_id_, " is still preparing"));
  }
  if (!failure_.ok()) return failure_;
  if (joined_[w]) {
    return absl::FailedPreconditionError(absl::StrCat(node_id, " joined ", job_id_, " already"));
  }
  joined_[w] = true;
  proto::JoinJobResponse r;
  r.set_job_id(job_id_);
  r.set_run_id(run_id_);
  r.set_rendezvous_scope(rendezvous_scope());
  *r.mutable_spec() = spec_;
  r.set_rank(static_cast<uint32_t>(w));
  r.set_num_workers(static_cast<uint32_t>(workers_.size()));
  bool every_shard_ucx = true;
  for (const NodeInfo& n : ps_nodes_) {
    r.add_ps_addresses(n.registration.address());
    every_shard_ucx = every_shard_ucx && !n.registration.ucx_address().empty();
  }
  if (every_shard_ucx) {
    for (const NodeInfo& n : ps_nodes_) r.add_ps_ucx_addresses(n.registration.ucx_address());
  }
  uint64_t largest = 0;
  for (uint32_t s : sizing_.slots) {
    r.add_table_slots(s);
    largest = std::max<uint64_t>(largest, s);
  }
  r.set_cache_slots(largest);
  std::vector<proto::RegisterRequest> registrations;
  for (const NodeInfo& n : workers_) registrations.push_back(n.registration);
  r.set_dense_collective(ChooseDenseCollective(registrations));
  r.set_first_iteration(tracker_.first_iteration());
  if (!initial_dense_.empty()) {
    r.set_initial_dense(initial_dense_.data(), initial_dense_.size() * sizeof(float));
    r.set_initial_dense_state(initial_dense_state_.data(),
                              initial_dense_state_.size() * sizeof(float));
  }
  return r;
}

absl::StatusOr<StepQueue*> JobRun::QueueOf(const std::string& node_id) {
  const int w = WorkerIndex(node_id);
  if (w < 0) return absl::NotFoundError(absl::StrCat(node_id, " is not a worker of ", job_id_));
  return queues_[w].get();
}

absl::Status JobRun::PushStep(uint32_t w, std::shared_ptr<const proto::WorkerStep> step) {
  {
    // Counted before it can reach the worker, so its report is never early.
    absl::MutexLock lock(&mu_);
    tracker_.Sent(w);
  }
  return Enqueue(w, std::move(step));
}

absl::Status JobRun::Enqueue(uint32_t w, std::shared_ptr<const proto::WorkerStep> step) {
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    HERALD_ASSIGN_OR_RETURN(bool queued, queues_[w]->Push(step, options_.poll));
    if (queued) return absl::OkStatus();
  }
}

absl::StatusOr<PlannerOptions> JobRun::PlannerOptionsFor(const JobCacheSizing& sizing,
                                                         bool replay) const {
  PlannerResources resources;
  resources.num_workers = static_cast<uint32_t>(workers_.size());
  resources.capacity = sizing.capacity;
  resources.slots = sizing.slots;
  resources.warm_keys = sizing.warm_keys;
  resources.seed = spec_.seed();
  resources.threads = options_.planner_threads > 0
                          ? options_.planner_threads
                          : std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1, 64);
  // Checkpoints and evaluations need the whole model on the PS shards.
  resources.flush_every = {CheckpointEvery(), EvalEvery()};
  resources.flush_before_new_files = eval_settings_.each_file;
  HERALD_ASSIGN_OR_RETURN(PlannerOptions po,
                          PlannerOptionsFromSpec(spec_.scheduling(), std::move(resources)));
  if (!spec_.checkpoint().resume_from().empty() && !replay) {
    // The restored tables hold rows the planner never saw trained: fetch
    // every row rather than initialise it, and warm nothing.
    po.init_on_worker = false;
    po.warm_keys.clear();
  }
  return po;
}

absl::StatusOr<JobRun::StartedPlanner> JobRun::StartPlanner(PlannerOptions po, bool replay,
                                                            uint64_t resume_at,
                                                            const ResumePoint& resumed) {
  StartedPlanner started;
  proto::PlannerResume mode =
      resumed.manifest.empty() ? proto::PLANNER_RESUME_NONE : proto::PLANNER_RESUME_FRESH;
  if (replay) {
    started.planner = LoadResumedPlanner(job_id_, resumed, po, resume_at);
    if (started.planner != nullptr) mode = proto::PLANNER_RESUME_LOADED;
  }
  // Whether the planner continues from the checkpoint's state (loaded)
  // rather than being replayed up to it.
  started.continued = started.planner != nullptr;
  if (!started.continued) {
    // Replaying, the planner starts at iteration 0 as the checkpoint's run
    // did and plans up to resume_at without sending a step.
    po.first_iteration = replay ? 0 : resume_at;
    HERALD_ASSIGN_OR_RETURN(started.planner, Planner::Create(po));
    if (replay) mode = proto::PLANNER_RESUME_REPLAYED;
  }
  absl::MutexLock lock(&mu_);
  tracker_.mutable_progress()->set_planner_resume(mode);
  return started;
}

absl::StatusOr<std::unique_ptr<ReadAhead>> JobRun::OpenTrainingData(const ResumePoint& resumed,
                                                                    uint64_t* skip_batches) {
  uint64_t& skip = *skip_batches;
  HERALD_ASSIGN_OR_RETURN(auto stream,
                          BatchStream::Open(StreamOptionsFromSpec(spec_, Split::kTrain)));
  // Evaluations score with the keys this stream has admitted by their
  // iteration; the progress reports its counts.
  admission_ = stream->key_lifecycle();
  eval_.SetAdmission(admission_);
  {
    absl::MutexLock lock(&mu_);
    data_stop_ = stream->stop_token();
    if (!failure_.ok()) data_stop_->store(true);
  }
  const uint32_t window = ReadAheadWindow();
  // A resumed job continues the same deterministic stream after the
  // checkpoint's iteration (a replay plans the batches before it): the
  // checkpoint's data cursor moves the stream there, or else the batches
  // before are skipped on the loader's thread, read but not built.
  if (skip > 0) {
    proto::DataResume data_mode;
    HERALD_ASSIGN_OR_RETURN(
        stream, RestoreDataCursor(job_id_, spec_, resumed, std::move(stream), skip, &data_mode));
    absl::MutexLock lock(&mu_);
    tracker_.mutable_progress()->set_data_resume(data_mode);
    if (stream->batches() == skip) skip = 0;
  }
  // Each checkpoint iteration's cursor is saved as the reader passes it.
  const uint64_t checkpoint_every = CheckpointEvery();
  return std::make_unique<ReadAhead>(
      std::move(stream), window, skip, [checkpoint_every](uint64_t batches) {
        return checkpoint_every > 0 && batches > 0 && FlushesAt(checkpoint_every, batches - 1);
      });
}

absl::Status JobRun::QueueIteration(const IterationPlan& plan, const data::KeyBatch& batch,
                                    bool last, double plan_ms, uint64_t malformed_lines) {
  double encode_ms = 0;  // building and encoding the steps, not waiting to queue them
  PlanCounts total;
  for (uint32_t w = 0; w < workers_.size(); ++w) total += plan.workers[w].counts;
  PlannedIteration planned;
  planned.iteration = plan.iteration;
  planned.total = total;
  planned.plan_ms = plan_ms;
  planned.last = last;
  if (admission_ != nullptr) {
    const KeyLifecycle::Counts admitted = admission_->CountsThrough(plan.iteration);
    planned.keys_admitted = admitted.admitted;
    planned.keys_waiting = admitted.waiting;
    planned.lookups_dropped = admitted.dropped;
    planned.rows_expired = admitted.expired;
    for (const data::KeyBatch::Table& t : batch.tables) planned.expired_now += t.expired.size();
  }
  {
    // The iteration's history point exists before any worker can report it.
    absl::MutexLock lock(&mu_);
    tracker_.Planned(planned);
  }
  for (uint32_t w = 0; w < workers_.size(); ++w) {
    const absl::Time encode_start = absl::Now();
    auto encoded =
        std::make_shared<proto::WorkerStep>(BuildStep(batch, spec_.num_dense(), plan, w, job_id_));
    encoded->set_last(last);
    encoded->set_checkpoint(!last && FlushesAt(CheckpointEvery(), plan.iteration));
    encode_ms += absl::ToDoubleMilliseconds(absl::Now() - encode_start);
    HERALD_RETURN_IF_ERROR(PushStep(w, std::move(encoded)));
  }
  absl::MutexLock lock(&mu_);
  tracker_.Queued(planned, encode_ms, malformed_lines);
  return absl::OkStatus();
}

absl::Status JobRun::AfterQueued(const Planner& planner, uint64_t iteration, ReadAhead& loader) {
  if (FlushesAt(CheckpointEvery(), iteration)) {
    // Saved while the workers still train the queued steps.
    const absl::Time save_start = absl::Now();
    HERALD_ASSIGN_OR_RETURN(const std::string planner_state, planner.SaveState());
    HLOG_INFO("job {}: planner state after iteration {}: {} bytes in {:.0f} ms", job_id_, iteration,
              planner_state.size(), absl::ToDoubleMilliseconds(absl::Now() - save_start));
    HERALD_RETURN_IF_ERROR(
        CheckpointAt(iteration, planner_state, loader.CursorAfter(iteration + 1)));
  }
  if (FlushesAt(EvalEvery(), iteration)) HERALD_RETURN_IF_ERROR(EvaluateAt(iteration));
  return absl::OkStatus();
}

absl::Status JobRun::Plan() {
  StepPipeline steps([this](const StepPipeline::Iteration& it) {
    return QueueIteration(it.plan, it.batch, it.last, it.plan_ms, it.malformed_lines);
  });
  absl::Status planned = PlanInto(steps);
  if (planned.ok()) planned = steps.Drain();
  if (!planned.ok()) {
    Fail(planned);  // closes the queues: the pipeline's work ends at once
    return planned;
  }
  for (auto& q : queues_) q->Finish();
  return absl::OkStatus();
}

absl::Status JobRun::PlanInto(StepPipeline& steps) {
  JobCacheSizing sizing;
  bool replay;
  uint64_t resume_at;
  ResumePoint resumed;
  {
    absl::MutexLock lock(&mu_);
    sizing = sizing_;
    replay = replay_;
    resume_at = tracker_.first_iteration();
    resumed.manifest = resumed_.manifest;
    resumed.planner_file = resumed_.planner_file;
    resumed.planner_bytes = resumed_.planner_bytes;
    resumed.planner_checksum = resumed_.planner_checksum;
  }
  HERALD_ASSIGN_OR_RETURN(PlannerOptions po, PlannerOptionsFor(sizing, replay));
  const double budget_ms = po.adaptive.budget_ms;
  HERALD_ASSIGN_OR_RETURN(StartedPlanner started,
                          StartPlanner(std::move(po), replay, resume_at, resumed));
  std::unique_ptr<Planner>& planner = started.planner;
  const bool continued = started.continued;
  uint64_t skip = continued ? resume_at : planner->iteration();
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<ReadAhead> loader, OpenTrainingData(resumed, &skip));
  // The planner sees the next batch and, with a window of two or more, the
  // one after it too (it indexes that one beside the next's allocation).
  data::KeyBatch current, next, after;
  HERALD_ASSIGN_OR_RETURN(bool have_current, loader->Next(&current));
  if (loader->skipped() < skip) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint.resume_from: the data has fewer than ", skip, " batches"));
  }
  if (!have_current) return absl::InvalidArgumentError("data: no complete global batch");
  HERALD_ASSIGN_OR_RETURN(bool have_next, loader->Next(&next));
  IterationPlan plan_buffer;  // reused: its lists keep their memory between iterations
  const IterationPlan* plan = &plan_buffer;
  // What the step pipeline hands back (a finished iteration's buffers).
  StepPipeline::Iteration spare;
  bool budget_warned = false;  // herald-adaptive: an unreachable budget is logged once
  const absl::Time replay_start = absl::Now();
  const uint32_t window = ReadAheadWindow();
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    // A resumed run scores the files its first batch starts, as the run
    // it continues would have after the checkpoint's iteration (a score
    // that run did record is replaced by the same figures).
    if (eval_settings_.each_file && resume_at > 0 && planner->iteration() == resume_at &&
        !current.files_started.empty()) {
      HERALD_RETURN_IF_ERROR(ScoreFiles(resume_at - 1, current.files_started));
    }
    bool have_after = false;
    if (have_next && window >= 2) {
      HERALD_ASSIGN_OR_RETURN(have_after, loader->Next(&after));
    }
    const bool replaying = planner->iteration() < resume_at;  // only when replay
    CachedRows before_resume;
    if (replay && planner->iteration() == resume_at) before_resume = CachedRowsOf(*planner);
    const absl::Time plan_start = absl::Now();
    if (absl::Status planned = planner->PlanInto(current, have_next ? &next : nullptr,
                                                 have_after ? &after : nullptr, &plan_buffer);
        !planned.ok()) {
      return absl::Status(planned.code(), absl::StrCat("planning iteration ", planner->iteration(),
                                                       ": ", planned.message()));
    }
    if (replaying) {
      if (!have_next) return absl::InternalError("replay: the data ended before the checkpoint");
      std::swap(current, next);
      std::swap(next, after);
      have_next = have_after;
      continue;
    }
    if (replay && plan->iteration == resume_at) {
      const uint64_t refilled = AddCacheRefill(before_resume, *planner, &plan_buffer);
      if (continued) {
        HLOG_INFO("job {}: planner loaded at the checkpoint; {} cached rows refilled", job_id_,
                  refilled);
      } else {
        HLOG_INFO(
            "job {}: planner replayed over {} iterations in {:.0f} ms; {} cached rows "
            "refilled",
            job_id_, resume_at, absl::ToDoubleMilliseconds(plan_start - replay_start), refilled);
      }
      absl::MutexLock lock(&mu_);
      tracker_.mutable_progress()->set_replayed_iterations(continued ? 0 : resume_at);
      tracker_.mutable_progress()->set_refilled_rows(refilled);
    }
    const double plan_ms = absl::ToDoubleMilliseconds(absl::Now() - plan_start);
    if (look_ahead_ != nullptr) look_ahead_->Send(*plan);
    if (const TableProfiler* profiler = planner->profiler();
        profiler != nullptr && !budget_warned && !profiler->budget_reachable()) {
      budget_warned = true;
      HLOG_WARN(
          "job {}: herald-adaptive budget {:.3g} ms is not reachable: the cost model "
          "predicts {:.3f} ms with no table scored (the planner's base cost), so none is",
          job_id_, budget_ms, profiler->predicted_ms());
    }
    // The steps are built and queued on the pipeline's thread while this
    // one plans the next iteration; the plan and batch move there.
    const uint64_t iteration = plan->iteration;
    std::swap(plan_buffer, spare.plan);
    std::swap(current, spare.batch);
    spare.last = !have_next;
    spare.plan_ms = plan_ms;
    spare.malformed_lines = loader->malformed();
    HERALD_RETURN_IF_ERROR(steps.Submit(&spare));
    const bool score_files = eval_settings_.each_file && have_next && !next.files_started.empty();
    if (!have_next || FlushesAt(CheckpointEvery(), iteration) ||
        FlushesAt(EvalEvery(), iteration) || score_files) {
      // A checkpoint waits for this iteration's reports, and evaluation
      // steps follow its steps in the queues.
      HERALD_RETURN_IF_ERROR(steps.Drain());
    }
    if (!have_next) {
      if (eval_settings_.at_end) HERALD_RETURN_IF_ERROR(EvaluateAt(iteration));
      break;
    }
    HERALD_RETURN_IF_ERROR(AfterQueued(*planner, iteration, *loader));
    // eval.each_file: the planner flushed this iteration, so the PS holds
    // the model that scores the files before their samples train.
    if (score_files) HERALD_RETURN_IF_ERROR(ScoreFiles(iteration, next.files_started));
    std::swap(current, next);
    std::swap(next, after);
    have_next = have_after;
  }
  return absl::OkStatus();
}

absl::Status JobRun::Report(const proto::StepReport& report) {
  const int w = WorkerIndex(report.node_id());
  if (w < 0) {
    return absl::NotFoundError(absl::StrCat(report.node_id(), " is not a worker of ", job_id_));
  }
  if (!report.error().empty()) {
    Fail(absl::AbortedError(absl::StrCat("worker ", w, " (", report.node_id(), ") at iteration ",
                                         report.iteration(), ": ", report.error())));
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  return tracker_.Reported(static_cast<uint32_t>(w), report, absl::Now());
}

absl::Status JobRun::WaitForReports() {
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return !failure_.ok() || tracker_.AllReported();
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&done), options_.poll) && failure_.ok()) {
      return absl::OkStatus();
    }
  }
}

absl::Status JobRun::WaitForIteration(uint64_t iteration) {
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    absl::MutexLock lock(&mu_);
    auto reported = [this, iteration]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return !failure_.ok() || tracker_.HasReported(iteration);
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&reported), options_.poll) && failure_.ok()) {
      return absl::OkStatus();
    }
  }
}

absl::Status JobRun::EvaluateAt(uint64_t iteration, std::shared_ptr<const EvalSet> set,
                                const std::vector<std::string>& files) {
  if (set == nullptr && eval_.empty()) return absl::OkStatus();
  const absl::Time start = absl::Now();
  HERALD_RETURN_IF_ERROR(WaitForIteration(iteration));
  for (auto& [worker, step] : eval_.Begin(iteration, std::move(set))) {
    HERALD_RETURN_IF_ERROR(Enqueue(worker, std::move(step)));
  }
  do {
    HERALD_RETURN_IF_ERROR(Health());
  } while (!eval_.AwaitComplete(options_.poll));
  const EvalResult r = eval_.Finish();
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  {
    absl::MutexLock lock(&mu_);
    tracker_.Evaluated(iteration, r, ms, absl::Now(), files);
  }
  std::vector<std::string> figures;
  for (const math::LabelMetrics& m : r) figures.push_back(math::DescribeMetrics(m));
  HLOG_INFO("job {}: after iteration {}: {} {} over {} samples ({:.0f} ms)", job_id_, iteration,
            files.empty() ? "held-out" : absl::StrCat("new file ", absl::StrJoin(files, ", "), ":"),
            absl::StrJoin(figures, "; "), r.empty() ? 0 : r[0].samples, ms);
  return absl::OkStatus();
}

absl::Status JobRun::ScoreFiles(uint64_t iteration, const std::vector<std::string>& files) {
  std::vector<std::string> paths;
  for (const std::string& f : files) paths.push_back(absl::StrCat(spec_.data().paths(0), "/", f));
  absl::StatusOr<std::shared_ptr<const EvalSet>> set = eval_.ReadFiles(paths);
  if (absl::IsNotFound(set.status())) {
    // Removed since the stream opened it (its reader keeps it open):
    // training goes on without the score.
    HLOG_WARN("job {}: new file {} not scored: {}", job_id_, absl::StrJoin(files, ", "),
              std::string(set.status().message()));
    return absl::OkStatus();
  }
  if (!set.ok()) {
    return absl::Status(set.status().code(),
                        absl::StrCat("eval.each_file: ", set.status().message()));
  }
  if ((*set)->empty()) {
    HLOG_WARN("job {}: new file {} has no sample to score", job_id_, absl::StrJoin(files, ", "));
    return absl::OkStatus();
  }
  return EvaluateAt(iteration, *std::move(set), files);
}

absl::Status JobRun::ReportEval(const proto::EvalReport& report) {
  const int w = WorkerIndex(report.node_id());
  if (w < 0) {
    return absl::NotFoundError(absl::StrCat(report.node_id(), " is not a worker of ", job_id_));
  }
  return eval_.Accept(static_cast<uint32_t>(w), report);
}

absl::Status JobRun::CheckpointAt(uint64_t iteration, const std::string& planner_state,
                                  const absl::StatusOr<std::string>& data_cursor) {
  const absl::Time start = absl::Now();
  HERALD_RETURN_IF_ERROR(WaitForIteration(iteration));
  absl::StatusOr<WrittenCheckpoint> written =
      checkpointer_->WritePeriodic(*ps_, iteration, planner_state, data_cursor);
  if (!written.ok()) {
    if (!JobCheckpointer::RefusedByStorage(written.status())) return written.status();
    // Training goes on; the checkpoint before stays the newest complete one.
    RecordCheckpointFailure(written.status(), iteration);
    return absl::OkStatus();
  }
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  HLOG_INFO("job {}: checkpoint of iteration {} in {:.0f} ms: {}", job_id_, iteration, ms,
            written->manifest);
  {
    absl::MutexLock lock(&mu_);
    proto::JobProgress* progress = tracker_.mutable_progress();
    progress->set_last_checkpoint(written->manifest);
    progress->set_checkpoints_written(progress->checkpoints_written() + 1);
    progress->set_checkpoint_ms(progress->checkpoint_ms() + ms);
    progress->set_checkpoint_bytes(progress->checkpoint_bytes() + written->bytes);
    progress->set_checkpoint_write_ms(progress->checkpoint_write_ms() + written->write_ms);
  }
  if (options_.on_checkpoint) options_.on_checkpoint();
  return absl::OkStatus();
}

absl::Status JobRun::FinalCheckpoint() {
  uint64_t last = 0;
  std::vector<float> dense;
  {
    absl::MutexLock lock(&mu_);
    last = tracker_.total_iterations() - 1;
    dense = dense_;
  }
  absl::StatusOr<std::string> manifest = checkpointer_->WriteFinal(*ps_, last, dense);
  if (!manifest.ok()) {
    const absl::Status failed(manifest.status().code(),
                              absl::StrCat("final checkpoint: ", manifest.status().message()));
    if (!JobCheckpointer::RefusedByStorage(failed)) return failed;
    RecordCheckpointFailure(failed, last);  // the model stays exportable
    return absl::OkStatus();
  }
  HLOG_INFO("job {}: checkpoint {}", job_id_, *manifest);
  absl::MutexLock lock(&mu_);
  proto::JobProgress* progress = tracker_.mutable_progress();
  progress->set_last_checkpoint(*manifest);
  progress->set_checkpoints_written(progress->checkpoints_written() + 1);
  return absl::OkStatus();
}

void JobRun::RecordCheckpointFailure(const absl::Status& status, uint64_t iteration) {
  checkpointer_->RemovePartial(iteration);
  HLOG_ERROR("job {}: {}; training goes on, the newest complete checkpoint is still {}", job_id_,
             std::string(status.message()), Progress().last_checkpoint());
  absl::MutexLock lock(&mu_);
  proto::JobProgress* progress = tracker_.mutable_progress();
  progress->set_checkpoint_failures(progress->checkpoint_failures() + 1);
  progress->set_checkpoint_error(std::string(status.message()));
}

absl::Status JobRun::Run() {
  const absl::Status outcome = RunToEnd();
  absl::MutexLock lock(&mu_);
  outcome_ = outcome;
  return outcome;
}

std::optional<absl::Status> JobRun::AwaitEnd(absl::Duration wait) const {
  absl::MutexLock lock(&mu_);
  auto ended = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return outcome_.has_value(); };
  mu_.AwaitWithTimeout(absl::Condition(&ended), wait);
  return outcome_;
}

absl::Status JobRun::RunToEnd() {
  absl::Status s = Prepare();
  if (s.ok()) s = Plan();
  if (s.ok()) s = WaitForReports();
  if (s.ok()) s = CheckDenseReplicas();
  if (s.ok() && checkpointer_ != nullptr) s = FinalCheckpoint();
  if (s.ok()) return s;
  Fail(s);
  {
    absl::MutexLock lock(&mu_);
    s = failure_;
  }
  EndOnPs();  // frees the shards and releases any worker waiting on them
  return s;
}

std::vector<size_t> JobRun::QueueDepths() const {
  std::vector<size_t> depths;
  for (const auto& q : queues_) depths.push_back(q->size());
  return depths;
}

std::vector<proto::PsStatsResponse> JobRun::PsStats() {
  absl::MutexLock lock(&ps_mu_);
  if (ps_ == nullptr || ended_on_ps_) return {};
  absl::StatusOr<std::vector<proto::PsStatsResponse>> stats = ps_->Stats(job_id_);
  return stats.ok() ? *stats : std::vector<proto::PsStatsResponse>{};
}

absl::Status JobRun::AcceptDense(const std::string& node_id, std::vector<float> values,
                                 const DenseUpload& meta) {
  const int w = WorkerIndex(node_id);
  if (w < 0) return absl::NotFoundError(absl::StrCat(node_id, " is not a worker of ", job_id_));
  if (w != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("worker ", w, " (", node_id, ") uploaded dense parameters: only rank 0 does"));
  }
  if (values.empty()) return absl::InvalidArgumentError("no dense parameters");
  absl::MutexLock lock(&mu_);
  if (meta.checkpoint) {
    if (checkpointer_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", job_id_, " writes no checkpoint (checkpoint.dir is not set)"));
    }
    checkpointer_->AcceptDense(meta.iteration, std::move(values), meta.state_floats);
  } else {
    dense_ = std::move(values);
  }
  return absl::OkStatus();
}

absl::Status JobRun::CheckDenseReplicas() {
  absl::MutexLock lock(&mu_);
  if (dense_.empty()) {
    return absl::InternalError("worker 0 did not upload the trained dense parameters");
  }
  const uint32_t uploaded = Crc32(dense_.data(), dense_.size() * sizeof(float));
  const std::vector<uint32_t>& final_crc = tracker_.final_crcs();
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (final_crc[w] != uploaded) {
      return absl::DataLossError(
          absl::StrCat("dense replicas differ after the last iteration: worker ", w, " (",
                       workers_[w].node_id, ") reported CRC ", Crc32Hex(final_crc[w]),
                       ", worker 0 uploaded parameters with CRC ", Crc32Hex(uploaded)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<proto::ExportJobResponse> JobRun::Export(const std::string& out_dir,
                                                        const std::string& since) {
  TrainedModel model;
  model.job_id = job_id_;
  model.spec = spec_;
  model.num_workers = static_cast<uint32_t>(workers_.size());
  {
    absl::MutexLock lock(&mu_);
    if (!failure_.ok() || !tracker_.AllReported()) {
      return absl::FailedPreconditionError(absl::StrCat("job ", job_id_, " did not succeed"));
    }
    model.iterations = tracker_.Progress().iteration();
    model.dense = dense_;
  }
  absl::MutexLock lock(&ps_mu_);
  if (ended_on_ps_) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id_,
                     "'s tables were dropped from the PS shards when a later job started, "
                     "and it has no final checkpoint (checkpoint.dir) to export from"));
  }
  return WriteModelExport(model, ps_.get(), out_dir, since);
}

void JobRun::EndOnPs() {
  absl::MutexLock lock(&ps_mu_);
  if (ended_on_ps_) return;
  ended_on_ps_ = true;
  if (ps_ == nullptr) return;
  if (absl::Status end = ps_->EndJob(job_id_); !end.ok()) {
    HLOG_WARN("job {}: EndJob on the PS: {}", job_id_, std::string(end.message()));
  }
}

proto::JobProgress JobRun::Progress() const {
  absl::MutexLock lock(&mu_);
  return tracker_.Progress();
}

std::vector<double> JobRun::Losses() const {
  absl::MutexLock lock(&mu_);
  return tracker_.Losses();
}

std::vector<proto::HistoryPoint> JobRun::History() const {
  absl::MutexLock lock(&mu_);
  return tracker_.History();
}

}  // namespace herald::scheduler
