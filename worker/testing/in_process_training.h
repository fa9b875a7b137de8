#pragma once
// Trains precomputed steps on W in-process workers (threads, each with its
// own device (CPU unless told), model, dense optimizer, cache and Gloo rank over an
// in-process store) against a PsClient (testonly). Tests use it to compare
// planned, partitioned training with the single-process reference, on CPU
// or GPU devices.

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "plan/step.h"
#include "proto/job.pb.h"
#include "ps_server/client/ps_client.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/step_executor.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/kv_store.h"
#include "worker/device/cpu_device.h"
#include "worker/model/dense_optimizer.h"
#include "worker/model/rec_model.h"
#include "worker/reference/reference_trainer.h"
#include "worker/runtime/worker_replica.h"

namespace herald::worker::testing {

// One worker: its own device, model, optimizer, cache and all-reducer.
struct TestWorker : WorkerReplica {
  // `slots`: every table's slot array size; Gloo keys under the job name.
  // `device`: "cpu" or "cuda:N" (Gloo through the host for GPU workers).
  absl::Status Init(const proto::JobSpec& spec, uint32_t rank, uint32_t workers, uint32_t slots,
                    ps::PsClient* ps, KvStore* store, const std::string& device = "cpu");
  // ExecutorOptions::prefetch_steps, read by Init.
  uint32_t prefetch_steps = tunables::kPrefetchSteps;
};

struct TrainingOutcome {
  std::vector<float> dense;         // worker 0's dense parameters
  std::vector<double> losses;       // Σ over workers, per iteration
  std::vector<StepResult> results;  // of worker 0
};

// steps[t][w]: worker w's step at iteration t. The job must be started on
// the PS. `devices[w]`: worker w's device (empty: every worker on "cpu").
// Errors: the first worker's error, or Internal when the replicas' dense
// parameters differ in any bit.
// With `commits_on_a_thread`, each worker's executor hands its commits off
// (StepExecutor::StartCommitsWith) to a thread of the worker's that sends
// them in order, as herald_worker's StepReporter does, and the steps do not
// wait for them.
absl::StatusOr<TrainingOutcome> TrainSteps(const proto::JobSpec& spec,
                                           const std::vector<std::vector<plan::Step>>& steps,
                                           uint32_t workers, uint32_t slots, ps::PsClient* ps,
                                           const std::vector<std::string>& devices = {},
                                           bool commits_on_a_thread = false);

// Checks a distributed run against the single-process reference: dense
// parameters, per-iteration losses, and every row (values + optimizer state)
// of `keys` as the PS holds it for `job` after `iterations`. Tolerance
// 2e-5 + 1e-4·|reference|. Errors: Internal naming the first mismatch.
absl::Status CompareWithReference(const TrainingOutcome& outcome, const ReferenceTrainer& reference,
                                  const std::vector<double>& reference_losses, ps::PsClient* ps,
                                  const std::string& job, uint64_t iterations,
                                  const std::vector<ps::TableKeys>& keys);

// The rows part of CompareWithReference (for runs whose dense parameters
// stay in other processes).
absl::Status CompareRowsWithReference(const ReferenceTrainer& reference, ps::PsClient* ps,
                                      const std::string& job, uint64_t iterations,
                                      const std::vector<ps::TableKeys>& keys);

}  // namespace herald::worker::testing
