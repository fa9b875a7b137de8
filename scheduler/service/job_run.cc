#include "scheduler/service/job_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "checkpoint/atomic_file.h"
#include "checkpoint/manifest.h"
#include "common/crc32.h"
#include "common/data/distinct_counter.h"
#include "common/data/hot_keys.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/tunables.h"
#include "ps_server/client/sharded_ps_client.h"
#include "scheduler/planner/cache_refill.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/scheduling_spec.h"
#include "scheduler/planner/simulator.h"
#include "scheduler/planner/step_builder.h"
#include "scheduler/service/batch_stream.h"
#include "scheduler/service/dense_collective.h"
#include "scheduler/service/job_checkpoint.h"
#include "scheduler/service/job_spec_check.h"
#include "scheduler/service/model_export.h"
#include "scheduler/service/read_ahead.h"

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

absl::StatusOr<JobCacheSizing> SizeJobCaches(const proto::JobSpec& spec, uint32_t num_workers) {
  // One pass over the batches the job trains (at most one epoch), in its
  // order without shuffling. `visit` sees every batch.
  auto each_batch = [&](const std::function<void(const data::KeyBatch&)>& visit) -> absl::Status {
    BatchStreamOptions o = StreamOptionsFromSpec(spec, Split::kTrain);
    o.max_epochs = 1;
    o.data.set_shuffle_buffer(0);
    HERALD_ASSIGN_OR_RETURN(auto stream, BatchStream::Open(o));
    data::KeyBatch batch;
    for (;;) {
      HERALD_ASSIGN_OR_RETURN(bool more, stream->Next(&batch));
      if (!more) break;
      visit(batch);
    }
    if (stream->batches() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data: fewer training samples than one global batch (", spec.global_batch_size(), ")"));
    }
    return absl::OkStatus();
  };
  // Pass 1: distinct keys per table (exact up to 65536, then a HyperLogLog
  // estimate: memory bounded whatever the data) and the widest multi-hot
  // feature.
  const size_t tables = spec.tables_size();
  const bool need_distinct = spec.scheduling().cache_rows_per_worker() == 0;
  std::vector<data::DistinctCounter> distinct(need_distinct ? tables : 0);
  std::vector<uint32_t> max_keys(tables, 1);
  HERALD_RETURN_IF_ERROR(each_batch([&](const data::KeyBatch& batch) {
    for (size_t t = 0; t < tables; ++t) {
      const auto& table = batch.tables[t];
      for (uint32_t s = 0; s < batch.num_samples; ++s) {
        max_keys[t] = std::max(max_keys[t], table.offsets[s + 1] - table.offsets[s]);
      }
      if (need_distinct) {
        for (Key key : table.keys) distinct[t].Add(key);
      }
    }
  }));
  const uint32_t per_worker = (spec.global_batch_size() + num_workers - 1) / num_workers;
  std::vector<uint64_t> counts(tables, 0);
  for (size_t t = 0; t < distinct.size(); ++t) counts[t] = distinct[t].Estimate();
  const double fraction = spec.scheduling().cache_fraction();
  CacheSizing sizing = SizeCaches(counts, max_keys, need_distinct ? fraction : 0, per_worker);
  if (!need_distinct) {
    const uint64_t rows = spec.scheduling().cache_rows_per_worker();
    for (size_t t = 0; t < tables; ++t) {
      sizing.capacity[t] = static_cast<uint32_t>(std::min<uint64_t>(rows, UINT32_MAX));
      sizing.slots[t] = std::max(sizing.capacity[t], per_worker * max_keys[t]);
    }
  }
  JobCacheSizing result{sizing.capacity, sizing.slots, {}};
  if (!spec.scheduling().warm_start()) return result;
  // Pass 2, warm start only: each table's `capacity` hottest keys, from
  // counters for max(2 × capacity, 16384) keys (exact while the table's
  // distinct keys fit; memory follows the caches' size, not the data's).
  std::vector<data::HotKeys> hot;
  for (size_t t = 0; t < tables; ++t) {
    hot.emplace_back(std::max<size_t>(2 * size_t{sizing.capacity[t]}, 16384));
  }
  HERALD_RETURN_IF_ERROR(each_batch([&](const data::KeyBatch& batch) {
    for (size_t t = 0; t < tables; ++t) {
      for (Key key : batch.tables[t].keys) hot[t].Add(key);
    }
  }));
  for (size_t t = 0; t < tables; ++t) result.warm_keys.push_back(hot[t].Top(sizing.capacity[t]));
  return result;
}

