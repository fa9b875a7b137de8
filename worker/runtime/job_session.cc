#include "worker/runtime/job_session.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cluster/dense_upload.h"
#include "common/logging.h"
#include "common/status.h"
#include "plan/step_codec.h"
#include "worker/runtime/step_stream.h"
#include "worker/runtime/worker_replica.h"

namespace herald::worker {

JobSession::JobSession(proto::JoinJobResponse join, std::string node_id,
                       cluster::SchedulerClient* scheduler, const WorkerAgentOptions& options,
                       JobSessionConnectors connectors)
    : join_(std::move(join)),
      node_id_(std::move(node_id)),
      scheduler_(scheduler),
      options_(options),
      connectors_(std::move(connectors)) {}

void JobSession::Stop() {
  uint64_t iteration = 0;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // A step being executed finishes first; Run abandons after it.
    if (stream_ == nullptr || executing_) return;
    iteration = next_iteration_;
  }
  Abandon(iteration);
}

void JobSession::Abandon(uint64_t iteration) {
  {
    absl::MutexLock lock(&mu_);
    if (abandoned_ || stream_ == nullptr) return;
    abandoned_ = true;
  }
  // Report before closing the stream, so the job fails with this reason.
  ReportError(iteration,
              absl::StrCat("the worker shut down before iteration ", iteration, " (SIGTERM)"));
  absl::MutexLock lock(&mu_);
  if (stream_ != nullptr) stream_->Cancel();
}

bool JobSession::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

absl::Status JobSession::Evaluate(HeldOutScorer& scorer, const proto::WorkerStep& step) {
  absl::StatusOr<std::vector<float>> predictions = scorer.Score(step.eval(), step.iteration());
  if (!predictions.ok()) {
    return Annotate(predictions.status(),
                    absl::StrCat("scoring held-out batch ", step.eval().index()));
  }
  proto::EvalReport report;
  report.set_node_id(node_id_);
  report.set_job_id(step.job_id());
  report.set_run_id(join_.run_id());
  report.set_iteration(step.iteration());
  report.set_index(step.eval().index());
  report.set_predictions(predictions->data(), predictions->size() * sizeof(float));
  return Annotate(scheduler_->ReportEval(report), "reporting an evaluation");
}

void JobSession::ReportError(uint64_t iteration, const std::string& error) {
  {
    // The steps before go first, so the error is the run's last word. Held
    // under mu_: Run destroys the reporter only after clearing reporter_.
    absl::MutexLock lock(&mu_);
    if (reporter_ != nullptr) reporter_->Flush().IgnoreError();  // a failure reported its own
  }
  SendError(iteration, error);
}

void JobSession::SendError(uint64_t iteration, const std::string& error) {
  proto::StepReport report;
  report.set_node_id(node_id_);
  report.set_job_id(join_.job_id());
  report.set_run_id(join_.run_id());
  report.set_iteration(iteration);
  report.set_error(error);
  const absl::Status s = scheduler_->ReportStep(report);
  if (!s.ok()) HLOG_WARN("reporting the error to the scheduler: {}", s.ToString());
}

