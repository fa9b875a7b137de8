#include "scheduler/jobs/job_progress.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {
namespace {

// One phase of a worker's step: the report's time, the job's running sum
// and the history point's per-worker figure. Adding a phase is a line here
// (and its three proto fields).
struct WorkerPhase {
  double (proto::StepReport::*reported)() const;
  double (proto::JobProgress::*sum)() const;
  void (proto::JobProgress::*set_sum)(double);
  void (proto::WorkerPhases::*set_point)(double);
};

constexpr WorkerPhase kWorkerPhases[] = {
    {&proto::StepReport::fetch_ms, &proto::JobProgress::worker_fetch_ms,
     &proto::JobProgress::set_worker_fetch_ms, &proto::WorkerPhases::set_fetch_ms},
    {&proto::StepReport::compute_ms, &proto::JobProgress::worker_compute_ms,
     &proto::JobProgress::set_worker_compute_ms, &proto::WorkerPhases::set_compute_ms},
    {&proto::StepReport::allreduce_ms, &proto::JobProgress::worker_allreduce_ms,
     &proto::JobProgress::set_worker_allreduce_ms, &proto::WorkerPhases::set_allreduce_ms},
    {&proto::StepReport::push_ms, &proto::JobProgress::worker_push_ms,
     &proto::JobProgress::set_worker_push_ms, &proto::WorkerPhases::set_push_ms},
    {&proto::StepReport::writeback_ms, &proto::JobProgress::worker_writeback_ms,
     &proto::JobProgress::set_worker_writeback_ms, &proto::WorkerPhases::set_writeback_ms},
    {&proto::StepReport::step_wait_ms, &proto::JobProgress::worker_step_wait_ms,
     &proto::JobProgress::set_worker_step_wait_ms, &proto::WorkerPhases::set_step_wait_ms},
    {&proto::StepReport::decode_ms, &proto::JobProgress::worker_decode_ms,
     &proto::JobProgress::set_worker_decode_ms, &proto::WorkerPhases::set_decode_ms},
    {&proto::StepReport::stage_ms, &proto::JobProgress::worker_stage_ms,
     &proto::JobProgress::set_worker_stage_ms, &proto::WorkerPhases::set_stage_ms},
    {&proto::StepReport::commit_ms, &proto::JobProgress::worker_commit_ms,
     &proto::JobProgress::set_worker_commit_ms, &proto::WorkerPhases::set_commit_ms},
    {&proto::StepReport::report_ms, &proto::JobProgress::worker_report_ms,
     &proto::JobProgress::set_worker_report_ms, &proto::WorkerPhases::set_report_ms},
    // Not a phase the step waits in: overlaps the others (summed the same way).
    {&proto::StepReport::device_ms, &proto::JobProgress::worker_device_ms,
     &proto::JobProgress::set_worker_device_ms, &proto::WorkerPhases::set_device_ms},
};

}  // namespace

JobProgressTracker::JobProgressTracker(uint32_t num_workers, uint32_t global_batch_size,
                                       uint64_t spec_iterations, size_t history_points,
                                       const std::vector<proto::HistoryPoint>& earlier,
                                       absl::Time started)
    : num_workers_(num_workers),
      global_batch_size_(global_batch_size),
      total_iterations_(spec_iterations),
      next_report_(num_workers, 0),
      sent_(num_workers, 0),
      final_crc_(num_workers, 0),
      history_(history_points),
      started_(started),
      last_point_time_(started) {
  history_.Continue(earlier);
}

void JobProgressTracker::StartAt(uint64_t first_iteration) {
  first_iteration_ = first_iteration;
  std::fill(next_report_.begin(), next_report_.end(), first_iteration);
  progress_.set_iteration(first_iteration);
  last_point_iteration_ = first_iteration;
}

void JobProgressTracker::Planned(const PlannedIteration& planned) {
  const PlanCounts& total = planned.total;
  if (planned_ == 0) last_point_iteration_ = planned.iteration;
  proto::HistoryPoint& point = pending_[planned.iteration].point;
  point.set_iteration(planned.iteration);
  point.set_rows_fetched(total.fetched);
  point.set_rows_pushed(total.pushed);
  point.set_rows_written_back(total.written_back);
  point.set_rows_transferred(total.transferred);
  point.set_rows_vanilla(2 * total.uses);
  point.set_keys_admitted(planned.keys_admitted);
  point.set_rows_expired(planned.expired_now);
  point.set_cache_hit_rate(total.uses == 0 ? 0.0 : static_cast<double>(total.hits) / total.uses);
  for (uint32_t w = 0; w < num_workers_; ++w) point.add_workers();
}

void JobProgressTracker::Queued(const PlannedIteration& planned, double encode_ms,
                                uint64_t malformed_lines) {
  const PlanCounts& total = planned.total;
  progress_.set_scheduler_encode_ms(progress_.scheduler_encode_ms() + encode_ms);
  progress_.set_malformed_lines(malformed_lines);
  progress_.set_scheduler_plan_ms(progress_.scheduler_plan_ms() + planned.plan_ms);
  ++planned_;
  progress_.set_iterations_planned(first_iteration_ + planned_);
  progress_.set_rows_fetched(progress_.rows_fetched() + total.fetched);
  progress_.set_rows_pushed(progress_.rows_pushed() + total.pushed);
  progress_.set_rows_written_back(progress_.rows_written_back() + total.written_back);
  progress_.set_rows_handed_off(progress_.rows_handed_off() + total.transferred);
  progress_.set_rows_initialized(progress_.rows_initialized() + total.initialized);
  progress_.set_keys_admitted(planned.keys_admitted);
  progress_.set_keys_waiting(planned.keys_waiting);
  progress_.set_lookups_dropped(planned.lookups_dropped);
  progress_.set_rows_expired(planned.rows_expired);
  progress_.set_rows_moved(progress_.rows_fetched() + progress_.rows_pushed() +
                           progress_.rows_written_back() + progress_.rows_handed_off());
  // Vanilla under exact BSP moves every used row both ways (docs/scheduler.md).
  rows_vanilla_ += 2 * total.uses;
  progress_.set_rows_moved_vanilla(rows_vanilla_);
  uses_ += total.uses;
  hits_ += total.hits;
  progress_.set_cache_hit_rate(uses_ == 0 ? 0.0 : static_cast<double>(hits_) / uses_);
  if (planned.last) {
    planning_done_ = true;
    total_iterations_ = first_iteration_ + planned_;
  }
}

