// One CPU worker training Wide&Deep with a warm cache (every row resident
// and owned, no PS traffic) against the same model in PyTorch on the same
// machine, in the same run. Both use `--threads` cores (default 1: "per
// core"). Prints samples/s of each and the ratio.
//
//   bazel run -c opt //bench:worker_bench -- [--batch=1024 --tables=26 --dim=64
//       --rows=10000 --mlp=512,256,128 --iterations=20 --threads=1]
// The PyTorch half needs python3-torch (Debian); without it the line says
// SKIPPED. Never part of CI.
//
// --device=cuda:N (a --config=cuda build) runs the same worker on GPU N and,
// in the same run, the PyTorch model on the same GPU in both layouts (one
// EmbeddingBag per table, and one fused table: what TorchRec/FBGEMM do),
// and prints both ratios, after the host time per step measured with the
// null device (below). PyTorch comes from `--python` (default: python3 on
// the PATH, where a GPU node has it).
//
// --graph (default on) also trains the same Wide&Deep written as a model
// graph (model.graph) and prints its ratio to the built-in kind.
//
// --device=null runs the same steps on a device that computes nothing:
// what is left is the host's time per step (plan check, bookkeeping,
// staging), printed in ms per step and µs per sample.
#include <cblas.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/math/optimizer_spec.h"
#include "common/rng.h"
#include "worker/cache/step_executor.h"
#include "worker/collectives/all_reducer.h"
#include "worker/device/null_device.h"
#include "worker/model/model_factory.h"
#include "worker/runtime/device_factory.h"

ABSL_FLAG(int, batch, 1024, "samples per batch");
ABSL_FLAG(int, tables, 26, "embedding tables (one-hot features)");
ABSL_FLAG(int, dim, 64, "embedding dimension");
ABSL_FLAG(int, rows, 10000, "rows per table, all resident in the cache");
ABSL_FLAG(std::string, mlp, "512,256,128", "deep tower hidden widths");
ABSL_FLAG(int, iterations, 20, "timed iterations");
ABSL_FLAG(int, warmup, 3, "untimed iterations first");
ABSL_FLAG(int, threads, 1, "cores for OpenBLAS and for PyTorch");
ABSL_FLAG(bool, graph, true,
          "also train the same Wide&Deep written as a model graph and print its ratio to the "
          "built-in kind");
ABSL_FLAG(int, check_threads, 0, "threads checking each step's plan (0: the worker's default)");
ABSL_FLAG(std::string, python, "",
          "interpreter with PyTorch; default /usr/bin/python3 (Debian's python3-torch: a pyenv "
          "python3 on PATH has no torch) for --device cpu, python3 on the PATH for cuda:N");
ABSL_FLAG(std::string, device, "cpu", "cpu, or cuda:N: GPU N against the CPU baseline");
ABSL_FLAG(std::string, pytorch_script, "bench/pytorch_wide_deep.py",
          "path of the PyTorch baseline script");

