#include "common/builtin_model_graph.h"

#include <string>
#include <vector>

#include "common/model_graph.h"

namespace herald {
namespace {

// Appends nodes to a graph.
class GraphWriter {
 public:
  explicit GraphWriter(proto::ModelGraphSpec* graph) : graph_(graph) {}

  proto::GraphNodeSpec* Add(const std::string& name, std::vector<std::string> inputs) {
    proto::GraphNodeSpec* node = graph_->add_nodes();
    node->set_name(name);
    for (std::string& in : inputs) node->add_inputs(std::move(in));
    return node;
  }

  void Mlp(const std::string& name, const std::string& input, const std::vector<uint32_t>& widths,
           proto::Activation activation, bool activate_last) {
    proto::MlpSpec* mlp = Add(name, {input})->mutable_mlp();
    for (uint32_t w : widths) mlp->add_widths(w);
    mlp->set_activation(activation);
    mlp->set_activate_last(activate_last);
  }

  // "dense" and "embeddings" (every feature), and "features": every column
  // of the feature matrix (a concat of the two, or the embeddings alone
  // without dense features). Returns the name of the whole.
  std::string Features(const proto::JobSpec& spec) {
    if (spec.num_dense() == 0) {
      Add("embeddings", {})->mutable_embeddings();
      return "embeddings";
    }
    Add("dense", {})->mutable_dense();
    Add("embeddings", {})->mutable_embeddings();
    Add("features", {"dense", "embeddings"})->mutable_concat();
    return "features";
  }

  void Head(const std::string& input) { Add("head", {input})->mutable_head(); }

 private:
  proto::ModelGraphSpec* graph_;
};

std::vector<uint32_t> Widths(const google::protobuf::RepeatedField<uint32_t>& widths) {
  return std::vector<uint32_t>(widths.begin(), widths.end());
}

std::vector<uint32_t> HiddenThenLogit(std::vector<uint32_t> hidden) {
  hidden.push_back(1);
  return hidden;
}

}  // namespace

// Node order is the contract (model_graph.h): parameters are laid out in
// listing order, and backward takes ready nodes in listing order, which is
// how each hand-written model reserved its layers and summed into its
// gradients.
proto::ModelGraphSpec BuiltinModelGraph(const proto::JobSpec& spec) {
  const proto::ModelSpec& m = spec.model();
  const std::vector<uint32_t> hidden = Widths(m.top_mlp());
  proto::ModelGraphSpec graph;
  GraphWriter g(&graph);
  switch (m.kind()) {
    case proto::MODEL_WIDE_AND_DEEP: {  // logit = wide(X) + deep(X)
      const std::string x = g.Features(spec);
      g.Mlp("wide", x, {1}, proto::ACTIVATION_NONE, false);
      g.Mlp("deep", x, HiddenThenLogit(hidden), proto::ACTIVATION_RELU, false);
      g.Add("logit", {"wide", "deep"})->mutable_sum();
      break;
    }
    case proto::MODEL_DEEPFM: {  // logit = first_order(X) + FM(bags) + deep(X)
      const std::string x = g.Features(spec);
      g.Mlp("first_order", x, {1}, proto::ACTIVATION_NONE, false);
      g.Add("fm", {"embeddings"})->mutable_fm();
      g.Mlp("deep", x, HiddenThenLogit(hidden), proto::ACTIVATION_RELU, false);
      g.Add("logit", {"first_order", "fm", "deep"})->mutable_sum();
      break;
    }
    case proto::MODEL_DCN: {  // logit = linear([cross_L(X), deep(X)])
      const std::string x = g.Features(spec);
      g.Mlp("deep", x, hidden, proto::ACTIVATION_RELU, true);
      g.Mlp("logit", "both", {1}, proto::ACTIVATION_NONE, false);
      proto::CrossSpec* cross = g.Add("cross", {x})->mutable_cross();
      cross->set_layers(m.cross_layers());
      cross->set_kind(proto::CROSS_V1);
      g.Add("both", {"cross", "deep"})->mutable_concat();
      break;
    }
    case proto::MODEL_NCF: {  // NeuMF: logit = linear([user ⊙ item, deep(X)])
      const std::vector<ModelFeature> features = ModelFeaturesOf(spec);
      g.Add("user", {})->mutable_embeddings()->add_features(features[0].name);
      g.Add("item", {})->mutable_embeddings()->add_features(features[1].name);
      g.Add("gmf", {"user", "item"})->mutable_product();
      const std::string x = g.Features(spec);
      g.Mlp("deep", x, hidden, proto::ACTIVATION_RELU, true);
      g.Mlp("logit", "both", {1}, proto::ACTIVATION_NONE, false);
      g.Add("both", {"gmf", "deep"})->mutable_concat();
      break;
    }
    case proto::MODEL_DLRM: {  // logit = top([z, dots of [z, bags]]), z = bottom(dense)
      g.Add("dense", {})->mutable_dense();
      g.Mlp("bottom", "dense", Widths(m.bottom_mlp()), proto::ACTIVATION_RELU, true);
      g.Add("embeddings", {})->mutable_embeddings();
      g.Add("vectors", {"bottom", "embeddings"})->mutable_concat();
      g.Add("interaction", {"vectors"})->mutable_dot_interaction();
      g.Add("both", {"bottom", "interaction"})->mutable_concat();
      g.Mlp("logit", "both", HiddenThenLogit(hidden), proto::ACTIVATION_RELU, false);
      break;
    }
    default:
      return graph;
  }
  g.Head("logit");
  return graph;
}

proto::ModelGraphSpec ModelGraphOf(const proto::JobSpec& spec) {
  return spec.model().has_graph() ? spec.model().graph() : BuiltinModelGraph(spec);
}

}  // namespace herald
