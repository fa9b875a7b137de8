#include "cli/evaluate_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/predictions_file.h"
#include "common/data/generator.h"
#include "common/status.h"
#include "common/trained_label.h"
#include "scheduler/data/batch_stream.h"
#include "scheduler/data/held_out.h"
#include "tools/model_reader.h"
#include "worker/device/cpu_device.h"
#include "worker/eval/evaluator.h"
#include "worker/reference/reference_trainer.h"

namespace herald::cli {
namespace {

// AUC of the generator's hidden teacher on the held-out samples: the best a
// model can do on this data. One pass over the generated stream.
double TeacherAuc(const proto::JobSpec& spec) {
  const proto::GeneratorSpec& g = spec.data().generator();
  data::SyntheticGenerator generator(scheduler::GeneratorOptionsFromSpec(g));
  worker::Evaluator evaluator;
  constexpr size_t kChunk = 4096;
  for (uint64_t first = 0; first < g.rows(); first += kChunk) {
    data::SampleBlock block(generator.schema());
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, g.rows() - first));
    generator.Generate(first, n, &block);
    std::vector<float> p, labels;
    for (size_t s = 0; s < n; ++s) {
      if (!scheduler::IsHeldOut(spec.seed(), first + s, spec.data().eval_fraction())) continue;
      p.push_back(static_cast<float>(1.0 / (1.0 + std::exp(-generator.TeacherLogit(block, s)))));
      labels.push_back(block.labels[s]);
    }
    evaluator.Add(p, labels);
  }
  return evaluator.Compute().auc;
}

}  // namespace

