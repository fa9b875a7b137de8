#include "cli/model_command.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/job_commands.h"
#include "common/builtin_model_graph.h"
#include "common/model_graph.h"
#include "common/model_spec_check.h"
#include "google/protobuf/text_format.h"
#include "proto/job.pb.h"
#include "scheduler/data/data_schema_spec.h"
#include "worker/device/cpu_device.h"
#include "worker/model/model_factory.h"

namespace herald::cli {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "heraldctl model: %s\n", std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

// Node names are [A-Za-z0-9_.-]+ and layer and kind names identifiers:
// quotes are all JSON needs.
std::string Quoted(const std::string& s) { return absl::StrCat("\"", s, "\""); }

// `kind`: the built-in kind the graph writes out; empty for a graph spec.
std::string GraphJson(const ResolvedGraph& graph, const std::string& kind) {
  std::string json = kind.empty() ? "{" : absl::StrCat("{\"kind\": ", Quoted(kind), ", ");
  json += "\"nodes\": [";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& n = graph.nodes[i];
    std::string inputs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      absl::StrAppend(&inputs, k > 0 ? ", " : "", Quoted(graph.nodes[n.inputs[k]].spec.name()));
    }
    absl::StrAppend(&json, i > 0 ? ", " : "", "{\"name\": ", Quoted(n.spec.name()),
                    ", \"layer\": ", Quoted(LayerName(n.spec)), ", \"inputs\": [", inputs,
                    "], \"width\": ", n.shape.width, ", \"fields\": ", n.shape.fields,
                    ", \"parameters\": ", n.parameters, "}");
  }
  absl::StrAppend(&json, "], \"parameters\": ", graph.parameters(), "}\n");
  return json;
}

}  // namespace

int RunModel(const std::string& spec_path, bool json, const std::string& initial_dense,
             bool as_graph) {
  proto::JobSpec spec;
  if (absl::Status s = LoadJobSpecFile(spec_path, &spec); !s.ok()) return Fail(s);
  // A CSV schema as the scheduler resolves it at submit: tables in the
  // schema's order, num_dense from its dense columns. (Binary data keeps its
  // schema in the file, which need not be on this machine.)
  if (spec.data().format() == proto::DATA_FORMAT_CSV) {
    if (absl::Status s = scheduler::ResolveDataSchema(&spec); !s.ok()) return Fail(s);
  }
  if (absl::Status s = ValidateModelSpec(spec); !s.ok()) return Fail(s);
  // The model as a worker builds it: its parameter count is the truth.
  worker::CpuDevice device;
  auto model = worker::CreateModel(spec, &device);
  if (!model.ok()) return Fail(model.status());
  const size_t parameters = (*model)->params().size();
  if (!initial_dense.empty()) {
    const std::vector<float> values = (*model)->params().values().ToHost();
    std::FILE* out = std::fopen(initial_dense.c_str(), "wb");
    const bool written =
        out != nullptr &&
        std::fwrite(values.data(), sizeof(float), values.size(), out) == values.size() &&
        std::fclose(out) == 0;
    if (!written) {
      return Fail(absl::UnavailableError(
          absl::StrCat("--initial_dense ", initial_dense, ": cannot write")));
    }
  }
  auto graph = ResolveModelGraph(spec);
  if (!graph.ok()) return Fail(graph.status());
  if (static_cast<size_t>(graph->parameters()) != parameters) {
    return Fail(absl::InternalError(absl::StrCat("the graph counts ", graph->parameters(),
                                                 " parameters, the built model ", parameters)));
  }
  if (as_graph) {  // a model section to start a graph of one's own from
    proto::JobSpec model_only;
    *model_only.mutable_model()->mutable_graph() = ModelGraphOf(spec);
    google::protobuf::TextFormat::Printer printer;
    printer.SetUseShortRepeatedPrimitives(true);  // widths: [64, 32]
    std::string text;
    printer.PrintToString(model_only, &text);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  const std::string kind =
      spec.model().has_graph() ? "" : proto::ModelKind_Name(spec.model().kind());
  if (!kind.empty() && !json) std::printf("%s (built-in), as its graph:\n", kind.c_str());
  std::fputs(json ? GraphJson(*graph, kind).c_str() : DescribeModelGraph(*graph).c_str(), stdout);
  return 0;
}

}  // namespace herald::cli
