#pragma once
// The small Wide&Deep job the cluster tests train: 26 tables of dim 4 over
// 4000 generated samples (cardinality scale 0.002), Adam dense, Adagrad
// tables, global batch 64 on 2 workers, 10% held out. Fast enough to run
// several times per test on 2 cores.

#include <cstdint>
#include <string>

#include "proto/job.pb.h"

namespace herald::testing {

proto::JobSpec SmallWideAndDeepJob(const std::string& name, proto::PolicyKind policy,
                                   uint64_t iterations);

}  // namespace herald::testing
