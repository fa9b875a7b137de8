#include "worker/runtime/worker_replica.h"

#include "absl/strings/str_cat.h"
#include "common/math/optimizer_spec.h"
#include "common/status.h"
#include "worker/model/model_factory.h"

namespace herald::worker {

absl::Status WorkerReplica::Init(const proto::JobSpec& spec, uint32_t rank, uint32_t workers,
                                 const std::vector<uint32_t>& table_slots, ps::PsClient* ps,
                                 KvStore* store, const GlooOptions& gloo) {
  if (table_slots.size() != static_cast<size_t>(spec.tables_size())) {
    return absl::InvalidArgumentError(absl::StrCat("table slots: ", table_slots.size(),
                                                   " sizes for ", spec.tables_size(), " tables"));
  }
  HERALD_ASSIGN_OR_RETURN(model, CreateModel(spec, &device));
  HERALD_ASSIGN_OR_RETURN(DenseOptimizer o, DenseOptimizer::Create(spec.dense_optimizer(), &device,
                                                                   model->params().size()));
  optimizer.emplace(std::move(o));
  std::vector<CacheTableConfig> tables;
  for (int t = 0; t < spec.tables_size(); ++t) {
    HERALD_ASSIGN_OR_RETURN(math::SparseOptimizerConfig opt, math::TableOptimizerFromSpec(spec, t));
    tables.push_back({spec.tables(t).dim(), opt, table_slots[t]});
  }
  cache = std::make_unique<EmbeddingCache>(&device, tables);
  if (workers > 1) {
    HERALD_ASSIGN_OR_RETURN(reducer, GlooAllReducer::Connect(store, static_cast<int>(rank),
                                                             static_cast<int>(workers), gloo));
  } else {
    reducer = std::make_unique<SingleRankAllReducer>();
  }
  executor = std::make_unique<StepExecutor>(&device, model.get(), &*optimizer, reducer.get(), ps,
                                            cache.get(), ExecutorOptions{rank, workers, true});
  return absl::OkStatus();
}

}  // namespace herald::worker