JobRun::JobRun(std::string job_id, proto::JobSpec spec, std::vector<NodeInfo> ps,
               std::vector<NodeInfo> workers, const NodeRegistry* registry, JobRunOptions options)
    : job_id_(std::move(job_id)),
      run_id_(NewRunId()),
      spec_(std::move(spec)),
      ps_nodes_(std::move(ps)),
      workers_(std::move(workers)),
      registry_(registry),
      options_(options),
      eval_(EvalSettingsFromSpec(spec_)),
      history_(options.history_points) {
  for (size_t w = 0; w < workers_.size(); ++w) {
    queues_.push_back(std::make_unique<StepQueue>(options_.step_queue_capacity));
  }
  next_report_.assign(workers_.size(), 0);
  joined_.assign(workers_.size(), false);
  sent_.assign(workers_.size(), 0);
  final_crc_.assign(workers_.size(), 0);
  total_iterations_ = spec_.iterations();
  history_.Continue(options_.history);
  started_ = absl::Now();
  last_point_time_ = started_;
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
  }
  for (auto& q : queues_) q->Close(status);
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

absl::Status JobRun::LoadHeldOut() {
  if (!eval_.enabled()) return absl::OkStatus();
  HERALD_RETURN_IF_ERROR(ForEachHeldOutBatch(
      spec_, eval_.batch_size, eval_.max_samples, [&](const data::KeyBatch& batch) {
        eval_batches_.push_back(
            EncodeEvalBatch(batch, static_cast<uint32_t>(eval_batches_.size())));
        eval_batch_sizes_.push_back(batch.num_samples);
        eval_labels_.insert(eval_labels_.end(), batch.labels.begin(), batch.labels.end());
        return absl::OkStatus();
      }));
  if (eval_batches_.empty()) {
    HLOG_WARN("job {}: data.eval_fraction {} held out no sample: no evaluation", job_id_,
              spec_.data().eval_fraction());
  }
  return absl::OkStatus();
}

absl::Status JobRun::Prepare() {
  HERALD_ASSIGN_OR_RETURN(JobCacheSizing sizing,
                          SizeJobCaches(spec_, static_cast<uint32_t>(workers_.size())));
  HERALD_RETURN_IF_ERROR(LoadHeldOut());
  std::vector<std::string> addresses;
  for (const NodeInfo& n : ps_nodes_) addresses.push_back(n.registration.address());
  ps::PsClientOptions ps_options;
  ps_options.channel = options_.ps_channel;
  ps_options.run_id = run_id_;
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<ps::PsClient> client,
                          ps::MakeGrpcPsClient(addresses, ps_options));
  {
    absl::MutexLock lock(&ps_mu_);  // PsStats() reads it from other threads
    ps_ = std::move(client);
  }
  ResumePoint resume;
  if (!spec_.checkpoint().resume_from().empty()) {
    HERALD_ASSIGN_OR_RETURN(resume, ReadResumePoint(spec_));
    // A run of this job that the shards still hold (its scheduler died)
    // gives way to the restored one; shards without it answer NotFound.
    ps_->EndJob(job_id_).IgnoreError();
  }
  absl::StatusOr<uint64_t> next = ps_->StartJob(
      job_id_, spec_, static_cast<uint32_t>(workers_.size()), resume.manifest, resume.job_id);
  if (!next.ok()) {
    return absl::Status(next.status().code(),
                        absl::StrCat("starting the job on the PS: ", next.status().message()));
  }
  if (*next != resume.first_iteration) {
    return absl::DataLossError(absl::StrCat("the PS shards start at iteration ", *next, ", the ",
                                            "checkpoint at ", resume.first_iteration));
  }
  const bool replay = ContinuesSameTraining(resume, spec_, static_cast<uint32_t>(workers_.size()));
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
  first_iteration_ = resume.first_iteration;
  progress_.set_resumed_from(resume.manifest);
  std::fill(next_report_.begin(), next_report_.end(), first_iteration_);
  progress_.set_iteration(first_iteration_);
  last_point_iteration_ = first_iteration_;
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
  r.set_first_iteration(first_iteration_);
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
    ++sent_[w];
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

