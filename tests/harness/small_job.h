#pragma once
// The cluster tests' jobs on generated Criteo-shaped data, written once:
// GeneratedJob holds every setting a test varies, each defaulting to the
// small Wide&Deep job (26 tables of dim 4 over 4000 samples, cardinality
// scale 0.002, Adam dense and Adagrad tables, global batch 64 on 2
// workers, 10% held out), fast enough to train several times per test on
// 2 cores. A test sets what differs and adds what only it needs (eval,
// checkpoints, scheduling options) to the spec it gets.

#include <cstdint>
#include <string>
#include <vector>

#include "proto/job.pb.h"

namespace herald::testing {

struct GeneratedJob {
  std::string name = "small";
  uint64_t seed = 5;
  proto::ModelKind model = proto::MODEL_WIDE_AND_DEEP;
  std::vector<uint32_t> top_mlp = {8};
  std::vector<uint32_t> bottom_mlp;  // DLRM's
  float dense_learning_rate = 0.01f;
  float sparse_learning_rate = 0.05f;
  int tables = 26;  // named C1, C2, ...
  uint32_t dim = 4;
  uint64_t rows = 4000;
  uint64_t data_seed = 9;
  double cardinality_scale = 0.002;
  float eval_fraction = 0.1f;
  uint32_t shuffle_buffer = 256;
  proto::PolicyKind policy = proto::POLICY_HERALD;
  float cache_fraction = 0.2f;
  uint32_t global_batch_size = 64;
  uint64_t iterations = 0;  // 0: by epochs
  uint32_t epochs = 0;
  uint32_t workers = 2;

  proto::JobSpec Spec() const;
};

// GeneratedJob's defaults with this name, policy and iteration count.
proto::JobSpec SmallWideAndDeepJob(const std::string& name, proto::PolicyKind policy,
                                   uint64_t iterations);

}  // namespace herald::testing
