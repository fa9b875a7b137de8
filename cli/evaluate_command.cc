#include "cli/evaluate_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "scheduler/service/batch_stream.h"
#include "tools/model_reader.h"
#include "worker/device/cpu_device.h"
#include "worker/eval/evaluator.h"
#include "worker/reference/reference_trainer.h"

namespace herald::cli {

absl::Status RunEvaluate(const EvaluateOptions& options) {
  const absl::Time start = absl::Now();
  HERALD_ASSIGN_OR_RETURN(tools::ExportedModel model, tools::ReadModelExport(options.model_dir));
  const proto::JobSpec& spec = model.manifest.spec();
  if (!(spec.data().eval_fraction() > 0)) {
    return absl::InvalidArgumentError(
        "the job held out no data (data.eval_fraction = 0): nothing to evaluate on");
  }
  worker::CpuDevice device;
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<worker::ReferenceTrainer> net,
                          worker::ReferenceTrainer::Create(spec, &device));
  HERALD_RETURN_IF_ERROR(net->LoadDense(model.dense));
  for (size_t t = 0; t < model.tables.size(); ++t) {
    const tools::ExportedTable& table = model.tables[t];
    for (size_t i = 0; i < table.keys.size(); ++i) {
      HERALD_RETURN_IF_ERROR(net->LoadRow(static_cast<uint32_t>(t), table.keys[i],
                                          table.rows.data() + i * table.row_floats,
                                          table.row_floats));
    }
  }
  model.tables.clear();

  scheduler::BatchStreamOptions stream_options =
      scheduler::StreamOptionsFromSpec(spec, scheduler::Split::kHeldOut);
  stream_options.global_batch_size = options.batch;
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<scheduler::BatchStream> stream,
                          scheduler::BatchStream::Open(stream_options));
  worker::Evaluator evaluator;
  data::KeyBatch batch;
  for (;;) {
    HERALD_ASSIGN_OR_RETURN(bool more, stream->Next(&batch));
    if (!more) break;
    evaluator.Add(net->Predict(batch), batch.labels);
  }
  const worker::EvalMetrics m = evaluator.Compute();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (options.json) {
    std::printf("{\"job_id\":\"%s\",\"iterations\":%llu,\"samples\":%llu,\"auc\":%.6f,"
                "\"logloss\":%.6f,\"seconds\":%.3f}\n",
                model.manifest.job_id().c_str(),
                static_cast<unsigned long long>(model.manifest.iterations()),
                static_cast<unsigned long long>(m.samples), m.auc, m.logloss, seconds);
  } else {
    std::printf("job %s after %llu iterations: held-out AUC %.4f, log loss %.4f over %llu "
                "samples (%.1f s)\n",
                model.manifest.job_id().c_str(),
                static_cast<unsigned long long>(model.manifest.iterations()), m.auc, m.logloss,
                static_cast<unsigned long long>(m.samples), seconds);
  }
  return absl::OkStatus();
}

}  // namespace herald::cli
