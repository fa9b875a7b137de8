#include "common/testing/job_spec_testing.h"

namespace herald::testing {

void UseAdamAndAdagrad(proto::JobSpec* spec, float dense_lr, float sparse_lr) {
  spec->mutable_dense_optimizer()->set_kind(proto::OPTIMIZER_ADAM);
  spec->mutable_dense_optimizer()->set_learning_rate(dense_lr);
  spec->mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_ADAGRAD);
  spec->mutable_sparse_optimizer()->set_learning_rate(sparse_lr);
}

}  // namespace herald::testing
