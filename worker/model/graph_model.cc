// A model graph (model.graph, or a built-in kind's) as a RecModel: the
// feature matrix X = [dense |
// bag_0 | …] is the graph's input; dense and embeddings nodes are column
// views of X (or gathered copies when their features are not one run of
// X's columns), as is a concat of views of consecutive columns; every
// other node is a GraphLayer; each head node's input is an output of the
// model (a logit or a regression value), heads in the order listed.
// Layers reserve their parameters in the order the spec lists the nodes;
// forward and backward run in the resolved orders (model_graph.h), so
// gradients into a node used twice add in a fixed order. The dense
// features get no gradient.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "worker/model/graph_layer.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

class GraphModel final : public RecModel {
 public:
  GraphModel(Device* device, ModelShape shape, ResolvedGraph graph, uint64_t seed)
      : RecModel(device, std::move(shape)), graph_(std::move(graph)) {
    const int n = static_cast<int>(graph_.nodes.size());
    nodes_.resize(n);
    std::vector<int> listed(n);  // the node the spec lists k-th
    for (int i = 0; i < n; ++i) {
      const GraphNode& node = graph_.nodes[i];
      Node& built = nodes_[i];
      listed[node.listed] = i;
      if (node.spec.has_dense()) {
        built.column = 0;
        built.dense = true;
      } else if (node.spec.has_embeddings()) {
        PlaceEmbeddings(node, &built);
      } else if (node.spec.has_concat() && ConsecutiveViews(node)) {
        built.column = nodes_[node.inputs[0]].column;
      }
    }
    for (int i : listed) {
      const GraphNode& node = graph_.nodes[i];
      Node& built = nodes_[i];
      if (built.column >= 0 || built.layer != nullptr || node.spec.has_head()) continue;
      std::vector<GraphShape> inputs;
      for (int j : node.inputs) inputs.push_back(graph_.nodes[j].shape);
      const size_t first = params_.size();
      built.layer = CreateGraphLayer(node, inputs, device, &params_, seed, &draw_);
      built.params = {first, params_.size()};
    }
    for (size_t h = 0; h < graph_.heads.size(); ++h) outputs_.emplace_back(device, 0);
    // After the k-th backward node: the parameters of every node still to
    // run lie below ready_after_[k] (the largest end among them).
    for (size_t k = 0; k < graph_.backward.size(); ++k) {
      size_t below = 0;
      for (size_t later = k + 1; later < graph_.backward.size(); ++later) {
        const auto [first, end] = nodes_[graph_.backward[later]].params;
        if (end > first) below = std::max(below, end);
      }
      ready_after_.push_back(below);
    }
  }

 private:
  struct Node {
    std::unique_ptr<GraphLayer> layer;  // null: a view of X, or the head
    int column = -1;                    // a view: its first column in X
    bool dense = false;                 // the dense features: no gradient
    bool reads_x = false;               // a gathered embeddings node
    std::pair<size_t, size_t> params;   // its parameters: [first, end) of params_
    Tensor output;                      // of the last Forward
    // Its inputs' outputs and gradients, kept from step to step (no
    // allocation per step).
    std::vector<Tensor> inputs;
    std::vector<TensorGrad> grads;
  };

  // An embeddings node: a view when its features are consecutive bags of
  // X in order, else a gather from X.
  void PlaceEmbeddings(const GraphNode& node, Node* built) {
    bool run = true;
    for (size_t k = 1; k < node.features.size(); ++k) {
      run = run && node.features[k] == node.features[k - 1] + 1;
    }
    if (run) {
      built->column = shape_.column(node.features[0]);
      return;
    }
    std::vector<ColumnRange> ranges;
    for (int f : node.features) ranges.push_back({shape_.column(f), shape_.tables[f].dim});
    built->layer = CreateColumnGather(std::move(ranges), device_);
    built->reads_x = true;
  }

