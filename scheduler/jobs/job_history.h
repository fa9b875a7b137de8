#pragma once
// A job's history with memory independent of its length: one point per
// completed iteration until `capacity` points are held, then every other
// point is dropped and only every 2nd iteration is kept from then on (then
// every 4th, ...). The points kept are always iterations that are multiples
// of the current stride, so they stay evenly spaced and the newest one is
// at most one stride old. Evaluations (few, and each one matters) are kept
// apart, up to `capacity` of them (past that every other older one is
// dropped), so thinning the training points never loses one. Not
// thread-safe (JobRun holds it under its lock).

#include <cstdint>
#include <string>
#include <vector>

#include "proto/scheduler.pb.h"

namespace herald::scheduler {

class JobHistory {
 public:
  // REQUIRES: capacity >= 2.
  explicit JobHistory(size_t capacity);

  // A point at or before the newest one replaces every point from its
  // iteration on (a run resumed from a checkpoint trains them again).
  void Add(const proto::HistoryPoint& point);
  // The evaluation after `iteration`, each judged label's metrics, and the
  // files it scored (eval.each_file; empty: the held-out samples);
  // replaces later ones likewise.
  void AddEval(uint64_t iteration, int64_t unix_ms, const std::vector<proto::LabelMetrics>& labels,
               const std::vector<std::string>& files = {});
  // Continues an earlier run's history (points() of it, e.g. as stored).
  void Continue(const std::vector<proto::HistoryPoint>& earlier);

  // The training points with the evaluations merged in, by iteration: an
  // evaluation after a kept iteration sets that point's eval fields, any
  // other is a point of its own (iteration, time and eval fields only).
  std::vector<proto::HistoryPoint> points() const;

  // A point's evaluation fields: every label's metrics (eval_labels), the
  // first binary label's AUC and log loss (eval_auc, eval_logloss), and the
  // files scored (eval_files).
  static void SetEvalFields(const std::vector<proto::LabelMetrics>& labels,
                            proto::HistoryPoint* point, const std::vector<std::string>& files = {});
  // Whether an evaluation ran after the point's iteration (a history stored
  // before eval_labels has only eval_auc and eval_logloss).
  static bool HasEval(const proto::HistoryPoint& point);
  uint64_t stride() const { return stride_; }

 private:
  size_t capacity_;
  uint64_t stride_ = 1;
  std::vector<proto::HistoryPoint> points_;
  std::vector<proto::HistoryPoint> evals_;
};

}  // namespace herald::scheduler