absl::Status JobRun::Plan() {
  JobCacheSizing sizing;
  bool replay;
  uint64_t resume_at;
  std::string resumed_from;
  {
    absl::MutexLock lock(&mu_);
    sizing = sizing_;
    replay = replay_;
    resume_at = first_iteration_;
    resumed_from = progress_.resumed_from();
  }
  PlannerResources resources;
  resources.num_workers = static_cast<uint32_t>(workers_.size());
  resources.capacity = sizing.capacity;
  resources.slots = sizing.slots;
  resources.warm_keys = sizing.warm_keys;
  resources.seed = spec_.seed();
  resources.threads = options_.planner_threads;
  // Checkpoints and evaluations need the whole model on the PS shards.
  const uint64_t checkpoint_every =
      spec_.checkpoint().dir().empty() ? 0 : spec_.checkpoint().every_iterations();
  const uint64_t eval_every = eval_batches_.empty() ? 0 : eval_.every_iterations;
  resources.flush_every = {checkpoint_every, eval_every};
  HERALD_ASSIGN_OR_RETURN(PlannerOptions po,
                          PlannerOptionsFromSpec(spec_.scheduling(), std::move(resources)));
  if (!spec_.checkpoint().resume_from().empty() && !replay) {
    // The restored tables hold rows the planner never saw trained: fetch
    // every row rather than initialise it, and warm nothing.
    po.init_on_worker = false;
    po.warm_keys.clear();
  }
  proto::PlannerResume mode =
      resumed_from.empty() ? proto::PLANNER_RESUME_NONE : proto::PLANNER_RESUME_FRESH;
  std::unique_ptr<Planner> planner;
  if (replay) planner = LoadPlanner(po, resume_at, &mode);
  // Whether the planner continues from the checkpoint's state (loaded)
  // rather than being replayed up to it.
  const bool continued = planner != nullptr;
  if (!continued) {
    // Replaying, the planner starts at iteration 0 as the checkpoint's run
    // did and plans up to resume_at without sending a step.
    po.first_iteration = replay ? 0 : resume_at;
    HERALD_ASSIGN_OR_RETURN(planner, Planner::Create(po));
    if (replay) mode = proto::PLANNER_RESUME_REPLAYED;
  }
  po.first_iteration = resume_at;
  {
    absl::MutexLock lock(&mu_);
    progress_.set_planner_resume(mode);
  }
  HERALD_ASSIGN_OR_RETURN(auto stream,
                          BatchStream::Open(StreamOptionsFromSpec(spec_, Split::kTrain)));
  const uint32_t window = spec_.data().read_ahead_batches() > 0
                              ? spec_.data().read_ahead_batches()
                              : static_cast<uint32_t>(tunables::kReadAheadBatches);
  // A resumed job continues the same deterministic stream after the
  // checkpoint's iteration (a replay plans the batches before it): the
  // checkpoint's data cursor moves the stream there, or else the batches
  // before are skipped on the loader's thread, read but not built.
  uint64_t skip = continued ? resume_at : planner->iteration();
  if (skip > 0) {
    HERALD_ASSIGN_OR_RETURN(stream, RestoreDataCursor(std::move(stream), skip));
    if (stream->batches() == skip) skip = 0;
  }
  // Each checkpoint iteration's cursor is saved as the reader passes it.
  ReadAhead loader(std::move(stream), window, skip, [checkpoint_every](uint64_t batches) {
    return checkpoint_every > 0 && batches > 0 && FlushesAt(checkpoint_every, batches - 1);
  });
  // The planner sees the next batch and, with a window of two or more, the
  // one after it too (it indexes that one beside the next's allocation).
  data::KeyBatch current, next, after;
  HERALD_ASSIGN_OR_RETURN(bool have_current, loader.Next(&current));
  if (loader.skipped() < skip) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint.resume_from: the data has fewer than ", skip, " batches"));
  }
  if (!have_current) return absl::InvalidArgumentError("data: no complete global batch");
  HERALD_ASSIGN_OR_RETURN(bool have_next, loader.Next(&next));
  IterationPlan plan_buffer;  // reused: its lists keep their memory between iterations
  const IterationPlan* plan = &plan_buffer;
  bool budget_warned = false;  // herald-adaptive: an unreachable budget is logged once
  const absl::Time replay_start = absl::Now();
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    bool have_after = false;
    if (have_next && window >= 2) {
      HERALD_ASSIGN_OR_RETURN(have_after, loader.Next(&after));
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
      progress_.set_replayed_iterations(continued ? 0 : resume_at);
      progress_.set_refilled_rows(refilled);
    }
    const double plan_ms = absl::ToDoubleMilliseconds(absl::Now() - plan_start);
    if (const TableProfiler* profiler = planner->profiler();
        profiler != nullptr && !budget_warned && !profiler->budget_reachable()) {
      budget_warned = true;
      HLOG_WARN(
          "job {}: herald-adaptive budget {:.3g} ms is not reachable: the cost model "
          "predicts {:.3f} ms with no table scored (the planner's base cost), so none is",
          job_id_, po.adaptive.budget_ms, profiler->predicted_ms());
    }
    double encode_ms = 0;  // building and encoding the steps, not waiting to queue them
    PlanCounts total;
    for (uint32_t w = 0; w < workers_.size(); ++w) total += plan->workers[w].counts;
    {
      // The iteration's history point exists before any worker can report it.
      absl::MutexLock lock(&mu_);
      if (planned_ == 0) last_point_iteration_ = plan->iteration;
      proto::HistoryPoint& point = pending_[plan->iteration].point;
      point.set_iteration(plan->iteration);
      point.set_rows_fetched(total.fetched);
      point.set_rows_pushed(total.pushed);
      point.set_rows_written_back(total.written_back);
      point.set_rows_transferred(total.transferred);
      point.set_rows_vanilla(2 * total.uses);
      point.set_cache_hit_rate(total.uses == 0 ? 0.0
                                               : static_cast<double>(total.hits) / total.uses);
      for (size_t w = 0; w < workers_.size(); ++w) point.add_workers();
    }
    for (uint32_t w = 0; w < workers_.size(); ++w) {
      const absl::Time encode_start = absl::Now();
      auto encoded = std::make_shared<proto::WorkerStep>(
          BuildStep(current, spec_.num_dense(), *plan, w, job_id_));
      encoded->set_last(!have_next);
      encoded->set_checkpoint(have_next && FlushesAt(checkpoint_every, plan->iteration));
      encode_ms += absl::ToDoubleMilliseconds(absl::Now() - encode_start);
      HERALD_RETURN_IF_ERROR(PushStep(w, std::move(encoded)));
    }
    {
      absl::MutexLock lock(&mu_);
      progress_.set_scheduler_plan_ms(progress_.scheduler_plan_ms() + plan_ms);
      progress_.set_scheduler_encode_ms(progress_.scheduler_encode_ms() + encode_ms);
      ++planned_;
      progress_.set_iterations_planned(first_iteration_ + planned_);
      progress_.set_rows_fetched(progress_.rows_fetched() + total.fetched);
      progress_.set_rows_pushed(progress_.rows_pushed() + total.pushed);
      progress_.set_rows_written_back(progress_.rows_written_back() + total.written_back);
      progress_.set_rows_handed_off(progress_.rows_handed_off() + total.transferred);
      progress_.set_rows_initialized(progress_.rows_initialized() + total.initialized);
      progress_.set_rows_moved(progress_.rows_fetched() + progress_.rows_pushed() +
                               progress_.rows_written_back() + progress_.rows_handed_off());
      // Vanilla under exact BSP moves every used row both ways (docs/scheduler.md).
      rows_vanilla_ += 2 * total.uses;

      progress_.set_rows_moved_vanilla(rows_vanilla_);
      progress_.set_malformed_lines(loader.malformed());
      uses_ += total.uses;
      hits_ += total.hits;
      progress_.set_cache_hit_rate(uses_ == 0 ? 0.0 : static_cast<double>(hits_) / uses_);
      if (!have_next) {
        planning_done_ = true;
        total_iterations_ = first_iteration_ + planned_;
      }
    }
    if (!have_next) {
      if (eval_.at_end) HERALD_RETURN_IF_ERROR(EvaluateAt(plan->iteration));
      break;
    }
    if (FlushesAt(checkpoint_every, plan->iteration)) {
      // Saved while the workers still train the queued steps.
      const absl::Time save_start = absl::Now();
      HERALD_ASSIGN_OR_RETURN(const std::string planner_state, planner->SaveState());
      HLOG_INFO("job {}: planner state after iteration {}: {} bytes in {:.0f} ms", job_id_,
                plan->iteration, planner_state.size(),
                absl::ToDoubleMilliseconds(absl::Now() - save_start));
      HERALD_RETURN_IF_ERROR(
          CheckpointAt(plan->iteration, planner_state, loader.CursorAfter(plan->iteration + 1)));
    }
    if (FlushesAt(eval_every, plan->iteration)) {
      HERALD_RETURN_IF_ERROR(EvaluateAt(plan->iteration));
    }
    std::swap(current, next);
    std::swap(next, after);
    have_next = have_after;
  }
  for (auto& q : queues_) q->Finish();
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
  if (report.iteration() != next_report_[w] || report.iteration() >= first_iteration_ + sent_[w]) {
    return absl::InvalidArgumentError(absl::StrCat("report of iteration ", report.iteration(),
                                                   " from worker ", w, ": expected iteration ",
                                                   next_report_[w]));
  }
  ++next_report_[w];
  final_crc_[w] = report.dense_crc32();  // the last report's is the one kept
  progress_.set_worker_fetch_ms(progress_.worker_fetch_ms() + report.fetch_ms());
  progress_.set_worker_compute_ms(progress_.worker_compute_ms() + report.compute_ms());
  progress_.set_worker_allreduce_ms(progress_.worker_allreduce_ms() + report.allreduce_ms());
  progress_.set_worker_push_ms(progress_.worker_push_ms() + report.push_ms());
  progress_.set_worker_writeback_ms(progress_.worker_writeback_ms() + report.writeback_ms());
  progress_.set_worker_bytes_moved(progress_.worker_bytes_moved() + report.bytes_moved());
  progress_.set_worker_rows_prefetched(progress_.worker_rows_prefetched() +
                                       report.rows_prefetched());
  Pending& p = pending_[report.iteration()];
  ++p.reports;
  p.loss_sum += report.loss_sum();
  if (p.point.workers_size() > w) {
    proto::WorkerPhases* phases = p.point.mutable_workers(w);
    phases->set_fetch_ms(report.fetch_ms());
    phases->set_compute_ms(report.compute_ms());
    phases->set_allreduce_ms(report.allreduce_ms());
    phases->set_push_ms(report.push_ms());
    phases->set_writeback_ms(report.writeback_ms());
  }
  // Iterations complete in order: every worker reports them in order.
  while (!pending_.empty() && pending_.begin()->second.reports == workers_.size()) {
    const uint64_t iteration = pending_.begin()->first;
    const double loss = pending_.begin()->second.loss_sum / spec_.global_batch_size();
    proto::HistoryPoint point = std::move(pending_.begin()->second.point);
    pending_.erase(pending_.begin());
    const absl::Time now = absl::Now();
    const double interval = absl::ToDoubleSeconds(now - last_point_time_);
    const uint64_t done = iteration + 1 - last_point_iteration_;
    point.set_unix_ms(absl::ToUnixMillis(now));
    point.set_loss(loss);
    point.set_samples_per_second(interval > 0 ? done * spec_.global_batch_size() / interval : 0);
    last_point_time_ = now;
    last_point_iteration_ = iteration + 1;
    history_.Add(point);
    losses_.push_back(loss);
    progress_.set_iteration(iteration + 1);
    progress_.set_loss(loss);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - started_);
    const double rate =
        seconds > 0 ? (iteration + 1 - first_iteration_) * spec_.global_batch_size() / seconds : 0;
    progress_.set_samples_per_second(rate);
    if (total_iterations_ > 0 && rate > 0) {
      progress_.set_eta_seconds((total_iterations_ - iteration - 1) * spec_.global_batch_size() /
                                rate);
    }
  }
  return absl::OkStatus();
}

