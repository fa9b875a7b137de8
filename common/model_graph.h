#pragma once
// A model graph (model.graph in the job spec) checked and put in order:
// each node's layer, its inputs, its output shape and its parameter count.
// Shared by the scheduler's submit check, the worker's model factory and
// `heraldctl model` (docs/configuration.md, "Model graphs").

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace herald {

// A sparse feature in the model's order (one bag of the feature matrix):
// a table's name (Criteo-shaped data) or a sparse column's (data.schema).
struct ModelFeature {
  std::string name;
  int dim = 0;
};
std::vector<ModelFeature> ModelFeaturesOf(const proto::JobSpec& spec);

// A node's output, rows × width. It is a group when it is `fields` vectors
// of `field_dim` side by side (fields × field_dim == width); fields == 0: not
// a group (vectors of different widths concatenated).
struct GraphShape {
  int width = 0;
  int fields = 0;
  int field_dim = 0;
};

struct GraphNode {
  proto::GraphNodeSpec spec;
  int listed = 0;             // its index in the spec's list of nodes
  std::vector<int> inputs;    // indices into ResolvedGraph::nodes, in spec order
  std::vector<int> features;  // embeddings: ModelFeaturesOf indices, in order
  GraphShape shape;
  // Dense parameters the node's layer reserves (graph_model.h gives the
  // layout).
  int64_t parameters = 0;
};

struct ResolvedGraph {
  // The forward order: every node after its inputs; among nodes that could
  // come next, the one listed first in the spec.
  std::vector<GraphNode> nodes;
  // The backward order (indices into nodes): every node after the nodes
  // that take its output; among nodes that could come next, the one
  // listed first. So gradients into a node used twice add in the order its
  // consumers are listed.
  std::vector<int> backward;
  // Parameter blocks are laid out node by node in the order the spec lists
  // the nodes (GraphNode::listed), whatever the forward order.
  // The head nodes' indices, in the order the spec lists them: the model's
  // outputs, one per trained label (TrainedLabelsOf, trained_label.h).
  std::vector<int> heads;
  int64_t parameters() const;
};

// The spec's model.graph, or its built-in kind's graph
// (builtin_model_graph.h). Errors: InvalidArgument naming the node and
// field, e.g. `model.graph.nodes[3] "cross": cross.rank 40 must be < the
// input's width 32`.
absl::StatusOr<ResolvedGraph> ResolveModelGraph(const proto::JobSpec& spec);

// One line per node: name, layer, inputs, output shape, parameters; then
// the total (`heraldctl model`).
std::string DescribeModelGraph(const ResolvedGraph& graph);

// The layer's name as the spec writes it ("mlp", "cross", …).
std::string LayerName(const proto::GraphNodeSpec& node);

}  // namespace herald