absl::Status RunEvaluate(const EvaluateOptions& options) {
  const absl::Time start = absl::Now();
  const std::string& dir = options.model_dir;
  const bool is_export = std::filesystem::exists(dir + "/MODEL");
  if (!is_export && !std::filesystem::exists(dir + "/MANIFEST") &&
      !absl::EndsWith(dir, "/MANIFEST")) {
    return absl::NotFoundError(absl::StrCat("--model ", dir, ": neither an exported model (no ",
                                            dir, "/MODEL) nor a periodic checkpoint (no ", dir,
                                            "/MANIFEST)"));
  }
  HERALD_ASSIGN_OR_RETURN(tools::ExportedModel model, is_export ? tools::ReadModelExport(dir)
                                                                : tools::ReadCheckpointModel(dir));
  const proto::JobSpec& spec = model.manifest.spec();
  const bool held_out = options.data_file.empty();
  if (held_out && !(spec.data().eval_fraction() > 0)) {
    return absl::InvalidArgumentError(
        "the job held out no data (data.eval_fraction = 0): nothing to evaluate on");
  }
  worker::CpuDevice device;
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<worker::ReferenceTrainer> net,
                          worker::ReferenceTrainer::Create(spec, &device));
  HERALD_RETURN_IF_ERROR(net->LoadDense(model.dense));
  // A table with id admission or row expiry (tables[].admission, expiry)
  // has rows for exactly its live keys: a key without one is absent from
  // its bags, as the job's own evaluations score it.
  std::vector<std::unique_ptr<absl::flat_hash_set<Key>>> admitted(model.tables.size());
  bool any_admission = false;
  for (size_t t = 0; t < model.tables.size(); ++t) {
    const tools::ExportedTable& table = model.tables[t];
    if (t < static_cast<size_t>(spec.tables_size()) &&
        (spec.tables(static_cast<int>(t)).admission().min_count() > 1 ||
         spec.tables(static_cast<int>(t)).expiry().after_iterations() > 0)) {
      admitted[t] =
          std::make_unique<absl::flat_hash_set<Key>>(table.keys.begin(), table.keys.end());
      any_admission = true;
    }
    for (size_t i = 0; i < table.keys.size(); ++i) {
      HERALD_RETURN_IF_ERROR(net->LoadRow(static_cast<uint32_t>(t), table.keys[i],
                                          table.rows.data() + i * table.row_floats,
                                          table.row_floats));
    }
  }
  model.tables.clear();

  // One evaluator per head (one label each).
  const std::vector<TrainedLabel> heads = TrainedLabelsOf(spec);
  std::vector<worker::Evaluator> evaluators;
  for (const TrainedLabel& label : heads) evaluators.emplace_back(label.name, label.regression);
  PredictionsFile predictions;
  if (!options.predictions_file.empty()) {
    HERALD_RETURN_IF_ERROR(PredictionsFile::Open(options.predictions_file, spec, &predictions));
  }
  const std::function<absl::Status(const data::KeyBatch&)> score =
      [&](const data::KeyBatch& batch) {
        // Scored with the admitted keys; the predictions file keeps every id.
        data::KeyBatch filtered;
        if (any_admission) {
          filtered = batch;
          for (size_t t = 0; t < admitted.size() && t < filtered.tables.size(); ++t) {
            if (admitted[t] == nullptr) continue;
            filtered.tables[t].KeepKeys([&](Key key) { return admitted[t]->contains(key); });
          }
        }
        const std::vector<float> p = net->Predict(any_admission ? filtered : batch);
        for (size_t h = 0; h < heads.size(); ++h) {
          evaluators[h].Add(math::ColumnOf(p, heads.size(), h),
                            math::ColumnOf(batch.labels, batch.num_labels, heads[h].column));
        }
        return options.predictions_file.empty() ? absl::OkStatus() : predictions.Add(batch, p);
      };
  HERALD_RETURN_IF_ERROR(
      held_out ? scheduler::ForEachHeldOutBatch(spec, options.batch, options.max_samples, score)
               : scheduler::ForEachFileBatch(spec, options.data_file, options.batch,
                                             options.max_samples, score));
  HERALD_RETURN_IF_ERROR(predictions.Close());
  std::vector<worker::EvalMetrics> metrics;
  for (const worker::Evaluator& e : evaluators) metrics.push_back(e.Compute());
  const worker::EvalMetrics& m = metrics[0];
  const bool generated = held_out && spec.data().format() == proto::DATA_FORMAT_GENERATED;
  const double teacher = generated ? TeacherAuc(spec) : 0;
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (options.json) {
    std::string teacher_field = generated ? absl::StrFormat(",\"teacher_auc\":%.6f", teacher) : "";
    // The first head's figures also at the top level, as before labels
    // were named.
    auto figures = [](const worker::EvalMetrics& e) {
      return e.regression ? absl::StrFormat("\"rmse\":%.17g", e.rmse)
                          : absl::StrFormat("\"auc\":%.17g,\"logloss\":%.17g", e.auc, e.logloss);
    };
    std::string labels;
    for (const worker::EvalMetrics& e : metrics) {
      absl::StrAppendFormat(&labels, "%s{\"label\":\"%s\",\"regression\":%s,%s}",
                            labels.empty() ? "" : ",", absl::CEscape(e.label),
                            e.regression ? "true" : "false", figures(e));
    }
    std::printf(
        "{\"job_id\":\"%s\",\"iterations\":%llu,\"samples\":%llu,%s,\"labels\":[%s]%s,"
        "\"seconds\":%.3f}\n",
        model.manifest.job_id().c_str(),
        static_cast<unsigned long long>(model.manifest.iterations()),
        static_cast<unsigned long long>(m.samples), figures(m).c_str(), labels.c_str(),
        teacher_field.c_str(), seconds);
  } else {
    std::vector<std::string> described;
    for (const worker::EvalMetrics& e : metrics) described.push_back(math::DescribeMetrics(e));
    std::printf("job %s after %llu iterations: %s %s over %llu samples (%.1f s)\n",
                model.manifest.job_id().c_str(),
                static_cast<unsigned long long>(model.manifest.iterations()),
                held_out ? "held-out" : options.data_file.c_str(),
                absl::StrJoin(described, "; ").c_str(), static_cast<unsigned long long>(m.samples),
                seconds);
    if (generated) {
      std::printf("the generator's hidden teacher scores AUC %.4f on the same samples\n", teacher);
    }
  }
  return absl::OkStatus();
}

}  // namespace herald::cli