absl::Status JobRun::WaitForReports() {
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return !failure_.ok() ||
             (planning_done_ && progress_.iteration() == first_iteration_ + planned_);
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
      return !failure_.ok() || progress_.iteration() > iteration;
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&reported), options_.poll) && failure_.ok()) {
      return absl::OkStatus();
    }
  }
}

absl::Status JobRun::EvaluateAt(uint64_t iteration) {
  if (eval_batches_.empty()) return absl::OkStatus();
  const absl::Time start = absl::Now();
  HERALD_RETURN_IF_ERROR(WaitForIteration(iteration));
  const uint32_t workers = static_cast<uint32_t>(workers_.size());
  {
    absl::MutexLock lock(&mu_);
    eval_round_ = std::make_unique<EvalRound>(iteration + 1, eval_batch_sizes_, workers);
  }
  for (uint32_t b = 0; b < eval_batches_.size(); ++b) {
    auto step = std::make_shared<proto::WorkerStep>();
    step->set_job_id(job_id_);
    step->set_iteration(iteration + 1);
    *step->mutable_eval() = eval_batches_[b];
    HERALD_RETURN_IF_ERROR(Enqueue(EvalRound::WorkerOf(b, workers), std::move(step)));
  }
  for (;;) {
    HERALD_RETURN_IF_ERROR(Health());
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return !failure_.ok() || eval_round_->complete();
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&done), options_.poll) && failure_.ok()) break;
  }
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  absl::MutexLock lock(&mu_);
  const EvalResult r = eval_round_->Compute(eval_labels_);
  eval_round_.reset();
  progress_.set_eval_auc(r.auc);
  progress_.set_eval_logloss(r.logloss);
  progress_.set_eval_iteration(iteration + 1);
  progress_.set_eval_samples(r.samples);
  progress_.set_evals_done(progress_.evals_done() + 1);
  progress_.set_eval_ms(progress_.eval_ms() + ms);
  history_.AddEval(iteration, absl::ToUnixMillis(absl::Now()), r.auc, r.logloss);
  HLOG_INFO(
      "job {}: after iteration {}: held-out AUC {:.6f}, log loss {:.6f} over {} samples "
      "({:.0f} ms)",
      job_id_, iteration, r.auc, r.logloss, r.samples, ms);
  return absl::OkStatus();
}