  // A concat of views of consecutive columns of X is a view itself
  // ([dense | every bag] costs no copy).
  bool ConsecutiveViews(const GraphNode& node) const {
    int next = nodes_[node.inputs[0]].column;
    for (int j : node.inputs) {
      if (nodes_[j].column < 0 || nodes_[j].column != next) return false;
      next += graph_.nodes[j].shape.width;
    }
    return true;
  }

  void BeginPass(const ModelInput& in, bool training) override {
    draw_ = {training, in.iteration, in.sample_ids};
  }

  std::vector<const float*> ForwardOutputs(const float* x, int rows) override {
    const int width = shape_.width();
    rows_ = rows;
    x_ = x;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      Node& node = nodes_[i];
      if (node.column >= 0) {
        node.output = {x + node.column, width};
      } else if (node.layer != nullptr) {
        node.inputs.clear();
        if (node.reads_x) node.inputs.push_back({x, width});
        for (int j : graph_.nodes[i].inputs) node.inputs.push_back(nodes_[j].output);
        node.output = node.layer->Forward(node.inputs, rows);
      }
    }
    // Each head's input, contiguous.
    std::vector<const float*> outputs;
    for (size_t h = 0; h < graph_.heads.size(); ++h) {
      const Tensor out = nodes_[graph_.nodes[graph_.heads[h]].inputs[0]].output;
      if (out.stride == 1) {
        outputs.push_back(out.data);
        continue;
      }
      outputs_[h].Resize(rows);
      device_->Copy2D(out.data, out.stride, rows, 1, outputs_[h].data(), 1);
      outputs.push_back(outputs_[h].data());
    }
    return outputs;
  }

  void BackwardOutputs(const std::vector<const float*>& doutputs, float* dx,
                       const GradsReady& grads_ready) override {
    const int width = shape_.width();
    for (size_t h = 0; h < graph_.heads.size(); ++h) {
      const TensorGrad d = Grad(graph_.nodes[graph_.heads[h]].inputs[0], dx);
      if (d.data == nullptr) continue;  // a head straight on a dense feature
      device_->Add2D(doutputs[h], 1, rows_, 1, d.data, d.stride);
    }
    size_t ready = params_.size();  // told so far: [ready, size) final
    for (size_t k = 0; k < graph_.backward.size(); ++k) {
      Node& node = nodes_[graph_.backward[k]];
      if (node.layer != nullptr) {
        node.grads.clear();
        if (node.reads_x) node.grads.push_back({dx, width});
        for (int j : graph_.nodes[graph_.backward[k]].inputs) node.grads.push_back(Grad(j, dx));
        if (grads_ready) {
          // Within the node: its parameters from `begin` up, and every
          // node's above those of the nodes still to run.
          node.layer->BackwardInParts(node.grads, [&](size_t begin) {
            if (begin <= node.params.first) return;  // the whole node: told below
            const size_t final_from = std::max(begin, ready_after_[k]);
            if (final_from < ready) grads_ready(ready = final_from);
          });
        } else {
          node.layer->Backward(node.grads);
        }
      }
      if (grads_ready && ready_after_[k] < ready) {
        ready = ready_after_[k];
        grads_ready(ready);
      }
    }
    if (grads_ready && ready > 0) grads_ready(0);  // parameters of no backward node
  }

  TensorGrad Grad(int node, float* dx) {
    if (nodes_[node].dense) return {nullptr, 0};
    if (nodes_[node].column >= 0) return {dx + nodes_[node].column, shape_.width()};
    return nodes_[node].layer->output_grad();
  }

  ResolvedGraph graph_;
  std::vector<Node> nodes_;
  std::vector<DeviceArray<float>> outputs_;  // per head, where its input is strided
  DropoutDraw draw_;                         // this pass's (BeginPass)
  std::vector<size_t> ready_after_;          // per backward node (constructor)
  const float* x_ = nullptr;
  int rows_ = 0;
};

}  // namespace

std::unique_ptr<RecModel> MakeGraphModel(Device* device, ModelShape shape, ResolvedGraph graph,
                                         uint64_t seed) {
  return std::make_unique<GraphModel>(device, std::move(shape), std::move(graph), seed);
}

}  // namespace herald::worker