absl::Status JobSession::Run() {
  const proto::JoinJobResponse& join = join_;
  const proto::JobSpec& spec = join.spec();
  std::vector<uint32_t> slots;
  for (uint64_t s : join.table_slots()) slots.push_back(static_cast<uint32_t>(s));
  if (slots.empty()) slots.assign(spec.tables_size(), static_cast<uint32_t>(join.cache_slots()));
  uint64_t iteration = join.first_iteration();  // the next iteration this worker expects
  auto fail = [&](const absl::Status& s) {
    ReportError(iteration, s.ToString());
    return s;
  };
  absl::StatusOr<JobPsClient> ps = connectors_.connect_ps(join);
  if (!ps.ok()) return fail(ps.status());
  std::unique_ptr<KvStore> store = connectors_.rendezvous(join);
  ReplicaOptions replica_options;
  replica_options.device = options_.device;
  replica_options.device_options = options_.device_options;
  replica_options.collective = join.dense_collective();
  replica_options.collective_options.gloo.hostname = options_.gloo_host;
  replica_options.collective_options.gloo.prefix = "gloo";
  replica_options.collective_options.nccl_prefix = "nccl";
  replica_options.overlap = options_.overlap;
  replica_options.all_reduce_bucket_bytes = options_.all_reduce_bucket_bytes;
  replica_options.prefetch_steps = options_.prefetch_steps;
  replica_options.check_threads = options_.check_threads;
  // Hand-offs travel the way the rows do (UCX where the data path is).
  replica_options.ucx_exchange = ps->over_ucx;
  replica_options.token = options_.token;
  replica_options.ucx.loopback_only = absl::StartsWith(options_.gloo_host, "127.");
  replica_options.ucx.shared_memory = options_.ucx_shared_memory;
  WorkerReplica replica;
  if (absl::Status s = replica.Init(spec, join.rank(), join.num_workers(), slots, ps->client.get(),
                                    store.get(), replica_options);
      !s.ok()) {
    return fail(s);
  }
  if (!join.initial_dense().empty()) {  // a job resumed from a checkpoint
    if (absl::Status s = replica.LoadDense(join.initial_dense(), join.initial_dense_state());
        !s.ok()) {
      return fail(s);
    }
  }

  proto::WorkerStepsRequest request;
  request.set_node_id(node_id_);
  request.set_job_id(join.job_id());
  request.set_run_id(join.run_id());
  std::unique_ptr<cluster::StepReader> reader = scheduler_->OpenSteps(request);
  bool stopped;
  {
    absl::MutexLock lock(&mu_);
    stopped = stopping_;
    if (!stopped) {
      stream_ = reader.get();
      next_iteration_ = iteration;
    }
  }
  // Outside mu_: reporting the error takes it (ReportError).
  if (stopped) return fail(absl::CancelledError("the worker is shutting down"));
  auto forget_reporter = [this] {
    absl::MutexLock lock(&mu_);
    reporter_ = nullptr;
  };
  // Read ahead: the step after the current one, where it arrived already,
  // lets the executor start that step's early fetches now.
  // Work in flight is called off only when the job cannot go on: the
  // stream ended with an error (the job failed or was cancelled there, or
  // the scheduler is gone; over shared memory a dead shard would otherwise
  // hold this worker until a call's deadline), this worker's step failed, or
  // the worker shuts down. A stream that ends OK has delivered every step,
  // and the steps read ahead still run.
  auto call_off = [ps = ps->client.get(),
                   exchanger = replica.exchanger.get()](const std::string& why) {
    ps->Cancel(why);
    if (exchanger != nullptr) exchanger->Cancel(why);
  };
  // The stream's thread also decodes each training step as it arrives, and
  // prepares what needs no cache state (the rows it initialises).
  const int tables = spec.tables_size();
  const int num_dense = spec.num_dense();
  std::optional<StepStream> steps(
      std::in_place, reader.get(),
      [call_off](const absl::Status& end) {
        if (end.ok()) return;
        call_off(absl::StrCat("the scheduler ended this job's step stream: ", end.message()));
      },
      /*ahead=*/std::max<size_t>(2, options_.prefetch_steps),
      [tables, num_dense, executor = replica.executor.get()](const proto::WorkerStep& wire) {
        absl::StatusOr<plan::Step> step = plan::DecodeWorkerStep(wire, tables, num_dense);
        if (step.ok()) executor->PrepareAhead(&*step);
        return step;
      });
  // Commits (handed off by the executor, with overlap) and reports each
  // step behind the next one (without overlap, each report is waited for). A failure there is
  // reported at once, and calls off what this worker has in flight, so the step running fails fast.
  StepReporter reporter(scheduler_, [this, call_off](uint64_t failed, const absl::Status& error) {
    SendError(failed, error.ToString());
    call_off(
        absl::StrCat("committing or reporting iteration ", failed, " failed: ", error.message()));
  });
  auto commit_of = [ps = ps->client.get(), &join](uint64_t step,
                                                  std::vector<ps::TableKeys> expire) {
    return StepReporter::Commit(
        [ps, &join, step, expire = std::move(expire)]() -> absl::StatusOr<ps::PsDiskReads> {
          ps::PsDiskReads reads;
          HERALD_RETURN_IF_ERROR(ps->IterationDone(join.job_id(), Iteration(step),
                                                   WorkerRank(join.rank()), join.num_workers(),
                                                   &reads, &expire)
                                     .status());
          return reads;
        });
  };
  if (options_.overlap) {  // the executor hands each step's commit to the reporter
    replica.executor->StartCommitsWith([&reporter, commit_of](const plan::Step& step) {
      return reporter.StartCommit(step.iteration,
                                  commit_of(step.iteration, StepExecutor::ExpiredRows(step)));
    });
  }
  {
    absl::MutexLock lock(&mu_);
    reporter_ = &reporter;
  }
  HeldOutScorer scorer(spec, join.job_id(), ps->client.get(), replica.model.get(),
                       replica.device.get());
  StepStream::Arrived arrived;
  const proto::WorkerStep& wire = arrived.wire;
  bool last = false;
  absl::Status outcome;
  bool stop_after_step = false;
  // After the last step only evaluations follow, until the scheduler ends
  // the stream. `ready`: since when this worker has waited for a step.
  absl::Time ready = absl::Now();
  while (!stop_after_step && steps->Next(&arrived)) {
    const double step_wait_ms = absl::ToDoubleMilliseconds(absl::Now() - ready);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_ && !last) break;  // Stop() abandons this iteration
      executing_ = true;
    }
    if (wire.iteration() != iteration) {
      outcome = absl::InternalError(
          absl::StrCat("step for iteration ", wire.iteration(), ", expected ", iteration));
      break;
    }
    if (wire.has_eval()) {
      outcome = reporter.Flush();  // the scheduler has every report before the scores
      if (outcome.ok()) outcome = Evaluate(scorer, wire);
      if (!outcome.ok()) break;
      ready = absl::Now();
      absl::MutexLock lock(&mu_);
      executing_ = false;
      continue;
    }
    if (last) {
      outcome = absl::InternalError(
          absl::StrCat("a training step for iteration ", iteration, " after the last one"));
      break;
    }
    // Decoded by the stream's thread (the time that took is the step's decode time).
    absl::StatusOr<plan::Step> step = arrived.decoded.has_value()
                                          ? std::move(*arrived.decoded)
                                          : plan::DecodeWorkerStep(wire, tables, num_dense);
    const double decode_ms = arrived.decode_ms;
    // The steps after, where they arrived: the executor starts their early
    // fetches, and checks and packs the next one, during this step (an
    // error in one surfaces when it runs).
    std::vector<const plan::Step*> ahead;
    for (size_t k = 1; step.ok() && options_.overlap && k <= options_.prefetch_steps; ++k) {
      StepStream::Arrived* peek = steps->Peek(k);
      if (peek == nullptr || peek->wire.has_eval() || peek->wire.iteration() != iteration + k ||
          !peek->decoded.has_value() || !peek->decoded->ok()) {
        break;
      }
      ahead.push_back(&**peek->decoded);
    }
    absl::StatusOr<StepResult> result =
        step.ok() ? replica.executor->Run(*step, ahead) : absl::StatusOr<StepResult>(step.status());
    if (!result.ok()) {
      outcome = result.status();
      break;
    }
    if (wire.checkpoint() && !wire.last() && join.rank() == 0) {
      // A consistent checkpoint follows this step: its dense half.
      const absl::Status up = scheduler_->UploadCheckpointDense(
          node_id_, join.job_id(), join.run_id(), iteration,
          replica.model->params().values().ToHost(),
          replica.optimizer ? replica.optimizer->state().ToHost() : std::vector<float>());
      if (!up.ok()) {
        outcome = Annotate(up, "uploading the dense state for the checkpoint");
        break;
      }
    }
    uint32_t dense_crc = 0;
    if (wire.last()) {
      // The model is final: rank 0 uploads it (for export) before reporting,
      // every rank reports its CRC (the scheduler checks they agree).
      const std::vector<float> dense = replica.model->params().values().ToHost();
      dense_crc = cluster::DenseCrc32(dense);
      if (join.rank() == 0) {
        const absl::Status up =
            scheduler_->UploadDense(node_id_, join.job_id(), join.run_id(), dense);
        if (!up.ok()) {
          outcome = Annotate(up, "uploading the dense parameters");
          break;
        }
      }
    }
    proto::StepReport report;
    report.set_node_id(node_id_);
    report.set_job_id(join.job_id());
    report.set_run_id(join.run_id());
    report.set_iteration(iteration);
    report.set_loss_sum(result->loss_sum);
    report.set_num_samples(result->num_samples);
    report.set_fetch_ms(result->times.fetch_ms);
    report.set_compute_ms(result->times.compute_ms);
    report.set_allreduce_ms(result->times.allreduce_ms);
    report.set_push_ms(result->times.push_ms);
    report.set_writeback_ms(result->times.writeback_ms);
    report.set_bytes_moved(result->bytes_moved);
    report.set_rows_prefetched(result->rows_prefetched);
    report.set_dense_crc32(dense_crc);
    report.set_step_wait_ms(step_wait_ms);
    report.set_device_ms(result->device_ms);
    report.set_decode_ms(decode_ms);
    report.set_stage_ms(result->times.stage_ms);
    // Where the reporter committed: commit_ms and the disk reads are its.
    report.set_commit_ms(result->times.commit_ms);
    report.set_ps_disk_rows_critical(result->ps_disk_reads.critical);
    report.set_ps_disk_rows_ahead(result->ps_disk_reads.ahead);
    absl::Status r = reporter.Submit(std::move(report));
    if (r.ok() && !options_.overlap) r = reporter.Flush();
    if (!r.ok()) {
      outcome = Annotate(r, "reporting the step");
      break;
    }
    last = wire.last();
    ++iteration;
    ready = absl::Now();
    absl::MutexLock lock(&mu_);
    executing_ = false;
    next_iteration_ = iteration;
    stop_after_step = stopping_ && !last;
  }
  if (!last && (stop_after_step || stopping())) Abandon(iteration);
  bool abandoned;
  {
    absl::MutexLock lock(&mu_);
    stream_ = nullptr;
    executing_ = false;
    abandoned = abandoned_;
  }
  if (!outcome.ok() && !abandoned) ReportError(iteration, outcome.ToString());  // first: its reason
  forget_reporter();
  if (abandoned) {
    // Calls still in flight (an early fetch waiting for a commit that will
    // not come, an exchange with a peer that moved on) end now.
    call_off("this worker shut down");
    steps.reset();  // the stream was cancelled (Abandon): this finishes it
    return absl::CancelledError(absl::StrCat("the worker shut down before iteration ", iteration));
  }
  if (!outcome.ok()) {
    // Reported first (above): the job fails with this reason, not with the
    // closed stream.
    call_off("this worker's step failed");
    reader->Cancel();
    steps.reset();
    return outcome;
  }
  if (stop_after_step || stopping()) reader->Cancel();
  const absl::Status stream = steps->Finish();
  steps.reset();
  if (last) {
    // The scheduler ends the stream when the run ends: an error here is the
    // job's failure after this worker's last step (another worker's, or a
    // check of the final model), not this worker's.
    if (!stream.ok() && !stopping()) {
      HLOG_WARN("job {}: step stream after the last step: {}", join.job_id(), stream.ToString());
    }
    return absl::OkStatus();
  }
  // The scheduler ended the stream: the job failed or was cancelled there.
  return stream.ok() ? absl::InternalError("the step stream ended before the last step") : stream;
}

}  // namespace herald::worker
