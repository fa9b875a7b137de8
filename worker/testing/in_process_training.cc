#include "worker/testing/in_process_training.h"

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/math/optimizer_spec.h"
#include "worker/collectives/gloo_all_reducer.h"
#include "worker/model/model_factory.h"

namespace herald::worker::testing {

absl::Status TestWorker::Init(const proto::JobSpec& spec, uint32_t rank, uint32_t workers,
                              uint32_t slots, ps::PsClient* ps, KvStore* store) {
  auto m = CreateModel(spec, &device);
  if (!m.ok()) return m.status();
  model = std::move(*m);
  auto o = DenseOptimizer::Create(spec.dense_optimizer(), &device, model->params().size());
  if (!o.ok()) return o.status();
  optimizer.emplace(std::move(*o));
  std::vector<CacheTableConfig> tables;
  for (int t = 0; t < spec.tables_size(); ++t) {
    auto opt = math::TableOptimizerFromSpec(spec, t);
    if (!opt.ok()) return opt.status();
    tables.push_back({spec.tables(t).dim(), *opt, slots});
  }
  cache = std::make_unique<EmbeddingCache>(&device, tables);
  if (workers > 1) {
    GlooOptions gloo;
    gloo.prefix = spec.name();
    auto r = GlooAllReducer::Connect(store, static_cast<int>(rank), static_cast<int>(workers),
                                     gloo);
    if (!r.ok()) return r.status();
    reducer = std::move(*r);
  } else {
    reducer = std::make_unique<SingleRankAllReducer>();
  }
  executor = std::make_unique<StepExecutor>(&device, model.get(), &*optimizer, reducer.get(), ps,
                                            cache.get(), ExecutorOptions{rank, workers, true});
  return absl::OkStatus();
}

absl::StatusOr<TrainingOutcome> TrainSteps(const proto::JobSpec& spec,
                                           const std::vector<std::vector<Step>>& steps,
                                           uint32_t workers, uint32_t slots, ps::PsClient* ps) {
  InProcessKvStore store;
  std::vector<std::unique_ptr<TestWorker>> pool(workers);
  std::vector<std::vector<double>> losses(workers);
  std::vector<std::vector<StepResult>> results(workers);
  std::vector<absl::Status> status(workers);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      pool[w] = std::make_unique<TestWorker>();
      status[w] = pool[w]->Init(spec, w, workers, slots, ps, &store);
      for (size_t t = 0; t < steps.size() && status[w].ok(); ++t) {
        auto r = pool[w]->executor->Run(steps[t][w]);
        if (!r.ok()) {
          status[w] = r.status();
          break;
        }
        losses[w].push_back(r->loss_sum);
        results[w].push_back(*r);
      }
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

}  // namespace herald::worker::testing
