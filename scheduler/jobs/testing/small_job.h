#pragma once
// A small valid job for tests of the scheduler's job machinery: Wide&Deep,
// 26 tables of dim 2, SGD, 2 000 generated rows of low cardinality, the
// herald policy, global batch 32 over `num_workers` workers.

#include <cstdint>

#include "proto/job.pb.h"

namespace herald::scheduler::testing {

proto::JobSpec SmallJobSpec(uint64_t iterations, uint32_t num_workers = 2);

}  // namespace herald::scheduler::testing