absl::Status JobRun::ReportEval(const proto::EvalReport& report) {
  const int w = WorkerIndex(report.node_id());
  if (w < 0) {
    return absl::NotFoundError(absl::StrCat(report.node_id(), " is not a worker of ", job_id_));
  }
  absl::MutexLock lock(&mu_);
  if (eval_round_ == nullptr || eval_round_->iteration() != report.iteration()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id_, " runs no evaluation before iteration ", report.iteration()));
  }
  return eval_round_->Accept(static_cast<uint32_t>(w), report.index(), report.predictions());
}

std::unique_ptr<Planner> JobRun::LoadPlanner(const PlannerOptions& options, uint64_t resume_at,
                                             proto::PlannerResume* mode) {
  ResumePoint point;
  {
    absl::MutexLock lock(&mu_);
    point.manifest = resumed_.manifest;
    point.planner_file = resumed_.planner_file;
    point.planner_bytes = resumed_.planner_bytes;
    point.planner_checksum = resumed_.planner_checksum;
  }
  if (point.planner_file.empty()) return nullptr;  // a checkpoint of an older version
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> bytes = ReadPlannerState(point);
  PlannerOptions at = options;
  at.first_iteration = resume_at;
  absl::StatusOr<std::unique_ptr<Planner>> loaded =
      bytes.ok() ? Planner::LoadState(at, *bytes) : bytes.status();
  if (!loaded.ok()) {
    HLOG_WARN("job {}: the planner state of {} is not usable ({}); replaying the planner instead",
              job_id_, point.manifest, std::string(loaded.status().message()));
    return nullptr;
  }
  HLOG_INFO("job {}: planner state loaded from {} ({} bytes) in {:.0f} ms", job_id_,
            point.planner_file, bytes->size(), absl::ToDoubleMilliseconds(absl::Now() - start));
  *mode = proto::PLANNER_RESUME_LOADED;
  return *std::move(loaded);
}

