#pragma once
// Pieces of the job specs tests train.

#include "proto/job.pb.h"

namespace herald::testing {

// The optimizers most tests train with: Adam for the dense network at
// `dense_lr`, Adagrad for the embedding tables at `sparse_lr`.
void UseAdamAndAdagrad(proto::JobSpec* spec, float dense_lr, float sparse_lr);

}  // namespace herald::testing