absl::Status JobProgressTracker::Reported(uint32_t worker, const proto::StepReport& report,
                                          absl::Time now) {
  if (report.iteration() != next_report_[worker] ||
      report.iteration() >= first_iteration_ + sent_[worker]) {
    return absl::InvalidArgumentError(absl::StrCat("report of iteration ", report.iteration(),
                                                   " from worker ", worker, ": expected iteration ",
                                                   next_report_[worker]));
  }
  ++next_report_[worker];
  final_crc_[worker] = report.dense_crc32();  // the last report's is the one kept
  Pending& pending = pending_[report.iteration()];
  ++pending.reports;
  pending.loss_sum += report.loss_sum();
  proto::WorkerPhases* phases = pending.point.workers_size() > static_cast<int>(worker)
                                    ? pending.point.mutable_workers(worker)
                                    : nullptr;
  for (const WorkerPhase& phase : kWorkerPhases) {
    const double ms = (report.*phase.reported)();
    (progress_.*phase.set_sum)((progress_.*phase.sum)() + ms);
    if (phases != nullptr) (phases->*phase.set_point)(ms);
  }
  progress_.set_worker_bytes_moved(progress_.worker_bytes_moved() + report.bytes_moved());
  progress_.set_worker_rows_prefetched(progress_.worker_rows_prefetched() +
                                       report.rows_prefetched());
  progress_.set_ps_disk_rows_critical(progress_.ps_disk_rows_critical() +
                                      report.ps_disk_rows_critical());
  progress_.set_ps_disk_rows_ahead(progress_.ps_disk_rows_ahead() + report.ps_disk_rows_ahead());
  pending.point.set_ps_disk_rows_critical(pending.point.ps_disk_rows_critical() +
                                          report.ps_disk_rows_critical());
  pending.point.set_ps_disk_rows_ahead(pending.point.ps_disk_rows_ahead() +
                                       report.ps_disk_rows_ahead());
  CompleteReported(now);
  return absl::OkStatus();
}

void JobProgressTracker::CompleteReported(absl::Time now) {
  while (!pending_.empty() && pending_.begin()->second.reports == num_workers_) {
    const uint64_t iteration = pending_.begin()->first;
    const double loss = pending_.begin()->second.loss_sum / global_batch_size_;
    proto::HistoryPoint point = std::move(pending_.begin()->second.point);
    pending_.erase(pending_.begin());
    const double interval = absl::ToDoubleSeconds(now - last_point_time_);
    const uint64_t done = iteration + 1 - last_point_iteration_;
    point.set_unix_ms(absl::ToUnixMillis(now));
    point.set_loss(loss);
    point.set_samples_per_second(interval > 0 ? done * global_batch_size_ / interval : 0);
    last_point_time_ = now;
    last_point_iteration_ = iteration + 1;
    history_.Add(point);
    losses_.push_back(loss);
    progress_.set_iteration(iteration + 1);
    progress_.set_loss(loss);
    const double seconds = absl::ToDoubleSeconds(now - started_);
    const double rate =
        seconds > 0 ? (iteration + 1 - first_iteration_) * global_batch_size_ / seconds : 0;
    progress_.set_samples_per_second(rate);
    if (total_iterations_ > 0 && rate > 0) {
      progress_.set_eta_seconds((total_iterations_ - iteration - 1) * global_batch_size_ / rate);
    }
  }
}

void JobProgressTracker::Evaluated(uint64_t iteration, const EvalResult& result, double ms,
                                   absl::Time now, const std::vector<std::string>& files) {
  std::vector<proto::LabelMetrics> labels;
  bool first_binary = true;  // eval_auc and eval_logloss: the first binary label's
  for (const math::LabelMetrics& m : result) {
    proto::LabelMetrics& label = labels.emplace_back();
    label.set_label(m.label);
    label.set_regression(m.regression);
    if (m.regression) {
      label.set_rmse(m.rmse);
      continue;
    }
    label.set_auc(m.auc);
    label.set_logloss(m.logloss);
    if (first_binary) {
      progress_.set_eval_auc(m.auc);
      progress_.set_eval_logloss(m.logloss);
      first_binary = false;
    }
  }
  progress_.clear_eval_labels();
  for (const proto::LabelMetrics& label : labels) *progress_.add_eval_labels() = label;
  progress_.set_eval_iteration(iteration + 1);
  progress_.set_eval_samples(result.empty() ? 0 : result[0].samples);
  progress_.set_evals_done(progress_.evals_done() + 1);
  progress_.set_eval_ms(progress_.eval_ms() + ms);
  progress_.clear_eval_files();
  for (const std::string& f : files) progress_.add_eval_files(f);
  progress_.set_files_scored(progress_.files_scored() + files.size());
  history_.AddEval(iteration, absl::ToUnixMillis(now), labels, files);
}

proto::JobProgress JobProgressTracker::Progress() const {
  proto::JobProgress p = progress_;
  p.set_total_iterations(total_iterations_);
  return p;
}

}  // namespace herald::scheduler