absl::StatusOr<std::unique_ptr<BatchStream>> JobRun::RestoreDataCursor(
    std::unique_ptr<BatchStream> stream, uint64_t resume_at) {
  ResumePoint point;
  {
    absl::MutexLock lock(&mu_);
    point.manifest = resumed_.manifest;
  }
  proto::DataResume mode = proto::DATA_RESUME_READ;
  absl::StatusOr<std::string> cursor = ReadDataCursor(point);
  absl::Status restored = cursor.ok() ? stream->RestoreCursor(*cursor) : cursor.status();
  if (restored.ok() && stream->batches() != resume_at) {
    restored = absl::DataLossError(
        absl::StrCat("the data cursor is after batch ", stream->batches(), ", not ", resume_at));
  }
  if (restored.ok()) {
    mode = proto::DATA_RESUME_CURSOR;
    HLOG_INFO("job {}: data stream resumed after batch {} from its cursor", job_id_, resume_at);
  } else {
    HLOG_INFO("job {}: reading the data stream up to batch {} ({})", job_id_, resume_at,
              std::string(restored.message()));
    // A restore that failed may have moved the stream: start it afresh.
    if (cursor.ok()) {
      HERALD_ASSIGN_OR_RETURN(stream,
                              BatchStream::Open(StreamOptionsFromSpec(spec_, Split::kTrain)));
    }
  }
  absl::MutexLock lock(&mu_);
  progress_.set_data_resume(mode);
  return stream;
}

