#pragma once
// Which collective a job's workers all-reduce their dense gradients with:
// NCCL when every worker registered as a CUDA worker with a GPU of its own
// (NCCL does not support two ranks on one GPU), Gloo otherwise (CUDA
// workers then copy through host memory). A single worker needs neither;
// it gets Gloo, which it never connects.

#include <vector>

#include "proto/scheduler.pb.h"

namespace herald::scheduler {

proto::DenseCollective ChooseDenseCollective(const std::vector<proto::RegisterRequest>& workers);

}  // namespace herald::scheduler
