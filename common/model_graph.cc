#include "common/model_graph.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/builtin_model_graph.h"
#include "common/trained_label.h"

namespace herald {
namespace {

constexpr int kMaxWidth = 65536;
constexpr int kMaxCrossLayers = 64;

// What a node's fields are called in errors: `model.graph.nodes[3] "cross"`.
std::string NodeField(int index, const std::string& name) {
  return absl::StrCat("model.graph.nodes[", index, "] \"", name, "\"");
}

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// How many inputs a layer takes: [min, max].
std::pair<int, int> InputCount(const proto::GraphNodeSpec& node) {
  switch (node.layer_case()) {
    case proto::GraphNodeSpec::kDense:
    case proto::GraphNodeSpec::kEmbeddings:
      return {0, 0};
    case proto::GraphNodeSpec::kConcat:
      return {1, 1 << 20};
    case proto::GraphNodeSpec::kSum:
      return {2, 1 << 20};
    case proto::GraphNodeSpec::kProduct:
    case proto::GraphNodeSpec::kDot:
      return {2, 2};
    default:
      return {1, 1};
  }
}

std::string ShapeText(const GraphShape& s) {
  if (s.fields > 1) return absl::StrCat(s.width, " (", s.fields, " x ", s.field_dim, ")");
  return absl::StrCat(s.width);
}

// Every node placed once its inputs are: Kahn's order, ties to the node
// listed first. Errors: a cycle, naming the nodes on it or behind it.
absl::StatusOr<std::vector<int>> TopologicalOrder(const proto::ModelGraphSpec& graph,
                                                  const std::vector<std::vector<int>>& inputs) {
  const int n = graph.nodes_size();
  std::vector<bool> placed(n, false);
  std::vector<int> order;
  while (static_cast<int>(order.size()) < n) {
    int next = -1;
    for (int i = 0; i < n && next < 0; ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (int j : inputs[i]) ready = ready && placed[j];
      if (ready) next = i;
    }
    if (next < 0) {
      std::vector<std::string> stuck;
      for (int i = 0; i < n; ++i) {
        if (!placed[i]) stuck.push_back(absl::StrCat("\"", graph.nodes(i).name(), "\""));
      }
      return Invalid("model.graph", absl::StrCat("a cycle: nodes ", absl::StrJoin(stuck, ", "),
                                                 " depend on each other"));
    }
    placed[next] = true;
    order.push_back(next);
  }
  return order;
}

// Every node placed once every node taking its output is: the backward
// order, ties to the node listed first. REQUIRES: no cycle.
std::vector<int> BackwardOrder(const std::vector<std::vector<int>>& inputs) {
  const int n = static_cast<int>(inputs.size());
  std::vector<int> pending(n, 0);  // consumers not yet placed
  for (const std::vector<int>& in : inputs) {
    for (int j : in) ++pending[j];
  }
  std::vector<bool> placed(n, false);
  std::vector<int> order;
  while (static_cast<int>(order.size()) < n) {
    int next = 0;
    while (placed[next] || pending[next] > 0) ++next;
    placed[next] = true;
    order.push_back(next);
    for (int j : inputs[next]) --pending[j];
  }
  return order;
}

int64_t MlpParameters(int in, const proto::MlpSpec& mlp) {
  int64_t total = 0;
  for (uint32_t w : mlp.widths()) {
    total += static_cast<int64_t>(in) * w + w;
    in = static_cast<int>(w);
  }
  return total;
}

int64_t CrossParameters(int width, const proto::CrossSpec& cross) {
  const int64_t w = width;
  int64_t per_layer = 2 * w;  // v1: w and b
  if (cross.kind() == proto::CROSS_V2) {
    per_layer = cross.rank() == 0 ? w * w + w : 2 * w * cross.rank() + w;
  }
  return per_layer * cross.layers();
}

// The label names a head may predict: the schema's label columns, or
// Criteo's one "label".
std::vector<std::string> LabelNames(const proto::JobSpec& spec) {
  std::vector<std::string> names;
  for (const TrainedLabel& label : DataLabelsOf(spec)) names.push_back(label.name);
  return names;
}

// The node's shape and parameters from its inputs' shapes. `at`: the
// node's name in errors.
absl::Status ShapeNode(const proto::JobSpec& spec, const std::vector<ModelFeature>& features,
                       const std::string& at, const std::vector<GraphNode>& all, GraphNode* node) {
  const proto::GraphNodeSpec& s = node->spec;
  std::vector<GraphShape> in;
  for (int j : node->inputs) in.push_back(all[j].shape);
  auto input_name = [&](size_t k) {
    return absl::StrCat("\"", all[node->inputs[k]].spec.name(), "\"");
  };
  GraphShape& out = node->shape;
  switch (s.layer_case()) {
    case proto::GraphNodeSpec::kDense:
      if (spec.num_dense() == 0)
        return Invalid(at, "dense: the job has no dense features (num_dense 0)");
      out = {static_cast<int>(spec.num_dense()), 1, static_cast<int>(spec.num_dense())};
      return absl::OkStatus();
    case proto::GraphNodeSpec::kEmbeddings: {
      std::map<std::string, int> by_name;
      for (size_t f = 0; f < features.size(); ++f) by_name.emplace(features[f].name, f);
      if (s.embeddings().features().empty()) {
        for (size_t f = 0; f < features.size(); ++f) node->features.push_back(f);
      }
      for (int k = 0; k < s.embeddings().features_size(); ++k) {
        const std::string& name = s.embeddings().features(k);
        auto it = by_name.find(name);
        if (it == by_name.end()) {
          std::vector<std::string> names;
          for (const ModelFeature& f : features) names.push_back(f.name);
          return Invalid(
              absl::StrCat(at, ": embeddings.features[", k, "] \"", name, "\""),
              absl::StrCat("no such sparse feature (the job's: ", absl::StrJoin(names, ", "), ")"));
        }
        node->features.push_back(it->second);
      }
      if (node->features.empty()) return Invalid(at, "embeddings: the job has no sparse feature");
      out.field_dim = features[node->features[0]].dim;
      out.fields = static_cast<int>(node->features.size());
      for (int f : node->features) {
        out.width += features[f].dim;
        if (features[f].dim != out.field_dim) out.fields = 0;
      }
      if (out.fields == 0) out.field_dim = 0;
      return absl::OkStatus();
    }
    case proto::GraphNodeSpec::kConcat:
      out.field_dim = in[0].field_dim;
      for (const GraphShape& i : in) {
        out.width += i.width;
        out.fields += i.fields;
        if (i.fields == 0 || i.field_dim != out.field_dim) out.field_dim = -1;
      }
      if (out.field_dim < 0) out.fields = out.field_dim = 0;
      return absl::OkStatus();
    case proto::GraphNodeSpec::kSum:
    case proto::GraphNodeSpec::kProduct:
    case proto::GraphNodeSpec::kDot:
      for (size_t k = 1; k < in.size(); ++k) {
        if (in[k].width != in[0].width) {
          return Invalid(
              absl::StrCat(at, ": inputs[", k, "] ", input_name(k)),
              absl::StrCat("width ", in[k].width, " differs from inputs[0] ", input_name(0), "'s ",
                           in[0].width, " (", LayerName(s), " needs one width)"));
        }
      }
      out = s.has_dot() ? GraphShape{1, 1, 1} : in[0];
      return absl::OkStatus();
    case proto::GraphNodeSpec::kMlp: {
      const proto::MlpSpec& mlp = s.mlp();
      if (mlp.widths().empty()) return Invalid(at, "mlp.widths: needs at least one layer");
      for (int k = 0; k < mlp.widths_size(); ++k) {
        if (mlp.widths(k) == 0 || mlp.widths(k) > kMaxWidth) {
          return Invalid(absl::StrCat(at, ": mlp.widths[", k, "]"),
                         absl::StrCat(mlp.widths(k), " must be in [1, ", kMaxWidth, "]"));
        }
      }
      const float p = mlp.dropout();
      if (!(p >= 0 && p < 1)) {
        return Invalid(absl::StrCat(at, ": mlp.dropout"), absl::StrCat(p, " must be in [0, 1)"));
      }
      if (p > 0 && mlp.widths_size() < 2) {
        return Invalid(absl::StrCat(at, ": mlp.dropout"),
                       "drops the outputs of every layer but the last; a one-layer mlp has none");
      }
      const int last = static_cast<int>(mlp.widths(mlp.widths_size() - 1));
      out = {last, 1, last};
      node->parameters = MlpParameters(in[0].width, mlp);
      return absl::OkStatus();
    }
    case proto::GraphNodeSpec::kCross: {
      const proto::CrossSpec& cross = s.cross();
      if (cross.layers() == 0 || cross.layers() > kMaxCrossLayers) {
        return Invalid(absl::StrCat(at, ": cross.layers"),
                       absl::StrCat(cross.layers(), " must be in [1, ", kMaxCrossLayers, "]"));
      }
      if (cross.kind() == proto::CROSS_V1 && cross.rank() != 0) {
        return Invalid(absl::StrCat(at, ": cross.rank"), "only CROSS_V2 has a rank");
      }
      if (cross.rank() >= static_cast<uint32_t>(in[0].width) && cross.rank() != 0) {
        return Invalid(absl::StrCat(at, ": cross.rank"),
                       absl::StrCat(cross.rank(), " must be < the input's width ", in[0].width,
                                    " (0: full rank)"));
      }
      out = in[0];
      node->parameters = CrossParameters(in[0].width, cross);
      return absl::OkStatus();
    }
    case proto::GraphNodeSpec::kFm:
    case proto::GraphNodeSpec::kDotInteraction: {
      const bool self = s.has_dot_interaction() && s.dot_interaction().self_terms();
      const int min_fields = self ? 1 : 2;
      if (in[0].fields < min_fields) {
        return Invalid(absl::StrCat(at, ": inputs[0] ", input_name(0)),
                       absl::StrCat(LayerName(s), " needs a group of at least ", min_fields,
                                    " vectors of one width; the input is ",
                                    in[0].fields == 0 ? "vectors of different widths"
                                                      : absl::StrCat(in[0].fields, " vector"),
                                    " (width ", in[0].width, ")"));
      }
      const int f = in[0].fields;
      const int width = s.has_fm() ? 1 : f * (f - 1) / 2 + (self ? f : 0);
      out = {width, 1, width};
      return absl::OkStatus();
    }
    case proto::GraphNodeSpec::kHead: {
      if (in[0].width != 1) {
        return Invalid(absl::StrCat(at, ": inputs[0] ", input_name(0)),
                       absl::StrCat("a head takes one value per sample (width 1); the input has "
                                    "width ",
                                    in[0].width));
      }
      const std::vector<std::string> labels = LabelNames(spec);
      const std::string& label = s.head().label();
      bool known = label.empty();
      for (const std::string& l : labels) known = known || l == label;
      if (!known) {
        return Invalid(absl::StrCat(at, ": head.label \"", label, "\""),
                       absl::StrCat("the data has no such label (its labels: ",
                                    absl::StrJoin(labels, ", "), ")"));
      }
      const float weight = s.head().loss_weight();
      if (!(weight >= 0) || !std::isfinite(weight)) {
        return Invalid(absl::StrCat(at, ": head.loss_weight"),
                       absl::StrCat(weight, " must be a finite number >= 0 (0 means 1)"));
      }
      out = {1, 1, 1};
      return absl::OkStatus();
    }
    default:
      return Invalid(at,
                     "no layer (dense, embeddings, concat, sum, product, dot, mlp, cross, fm, "
                     "dot_interaction or head)");
  }
}

}  // namespace

std::vector<ModelFeature> ModelFeaturesOf(const proto::JobSpec& spec) {
  std::vector<ModelFeature> features;
  if (!spec.data().has_schema()) {
    for (const proto::TableSpec& t : spec.tables()) {
      features.push_back({t.name(), static_cast<int>(t.dim())});
    }
    return features;
  }
  for (const proto::ColumnSpec& c : spec.data().schema().columns()) {
    if (c.role() != proto::COLUMN_SPARSE) continue;
    const std::string& table = c.table().empty() ? c.name() : c.table();
    for (const proto::TableSpec& t : spec.tables()) {
      if (t.name() == table) features.push_back({c.name(), static_cast<int>(t.dim())});
    }
  }
  return features;
}

std::string LayerName(const proto::GraphNodeSpec& node) {
  switch (node.layer_case()) {
    case proto::GraphNodeSpec::kDense:
      return "dense";
    case proto::GraphNodeSpec::kEmbeddings:
      return "embeddings";
    case proto::GraphNodeSpec::kConcat:
      return "concat";
    case proto::GraphNodeSpec::kSum:
      return "sum";
    case proto::GraphNodeSpec::kProduct:
      return "product";
    case proto::GraphNodeSpec::kDot:
      return "dot";
    case proto::GraphNodeSpec::kMlp:
      return "mlp";
    case proto::GraphNodeSpec::kCross:
      return "cross";
    case proto::GraphNodeSpec::kFm:
      return "fm";
    case proto::GraphNodeSpec::kDotInteraction:
      return "dot_interaction";
    case proto::GraphNodeSpec::kHead:
      return "head";
    default:
      return "none";
  }
}

int64_t ResolvedGraph::parameters() const {
  int64_t total = 0;
  for (const GraphNode& n : nodes) total += n.parameters;
  return total;
}

absl::StatusOr<ResolvedGraph> ResolveModelGraph(const proto::JobSpec& spec) {
  const proto::ModelGraphSpec graph = ModelGraphOf(spec);
  const int n = graph.nodes_size();
  if (n == 0) return Invalid("model.graph.nodes", "a graph needs nodes");
  std::map<std::string, int> index;
  for (int i = 0; i < n; ++i) {
    const std::string& name = graph.nodes(i).name();
    if (!ValidName(name)) {
      return Invalid(absl::StrCat("model.graph.nodes[", i, "].name \"", name, "\""),
                     "needs letters, digits, '_', '-' or '.'");
    }
    if (!index.emplace(name, i).second) {
      return Invalid(NodeField(i, name),
                     absl::StrCat("the name is also nodes[", index[name], "]'s"));
    }
  }
  std::vector<std::vector<int>> inputs(n);
  std::vector<int> consumers(n, 0);
  std::vector<int> heads;
  std::map<std::string, int> head_of_label;
  const std::string first_label = DataLabelsOf(spec)[0].name;
  for (int i = 0; i < n; ++i) {
    const proto::GraphNodeSpec& node = graph.nodes(i);
    const std::string at = NodeField(i, node.name());
    if (node.layer_case() == proto::GraphNodeSpec::LAYER_NOT_SET) {
      return Invalid(at,
                     "no layer (dense, embeddings, concat, sum, product, dot, mlp, cross, fm, "
                     "dot_interaction or head)");
    }
    const auto [min, max] = InputCount(node);
    if (node.inputs_size() < min || node.inputs_size() > max) {
      const std::string want = min == max ? absl::StrCat(min) : absl::StrCat("at least ", min);
      return Invalid(absl::StrCat(at, ".inputs"),
                     absl::StrCat(LayerName(node), " takes ", want, " input",
                                  min == 1 && max == 1 ? "" : "s", "; got ", node.inputs_size()));
    }
    for (int k = 0; k < node.inputs_size(); ++k) {
      auto it = index.find(node.inputs(k));
      if (it == index.end()) {
        return Invalid(absl::StrCat(at, ".inputs[", k, "] \"", node.inputs(k), "\""),
                       "no node of that name");
      }
      if (graph.nodes(it->second).has_head()) {
        return Invalid(absl::StrCat(at, ".inputs[", k, "] \"", node.inputs(k), "\""),
                       "a head is an output, not an input");
      }
      inputs[i].push_back(it->second);
      ++consumers[it->second];
    }
    if (node.has_head()) {
      const std::string label = node.head().label().empty() ? first_label : node.head().label();
      if (auto [it, fresh] = head_of_label.emplace(label, i); !fresh) {
        return Invalid(absl::StrCat(at, ": head.label \"", label, "\""),
                       absl::StrCat("nodes[", it->second, "] \"", graph.nodes(it->second).name(),
                                    "\" predicts it too: one head per label"));
      }
      heads.push_back(i);
    }
  }
  if (heads.empty()) return Invalid("model.graph", "no head: a graph needs a head node");
  for (int i = 0; i < n; ++i) {
    if (consumers[i] == 0 && !graph.nodes(i).has_head()) {
      return Invalid(NodeField(i, graph.nodes(i).name()),
                     "its output reaches no head (no node takes it as an input)");
    }
  }
  auto order = TopologicalOrder(graph, inputs);
  if (!order.ok()) return order.status();
  const std::vector<ModelFeature> features = ModelFeaturesOf(spec);
  ResolvedGraph resolved;
  std::vector<int> position(n);
  for (int k = 0; k < n; ++k) position[(*order)[k]] = k;
  for (int k = 0; k < n; ++k) {
    const int i = (*order)[k];
    GraphNode node;
    node.spec = graph.nodes(i);
    node.listed = i;
    for (int j : inputs[i]) node.inputs.push_back(position[j]);
    if (auto s = ShapeNode(spec, features, NodeField(i, node.spec.name()), resolved.nodes, &node);
        !s.ok()) {
      return s;
    }
    if (node.shape.width > kMaxWidth) {
      return Invalid(NodeField(i, node.spec.name()),
                     absl::StrCat("output width ", node.shape.width, " exceeds ", kMaxWidth));
    }
    resolved.nodes.push_back(std::move(node));
  }
  for (int h : heads) resolved.heads.push_back(position[h]);
  for (int i : BackwardOrder(inputs)) resolved.backward.push_back(position[i]);
  return resolved;
}

std::string DescribeModelGraph(const ResolvedGraph& graph) {
  std::string text = absl::StrFormat("%-20s %-16s %-28s %-16s %12s\n", "node", "layer", "inputs",
                                     "output", "parameters");
  for (const GraphNode& node : graph.nodes) {
    std::vector<std::string> inputs;
    for (int j : node.inputs) inputs.push_back(graph.nodes[j].spec.name());
    std::string layer = LayerName(node.spec);
    if (node.spec.has_cross()) {
      const proto::CrossSpec& c = node.spec.cross();
      layer = absl::StrCat("cross ", c.kind() == proto::CROSS_V2 ? "v2" : "v1", " x", c.layers(),
                           c.rank() > 0 ? absl::StrCat(" r", c.rank()) : "");
    }
    if (node.spec.has_embeddings()) layer = absl::StrCat("embeddings x", node.features.size());
    text += absl::StrFormat("%-20s %-16s %-28s %-16s %12d\n", node.spec.name(), layer,
                            inputs.empty() ? "-" : absl::StrJoin(inputs, ","),
                            ShapeText(node.shape), node.parameters);
  }
  text += absl::StrFormat("%-83s %12d\n", "total", graph.parameters());
  return text;
}

}  // namespace herald