absl::Status JobRun::CheckpointAt(uint64_t iteration, const std::string& planner_state,
                                  const absl::StatusOr<std::string>& data_cursor) {
  const absl::Time start = absl::Now();
  HERALD_RETURN_IF_ERROR(WaitForIteration(iteration));
  // The dense half: what rank 0 uploaded before reporting the iteration.
  CheckpointDense dense;
  {
    absl::MutexLock lock(&mu_);
    auto it = checkpoint_dense_.find(iteration);
    if (it == checkpoint_dense_.end()) {
      return absl::InternalError(absl::StrCat("checkpoint of iteration ", iteration,
                                              ": worker 0 uploaded no dense state"));
    }
    dense = std::move(it->second);
    checkpoint_dense_.erase(checkpoint_dense_.begin(), std::next(it));
  }
  const std::string iteration_dir =
      checkpoint::CheckpointIterationDir(spec_.checkpoint().dir(), job_id_, iteration);
  HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(iteration_dir));
  checkpoint::DenseCheckpointFile dense_file;
  dense_file.file = "dense.bin";
  dense_file.floats = dense.floats.size() - dense.state_floats;
  dense_file.state_floats = dense.state_floats;
  const size_t bytes = dense.floats.size() * sizeof(float);
  dense_file.checksum = Crc32Hex(Crc32(dense.floats.data(), bytes));
  checkpoint::PlannerCheckpointFile planner_file;
  planner_file.file = "planner.bin";
  planner_file.bytes = planner_state.size();
  planner_file.checksum = Crc32Hex(Crc32(planner_state.data(), planner_state.size()));
  absl::StatusOr<std::string> manifest = absl::UnknownError("not written");
  absl::Status written = checkpoint::WriteFileAtomically(
      iteration_dir + "/" + dense_file.file,
      std::string_view(reinterpret_cast<const char*>(dense.floats.data()), bytes));
  if (written.ok()) {
    written =
        checkpoint::WriteFileAtomically(iteration_dir + "/" + planner_file.file, planner_state);
  }
  if (written.ok()) {
    manifest = CheckpointJob(*ps_, ManifestPartsAt(iteration, &dense_file, &planner_file),
                             spec_.checkpoint().dir());
  } else {
    manifest = written;
  }
  if (!manifest.ok()) {
    const absl::Status failed(
        manifest.status().code(),
        absl::StrCat("checkpoint of iteration ", iteration, ": ", manifest.status().message()));
    if (!RefusedByStorage(failed)) return failed;
    // Training goes on; the checkpoint before stays the newest complete one.
    RecordCheckpointFailure(failed, iteration);
    return absl::OkStatus();
  }
  // The data cursor, after the manifest: the shards' files need not wait for it, and a checkpoint
  // without it (a crash in between, a refused write) is still whole: a
  // resume from it reads its way to its place.
  uint64_t written_bytes = bytes + planner_state.size();
  if (data_cursor.ok()) {
    const absl::Time cursor_start = absl::Now();
    if (absl::Status s = WriteDataCursor(iteration_dir, *data_cursor); !s.ok()) {
      HLOG_WARN("job {}: the data cursor of iteration {} was not written: {}", job_id_, iteration,
                std::string(s.message()));
    } else {
      written_bytes += data_cursor->size();
      HLOG_INFO("job {}: data cursor after iteration {}: {} bytes written in {:.0f} ms", job_id_,
                iteration, data_cursor->size(),
                absl::ToDoubleMilliseconds(absl::Now() - cursor_start));
    }
  }
  double write_ms = 0;  // the slowest shard's
  if (absl::StatusOr<proto::CheckpointManifest> m = checkpoint::ReadManifest(*manifest); m.ok()) {
    for (const proto::CheckpointShard& shard : m->shards()) {
      written_bytes += shard.bytes();
      write_ms = std::max(write_ms, shard.write_ms());
    }
  }
  absl::StatusOr<int> pruned = checkpoint::PruneCheckpoints(spec_.checkpoint().dir(), job_id_,
                                                            spec_.checkpoint().keep_last());
  if (!pruned.ok()) HLOG_WARN("job {}: {}", job_id_, std::string(pruned.status().message()));
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  HLOG_INFO("job {}: checkpoint of iteration {} in {:.0f} ms: {}", job_id_, iteration, ms,
            *manifest);
  {
    absl::MutexLock lock(&mu_);
    progress_.set_last_checkpoint(*manifest);
    progress_.set_checkpoints_written(progress_.checkpoints_written() + 1);
    progress_.set_checkpoint_ms(progress_.checkpoint_ms() + ms);
    progress_.set_checkpoint_bytes(progress_.checkpoint_bytes() + written_bytes);
    progress_.set_checkpoint_write_ms(progress_.checkpoint_write_ms() + write_ms);
  }
  if (options_.on_checkpoint) options_.on_checkpoint();
  return absl::OkStatus();
}

checkpoint::ManifestParts JobRun::ManifestPartsAt(
    uint64_t iteration, const checkpoint::DenseCheckpointFile* dense,
    const checkpoint::PlannerCheckpointFile* planner) const {
  checkpoint::ManifestParts parts;
  parts.job_id = job_id_;
  parts.iteration = iteration;
  parts.spec = spec_;
  parts.num_workers = static_cast<uint32_t>(workers_.size());
  parts.dense = dense;
  parts.planner = planner;
  return parts;
}

