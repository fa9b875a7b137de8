#include "worker/testing/in_process_training.h"

#include <cmath>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/thread_pool.h"

namespace herald::worker::testing {

absl::Status TestWorker::Init(const proto::JobSpec& spec, uint32_t rank, uint32_t workers,
                              uint32_t slots, ps::PsClient* ps, KvStore* store,
                              const std::string& device) {
  ReplicaOptions options;
  options.device = device;
  options.prefetch_steps = prefetch_steps;
  options.collective_options.gloo.prefix = spec.name();
  return WorkerReplica::Init(spec, rank, workers, std::vector<uint32_t>(spec.tables_size(), slots),
                             ps, store, options);
}

absl::StatusOr<TrainingOutcome> TrainSteps(const proto::JobSpec& spec,
                                           const std::vector<std::vector<plan::Step>>& steps,
                                           uint32_t workers, uint32_t slots, ps::PsClient* ps,
                                           const std::vector<std::string>& devices,
                                           bool commits_on_a_thread) {
  InProcessKvStore store;
  std::vector<std::unique_ptr<TestWorker>> pool(workers);
  std::vector<std::vector<double>> losses(workers);
  std::vector<std::vector<StepResult>> results(workers);
  std::vector<absl::Status> status(workers);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      pool[w] = std::make_unique<TestWorker>();
      status[w] =
          pool[w]->Init(spec, w, workers, slots, ps, &store, devices.empty() ? "cpu" : devices[w]);
      // Commits sent in order on one thread of this worker's; the first error.
      ThreadPool committer(1, "commit");
      absl::Mutex commit_mu;
      absl::Status commit_failed;
      if (commits_on_a_thread && status[w].ok()) {
        pool[w]->executor->StartCommitsWith([&, w](const plan::Step& step) {
          committer.Schedule([&, w, job = step.job_id, iteration = step.iteration] {
            const absl::Status s =
                ps->IterationDone(job, Iteration(iteration), WorkerRank(w), workers).status();
            absl::MutexLock lock(&commit_mu);
            if (commit_failed.ok()) commit_failed = s;
          });
          absl::MutexLock lock(&commit_mu);
          return commit_failed;
        });
      }
      for (size_t t = 0; t < steps.size() && status[w].ok(); ++t) {
        // The steps after too: their early fetches start during this one.
        std::vector<const plan::Step*> ahead;
        for (size_t k = t + 1; k < steps.size() && k <= t + kMaxEarlyDistance; ++k) {
          ahead.push_back(&steps[k][w]);
        }
        auto r = pool[w]->executor->Run(steps[t][w], ahead);
        if (!r.ok()) {
          status[w] = r.status();
          break;
        }
        losses[w].push_back(r->loss_sum);
        results[w].push_back(*r);
      }
      committer.Stop();  // every commit sent
      absl::MutexLock lock(&commit_mu);
      if (status[w].ok()) status[w] = commit_failed;
    });
  }
  for (auto& th : threads) th.join();
  for (uint32_t w = 0; w < workers; ++w) {
    if (!status[w].ok()) {
      return absl::Status(status[w].code(), absl::StrCat("worker ", w, ": ", status[w].message()));
    }
  }
  TrainingOutcome out;
  out.dense = pool[0]->model->params().values().ToHost();
  for (uint32_t w = 1; w < workers; ++w) {
    if (pool[w]->model->params().values().ToHost() != out.dense) {
      return absl::InternalError(absl::StrCat("replica ", w, " differs from replica 0"));
    }
  }
  for (size_t t = 0; t < steps.size(); ++t) {
    double sum = 0;
    for (uint32_t w = 0; w < workers; ++w) sum += losses[w][t];
    out.losses.push_back(sum);
  }
  out.results = results[0];
  return out;
}

namespace {

absl::Status CompareValues(const std::vector<float>& got, const std::vector<float>& want,
                           const std::string& what) {
  if (got.size() != want.size()) {
    return absl::InternalError(
        absl::StrCat(what, ": ", got.size(), " values, reference ", want.size()));
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 2e-5 + 1e-4 * std::fabs(want[i]))) {
      return absl::InternalError(
          absl::StrCat(what, "[", i, "]: ", got[i], ", reference ", want[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CompareWithReference(const TrainingOutcome& outcome, const ReferenceTrainer& reference,
                                  const std::vector<double>& reference_losses, ps::PsClient* ps,
                                  const std::string& job, uint64_t iterations,
                                  const std::vector<ps::TableKeys>& keys) {
  if (auto s = CompareValues(outcome.dense, reference.DenseValues(), "dense"); !s.ok()) return s;
  if (outcome.losses.size() != reference_losses.size()) {
    return absl::InternalError(
        absl::StrCat(outcome.losses.size(), " losses, reference ", reference_losses.size()));
  }
  for (size_t t = 0; t < reference_losses.size(); ++t) {
    if (!(std::fabs(outcome.losses[t] - reference_losses[t]) <= 1e-4 * reference_losses[t])) {
      return absl::InternalError(absl::StrCat("loss at iteration ", t, ": ", outcome.losses[t],
                                              ", reference ", reference_losses[t]));
    }
  }
  return CompareRowsWithReference(reference, ps, job, iterations, keys);
}

absl::Status CompareRowsWithReference(const ReferenceTrainer& reference, ps::PsClient* ps,
                                      const std::string& job, uint64_t iterations,
                                      const std::vector<ps::TableKeys>& keys) {
  auto rows = ps->Fetch(job, Iteration(iterations), keys);
  if (!rows.ok()) return rows.status();
  for (size_t t = 0; t < rows->size(); ++t) {
    const auto& r = (*rows)[t];
    for (size_t i = 0; i < r.keys.size(); ++i) {
      const std::vector<float> got(r.rows.begin() + i * r.row_floats,
                                   r.rows.begin() + (i + 1) * r.row_floats);
      if (auto s = CompareValues(got, reference.Row(static_cast<uint32_t>(t), r.keys[i]),
                                 absl::StrCat("table ", t, " key ", r.keys[i]));
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace herald::worker::testing