namespace herald::worker {
namespace {

constexpr int kDense = 13;

// Wide&Deep written as a model graph (docs/configuration.md, "Model graphs").
void UseWideAndDeepGraph(proto::JobSpec* spec) {
  std::vector<uint32_t> deep(spec->model().top_mlp().begin(), spec->model().top_mlp().end());
  deep.push_back(1);
  proto::ModelGraphSpec* graph = spec->mutable_model()->mutable_graph();
  spec->mutable_model()->clear_kind();
  spec->mutable_model()->clear_top_mlp();
  auto node = [&](const std::string& name, std::vector<std::string> inputs) {
    proto::GraphNodeSpec* n = graph->add_nodes();
    n->set_name(name);
    for (const std::string& i : inputs) n->add_inputs(i);
    return n;
  };
  node("dense", {})->mutable_dense();
  node("bags", {})->mutable_embeddings();
  node("x", {"dense", "bags"})->mutable_concat();
  node("wide", {"x"})->mutable_mlp()->add_widths(1);
  proto::MlpSpec* tower = node("deep", {"x"})->mutable_mlp();
  for (uint32_t w : deep) tower->add_widths(w);
  node("logit", {"wide", "deep"})->mutable_sum();
  node("click", {"logit"})->mutable_head();
}

double HeraldSamplesPerSecond(const std::string& device_name, bool as_graph = false) {
  const int batch = absl::GetFlag(FLAGS_batch), tables = absl::GetFlag(FLAGS_tables);
  const int dim = absl::GetFlag(FLAGS_dim), rows = absl::GetFlag(FLAGS_rows);
  proto::JobSpec spec;
  spec.set_seed(1);
  spec.set_num_dense(kDense);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  for (absl::string_view w : absl::StrSplit(absl::GetFlag(FLAGS_mlp), ',')) {
    uint32_t width;
    if (absl::SimpleAtoi(w, &width)) spec.mutable_model()->add_top_mlp(width);
  }
  if (as_graph) UseWideAndDeepGraph(&spec);
  for (auto* o : {spec.mutable_dense_optimizer(), spec.mutable_sparse_optimizer()}) {
    o->set_kind(proto::OPTIMIZER_SGD);
    o->set_learning_rate(0.01f);
  }
  for (int t = 0; t < tables; ++t) spec.add_tables()->set_dim(dim);

  absl::StatusOr<std::unique_ptr<Device>> created = CreateDevice(device_name, {});
  if (!created.ok()) {
    std::printf("%s: SKIPPED (%s)\n", device_name.c_str(), created.status().ToString().c_str());
    return 0;
  }
  Device& device = **created;
  auto model = CreateModel(spec, &device);
  auto optimizer =
      DenseOptimizer::Create(spec.dense_optimizer(), &device, (*model)->params().size());
  std::vector<CacheTableConfig> configs;
  for (int t = 0; t < tables; ++t) {
    configs.push_back({static_cast<uint32_t>(dim), *math::TableOptimizerFromSpec(spec, t),
                       static_cast<uint32_t>(rows)});
  }
  EmbeddingCache cache(&device, configs);
  // Warm cache: slot s of every table holds key s, owned by this worker.
  for (int t = 0; t < tables; ++t) {
    EmbeddingCache::Table& table = cache.table(t);
    std::vector<float> host(static_cast<size_t>(rows) * table.row_floats);
    for (int s = 0; s < rows; ++s) {
      math::InitialRow(1, t, s, dim, 0, table.optimizer, host.data() + s * table.row_floats);
      cache.Load(t, s, s, 0);
    }
    table.rows.CopyFromHost(host);
  }
  SingleRankAllReducer reducer;
  ExecutorOptions options{0, 1, /*use_ps=*/false};
  options.check_threads = absl::GetFlag(FLAGS_check_threads) > 0
                              ? absl::GetFlag(FLAGS_check_threads)
                              : DefaultCheckThreads();
  StepExecutor executor(&device, model->get(), &*optimizer, &reducer, nullptr, &cache, options);

  CounterRng rng(2, 0, 0);
  std::vector<plan::Step> steps(4);
  for (plan::Step& step : steps) {
    step.job_id = "bench";
    step.num_samples = batch;
    step.global_batch_size = batch;
    for (int i = 0; i < batch; ++i) {
      step.labels.push_back(rng.NextFloat() < 0.25f ? 1.0f : 0.0f);
      for (int d = 0; d < kDense; ++d) step.dense.push_back(rng.NextFloat());
    }
    step.samples.resize(tables);
    step.plan.resize(tables);
    for (int t = 0; t < tables; ++t) {
      std::vector<bool> used(rows, false);
      for (int i = 0; i < batch; ++i) {
        const uint32_t slot = static_cast<uint32_t>(rng.NextBelow(rows));
        step.samples[t].slots.push_back(slot);
        used[slot] = true;
      }
      step.samples[t].offsets.resize(batch + 1);
      std::iota(step.samples[t].offsets.begin(), step.samples[t].offsets.end(), 0u);
      for (int s = 0; s < rows; ++s) {
        if (used[s]) step.plan[t].owned_slots.push_back(s);
      }
    }
  }
  auto run = [&](int i) {
    auto r = executor.Run(steps[i % steps.size()], &steps[(i + 1) % steps.size()]);
    if (!r.ok()) {
      std::fprintf(stderr, "step failed: %s\n", r.status().ToString().c_str());
      std::exit(1);
    }
    return *r;
  };
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) run(i);
  PhaseTimes total;
  double device_ms = 0;
  const absl::Time start = absl::Now();
  const int iterations = absl::GetFlag(FLAGS_iterations);
  for (int i = 0; i < iterations; ++i) {
    const StepResult r = run(i);
    total.compute_ms += r.times.compute_ms;
    total.allreduce_ms += r.times.allreduce_ms;
    device_ms += r.device_ms;
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const double step_ms = 1000 * seconds / iterations;
  std::printf(
      "herald on %s: %.1f ms/iteration (compute %.1f ms), plan check + staging %.1f ms, "
      "device time %.2f ms (device events: busy %.0f%% of the step)\n",
      device_name.c_str(), step_ms, total.compute_ms / iterations,
      step_ms - total.compute_ms / iterations, device_ms / iterations,
      100 * device_ms / iterations / step_ms);
  return static_cast<double>(iterations) * batch / seconds;
}

// `layout`: bags (one EmbeddingBag per table) or fused (one table).
double PyTorchSamplesPerSecond(const std::string& device, const std::string& layout) {
  std::string python = absl::GetFlag(FLAGS_python);
  if (python.empty()) python = device == "cpu" ? "/usr/bin/python3" : "python3";
  // torch.set_num_threads does not reach Debian torch's OpenBLAS: pin it by
  // environment so both sides use the same number of cores.
  const std::string command = absl::StrCat(
      "OPENBLAS_NUM_THREADS=", absl::GetFlag(FLAGS_threads),
      " OMP_NUM_THREADS=", absl::GetFlag(FLAGS_threads), " ", python, " ",
      absl::GetFlag(FLAGS_pytorch_script), " --batch=", absl::GetFlag(FLAGS_batch),
      " --tables=", absl::GetFlag(FLAGS_tables), " --dim=", absl::GetFlag(FLAGS_dim),
      " --rows=", absl::GetFlag(FLAGS_rows), " --mlp=", absl::GetFlag(FLAGS_mlp),
      " --iterations=", absl::GetFlag(FLAGS_iterations), " --warmup=", absl::GetFlag(FLAGS_warmup),
      " --threads=", absl::GetFlag(FLAGS_threads), " --device=", device, " --layout=", layout,
      " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return 0;
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  pclose(pipe);
  const size_t at = output.find("samples_per_second=");
  double value = 0;
  if (at == std::string::npos ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(output.substr(at + 19)), &value)) {
    std::printf("pytorch %s: SKIPPED (%s)\n", layout.c_str(),
                output.find("No module named") != std::string::npos
                    ? "python3-torch not installed"
                    : output.substr(0, 300).c_str());
    return 0;
  }
  return value;
}

}  // namespace
}  // namespace herald::worker

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  openblas_set_num_threads(absl::GetFlag(FLAGS_threads));
  std::printf(
      "Wide&Deep, batch %d, %d tables × dim %d (%d rows each, warm), MLP %s, %d thread(s)\n",
      absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_tables), absl::GetFlag(FLAGS_dim),
      absl::GetFlag(FLAGS_rows), absl::GetFlag(FLAGS_mlp).c_str(), absl::GetFlag(FLAGS_threads));
  const std::string device = absl::GetFlag(FLAGS_device);
  herald::worker::RegisterNullDevice();
  if (device == "null" || device != "cpu") {
    const double host = herald::worker::HeraldSamplesPerSecond("null");
    std::printf("host time per step (null device): %.2f ms, %.3f us/sample\n",
                1000.0 * absl::GetFlag(FLAGS_batch) / host, 1e6 / host);
    if (device == "null") return 0;
  }
  const double herald = herald::worker::HeraldSamplesPerSecond(device);
  if (herald == 0) return 1;
  std::printf("herald %s: %10.1f samples/s\n", device.c_str(), herald);
  if (absl::GetFlag(FLAGS_graph)) {
    const double graph = herald::worker::HeraldSamplesPerSecond(device, /*as_graph=*/true);
    std::printf("herald %s, the same model as model.graph: %10.1f samples/s\n", device.c_str(),
                graph);
    std::printf("ratio graph/built-in: %.3f\n", graph / herald);
  }
  // On the CPU the per-table layout only (the fused one is the GPU peers').
  const std::vector<std::string> layouts = device == "cpu"
                                               ? std::vector<std::string>{"bags"}
                                               : std::vector<std::string>{"bags", "fused"};
  for (const std::string& layout : layouts) {
    const double torch = herald::worker::PyTorchSamplesPerSecond(device, layout);
    if (torch > 0) {
      std::printf("pytorch %s %s: %10.1f samples/s\n", layout.c_str(), device.c_str(), torch);
      std::printf("ratio herald/pytorch-%s: %.2f\n", layout.c_str(), herald / torch);
    }
  }
  return 0;
}
