#include "worker/runtime/worker_replica.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/math/optimizer_spec.h"
#include "common/scheduling_defaults.h"
#include "common/status.h"
#include "worker/collectives/ucx_row_exchanger.h"
#include "worker/model/model_factory.h"

namespace herald::worker {

absl::Status WorkerReplica::Init(const proto::JobSpec& spec, uint32_t rank, uint32_t workers,
                                 const std::vector<uint32_t>& table_slots, ps::PsClient* ps,
                                 KvStore* store, const ReplicaOptions& options) {
  if (table_slots.size() != static_cast<size_t>(spec.tables_size())) {
    return absl::InvalidArgumentError(absl::StrCat("table slots: ", table_slots.size(),
                                                   " sizes for ", spec.tables_size(), " tables"));
  }
  HERALD_ASSIGN_OR_RETURN(device, CreateDevice(options.device, options.device_options));
  HERALD_ASSIGN_OR_RETURN(model, CreateModel(spec, device.get()));
  HERALD_ASSIGN_OR_RETURN(
      DenseOptimizer o,
      DenseOptimizer::Create(spec.dense_optimizer(), device.get(), model->params().size()));
  optimizer.emplace(std::move(o));
  std::vector<CacheTableConfig> tables;
  for (int t = 0; t < spec.tables_size(); ++t) {
    HERALD_ASSIGN_OR_RETURN(math::SparseOptimizerConfig opt, math::TableOptimizerFromSpec(spec, t));
    tables.push_back({spec.tables(t).dim(), opt, table_slots[t]});
  }
  cache = std::make_unique<EmbeddingCache>(device.get(), tables);
  device->Synchronize();
  if (absl::Status s = device->status(); !s.ok()) {
    return Annotate(s, absl::StrCat("model and embedding cache (", cache->DeviceBytes(),
                                    " bytes of cache) on ", device->name()));
  }
  HERALD_ASSIGN_OR_RETURN(
      reducer,
      ConnectDenseAllReducer(device.get(), options.collective, store, static_cast<int>(rank),
                             static_cast<int>(workers), options.collective_options));
  ExecutorOptions executor_options{rank, workers, true};
  executor_options.seed = spec.seed();
  executor_options.overlap = options.overlap;
  executor_options.all_reduce_bucket_bytes = options.all_reduce_bucket_bytes;
  executor_options.prefetch_steps = options.prefetch_steps;
  executor_options.check_threads =
      options.check_threads > 0 ? options.check_threads : DefaultCheckThreads();
  for (const proto::TableSpec& table : spec.tables()) {
    executor_options.init_scale.push_back(table.init_scale());
  }
  proto::SchedulingSpec scheduling = spec.scheduling();
  ResolveSchedulingDefaults(&scheduling);  // as the planner reads them
  const bool serve = scheduling.serve() && workers > 1;
  if ((scheduling.handoff() || serve) && workers > 1) {
    GlooOptions gloo = options.collective_options.gloo;
    gloo.prefix = options.exchange_prefix;
    // UCX only if every worker asks for it.
    const std::string kind = absl::StrCat(options.exchange_prefix, "/kind/");
    HERALD_RETURN_IF_ERROR(
        store->Set(absl::StrCat(kind, rank), options.ucx_exchange ? "ucx" : "gloo"));
    std::vector<std::string> keys;
    for (uint32_t r = 0; r < workers; ++r) keys.push_back(absl::StrCat(kind, r));
    HERALD_ASSIGN_OR_RETURN(std::vector<std::string> kinds, store->Get(keys, gloo.timeout));
    if (std::all_of(kinds.begin(), kinds.end(), [](const std::string& k) { return k == "ucx"; })) {
      UcxExchangeOptions ucx;
      ucx.prefix = options.exchange_prefix;
      ucx.token = options.token;
      ucx.ucx = options.ucx;
      ucx.timeout = gloo.timeout;
      HERALD_ASSIGN_OR_RETURN(exchanger, UcxRowExchanger::Connect(store, static_cast<int>(rank),
                                                                  static_cast<int>(workers), ucx));
      HLOG_INFO("hand-offs over UCX among {} workers", workers);
    } else {
      HERALD_ASSIGN_OR_RETURN(exchanger,
                              GlooRowExchanger::Connect(store, static_cast<int>(rank),
                                                        static_cast<int>(workers), gloo));
    }
    executor_options.exchanger = exchanger.get();
    executor_options.serve = serve;
  }
  executor = std::make_unique<StepExecutor>(device.get(), model.get(), &*optimizer, reducer.get(),
                                            ps, cache.get(), executor_options);
  return absl::OkStatus();
}

absl::Status WorkerReplica::LoadDense(const std::string& values, const std::string& state) {
  DeviceArray<float>& params = model->params().values();
  if (values.size() != params.size() * sizeof(float)) {
    return absl::InvalidArgumentError(absl::StrCat("initial dense parameters: ", values.size(),
                                                   " bytes for a model of ", params.size(),
                                                   " parameters"));
  }
  const size_t state_floats = optimizer ? optimizer->state().size() : 0;
  if (state.size() != state_floats * sizeof(float)) {
    return absl::InvalidArgumentError(absl::StrCat("initial dense optimizer state: ", state.size(),
                                                   " bytes, the optimizer keeps ", state_floats,
                                                   " floats"));
  }
  std::vector<float> host(params.size());
  std::memcpy(host.data(), values.data(), values.size());
  params.CopyFromHost(host);
  if (state_floats > 0) {
    host.resize(state_floats);
    std::memcpy(host.data(), state.data(), state.size());
    optimizer->state().CopyFromHost(host);
  }
  return absl::OkStatus();
}

}  // namespace herald::worker
