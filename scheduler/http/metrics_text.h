#pragma once
// Prometheus text exposition (format 0.0.4) of the scheduler's state:
// jobs by state, the progress of every job (iteration, samples/s, loss,
// cache hit rate, rows fetched/pushed/written back and the vanilla
// estimate, worker time per phase), the running job's step queue depths and
// PS shard memory/counters, and the registered nodes. Metric names and
// labels: docs/operations.md.

#include <string>
#include <vector>

#include "proto/scheduler.pb.h"
#include "scheduler/jobs/job_manager.h"

namespace herald::scheduler {

std::string RenderMetrics(const JobManager::Snapshot& snapshot,
                          const std::vector<proto::NodeStatus>& nodes);

}  // namespace herald::scheduler