absl::StatusOr<std::string> JobRun::FinalCheckpoint() {
  uint64_t iteration = 0;
  std::vector<float> dense;
  {
    absl::MutexLock lock(&mu_);
    iteration = total_iterations_ - 1;
    dense = dense_;
  }
  const std::string iteration_dir =
      checkpoint::CheckpointIterationDir(spec_.checkpoint().dir(), job_id_, iteration);
  HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(iteration_dir));
  checkpoint::DenseCheckpointFile dense_file;
  dense_file.file = "dense.bin";
  dense_file.floats = dense.size();
  dense_file.final = true;
  const size_t bytes = dense.size() * sizeof(float);
  dense_file.checksum = Crc32Hex(Crc32(dense.data(), bytes));
  HERALD_RETURN_IF_ERROR(checkpoint::WriteFileAtomically(
      iteration_dir + "/" + dense_file.file,
      std::string_view(reinterpret_cast<const char*>(dense.data()), bytes)));
  return CheckpointJob(*ps_, ManifestPartsAt(iteration, &dense_file), spec_.checkpoint().dir());
}

bool JobRun::RefusedByStorage(const absl::Status& status) {
  return absl::IsResourceExhausted(status) || absl::IsPermissionDenied(status);
}

void JobRun::RecordCheckpointFailure(const absl::Status& status, uint64_t iteration) {
  std::error_code ignored;  // what the shards wrote of it: never a complete checkpoint
  std::filesystem::remove_all(
      checkpoint::CheckpointIterationDir(spec_.checkpoint().dir(), job_id_, iteration), ignored);
  HLOG_ERROR("job {}: {}; training goes on, the newest complete checkpoint is still {}", job_id_,
             std::string(status.message()), Progress().last_checkpoint());
  absl::MutexLock lock(&mu_);
  progress_.set_checkpoint_failures(progress_.checkpoint_failures() + 1);
  progress_.set_checkpoint_error(std::string(status.message()));
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
  if (s.ok() && !spec_.checkpoint().dir().empty()) {
    absl::StatusOr<std::string> manifest = FinalCheckpoint();
    if (manifest.ok()) {
      HLOG_INFO("job {}: checkpoint {}", job_id_, *manifest);
      checkpoint::PruneCheckpoints(spec_.checkpoint().dir(), job_id_,
                                   spec_.checkpoint().keep_last())
          .status()
          .IgnoreError();
      absl::MutexLock lock(&mu_);
      progress_.set_last_checkpoint(*manifest);
      progress_.set_checkpoints_written(progress_.checkpoints_written() + 1);
    } else {
      const absl::Status failed(manifest.status().code(),
                                absl::StrCat("final checkpoint: ", manifest.status().message()));
      if (RefusedByStorage(failed)) {
        uint64_t last = 0;
        {
          absl::MutexLock lock(&mu_);
          last = total_iterations_ - 1;
        }
        RecordCheckpointFailure(failed, last);  // the model stays exportable
      } else {
        s = failed;
      }
    }
  }
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
    checkpoint_dense_[meta.iteration] = {std::move(values), meta.state_floats};
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
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (final_crc_[w] != uploaded) {
      return absl::DataLossError(
          absl::StrCat("dense replicas differ after the last iteration: worker ", w, " (",
                       workers_[w].node_id, ") reported CRC ", Crc32Hex(final_crc_[w]),
                       ", worker 0 uploaded parameters with CRC ", Crc32Hex(uploaded)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<proto::ExportJobResponse> JobRun::Export(const std::string& out_dir) {
  TrainedModel model;
  model.job_id = job_id_;
  model.spec = spec_;
  model.num_workers = static_cast<uint32_t>(workers_.size());
  {
    absl::MutexLock lock(&mu_);
    if (!failure_.ok() || !planning_done_ || progress_.iteration() != first_iteration_ + planned_) {
      return absl::FailedPreconditionError(absl::StrCat("job ", job_id_, " did not succeed"));
    }
    model.iterations = progress_.iteration();
    model.dense = dense_;
  }
  absl::MutexLock lock(&ps_mu_);
  if (ended_on_ps_) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id_,
                     "'s tables were dropped from the PS shards when a later job started, "
                     "and it has no final checkpoint (checkpoint.dir) to export from"));
  }
  return WriteModelExport(model, ps_.get(), out_dir);
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
  proto::JobProgress p = progress_;
  p.set_total_iterations(total_iterations_);
  return p;
}

std::vector<double> JobRun::Losses() const {
  absl::MutexLock lock(&mu_);
  return losses_;
}

std::vector<proto::HistoryPoint> JobRun::History() const {
  absl::MutexLock lock(&mu_);
  return history_.points();
}

}  // namespace herald::scheduler
