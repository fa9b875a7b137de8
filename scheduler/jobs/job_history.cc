#include "scheduler/jobs/job_history.h"

#include <algorithm>

namespace herald::scheduler {

JobHistory::JobHistory(size_t capacity) : capacity_(std::max<size_t>(2, capacity)) {}

void JobHistory::Add(const proto::HistoryPoint& point) {
  while (!points_.empty() && points_.back().iteration() >= point.iteration()) points_.pop_back();
  if (point.iteration() % stride_ != 0) return;
  points_.push_back(point);
  while (points_.size() > capacity_) {
    stride_ *= 2;
    points_.erase(std::remove_if(points_.begin(), points_.end(),
                                 [this](const proto::HistoryPoint& p) {
                                   return p.iteration() % stride_ != 0;
                                 }),
                  points_.end());
  }
}

void JobHistory::SetEvalFields(const std::vector<proto::LabelMetrics>& labels,
                               proto::HistoryPoint* point, const std::vector<std::string>& files) {
  point->clear_eval_files();
  for (const std::string& f : files) point->add_eval_files(f);
  point->clear_eval_labels();
  point->clear_eval_auc();
  point->clear_eval_logloss();
  for (const proto::LabelMetrics& m : labels) {
    *point->add_eval_labels() = m;
    if (!m.regression() && !point->has_eval_auc()) {
      point->set_eval_auc(m.auc());
      point->set_eval_logloss(m.logloss());
    }
  }
}

bool JobHistory::HasEval(const proto::HistoryPoint& point) {
  return point.eval_labels_size() > 0 || point.has_eval_auc();
}

namespace {

// A point's judged labels; one stored before eval_labels: its one label's.
std::vector<proto::LabelMetrics> EvalLabelsOf(const proto::HistoryPoint& p) {
  std::vector<proto::LabelMetrics> labels(p.eval_labels().begin(), p.eval_labels().end());
  if (labels.empty() && p.has_eval_auc()) {
    labels.emplace_back();
    labels.back().set_label("label");
    labels.back().set_auc(p.eval_auc());
    labels.back().set_logloss(p.eval_logloss());
  }
  return labels;
}

}  // namespace

void JobHistory::AddEval(uint64_t iteration, int64_t unix_ms,
                         const std::vector<proto::LabelMetrics>& labels,
                         const std::vector<std::string>& files) {
  while (!evals_.empty() && evals_.back().iteration() >= iteration) evals_.pop_back();
  proto::HistoryPoint e;
  e.set_iteration(iteration);
  e.set_unix_ms(unix_ms);
  SetEvalFields(labels, &e, files);
  evals_.push_back(e);
  if (evals_.size() <= capacity_) return;
  // Drop every other one, oldest first, keeping the newest.
  std::vector<proto::HistoryPoint> kept;
  for (size_t i = 0; i + 1 < evals_.size(); i += 2) kept.push_back(std::move(evals_[i]));
  if (evals_.size() % 2 == 0) kept.push_back(std::move(evals_.back()));
  evals_ = std::move(kept);
}

void JobHistory::Continue(const std::vector<proto::HistoryPoint>& earlier) {
  for (const proto::HistoryPoint& p : earlier) {
    if (p.workers_size() > 0) {  // a training point (with or without an evaluation)
      proto::HistoryPoint trained = p;
      SetEvalFields({}, &trained);
      Add(trained);
    }
    if (HasEval(p)) {
      AddEval(p.iteration(), p.unix_ms(), EvalLabelsOf(p),
              {p.eval_files().begin(), p.eval_files().end()});
    }
  }
}

std::vector<proto::HistoryPoint> JobHistory::points() const {
  std::vector<proto::HistoryPoint> merged;
  merged.reserve(points_.size() + evals_.size());
  size_t e = 0;
  for (const proto::HistoryPoint& p : points_) {
    for (; e < evals_.size() && evals_[e].iteration() < p.iteration(); ++e) {
      merged.push_back(evals_[e]);
    }
    merged.push_back(p);
    if (e < evals_.size() && evals_[e].iteration() == p.iteration()) {
      SetEvalFields({evals_[e].eval_labels().begin(), evals_[e].eval_labels().end()},
                    &merged.back(), {evals_[e].eval_files().begin(), evals_[e].eval_files().end()});
      ++e;
    }
  }
  for (; e < evals_.size(); ++e) merged.push_back(evals_[e]);
  return merged;
}

}  // namespace herald::scheduler
