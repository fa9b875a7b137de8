#include "scheduler/service/job_history.h"

#include <algorithm>

namespace herald::scheduler {

JobHistory::JobHistory(size_t capacity) : capacity_(std::max<size_t>(2, capacity)) {}

void JobHistory::Add(const proto::HistoryPoint& point) {
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

}  // namespace herald::scheduler
