#pragma once
// One node of a model graph as a layer over its inputs' outputs
// (graph_model.h; conventions: linear.h). Each node's output is a
// rows × width matrix with a row stride, possibly a view into another
// tensor; its gradient is a matrix of the same shape that consumers ADD
// into.

#include <functional>
#include <memory>
#include <vector>

#include "common/model_graph.h"
#include "worker/device/device.h"
#include "worker/model/dense_parameters.h"
#include "worker/model/dropout.h"

namespace herald::worker {

struct Tensor {
  const float* data = nullptr;
  int stride = 0;
};

struct TensorGrad {
  float* data = nullptr;  // nullptr: not needed
  int stride = 0;
};

class GraphLayer {
 public:
  virtual ~GraphLayer() = default;
  // `inputs`: the node's inputs' outputs, in the node's input order; they
  // stay unchanged until Backward. Zeroes the output gradient.
  virtual Tensor Forward(const std::vector<Tensor>& inputs, int rows) = 0;
  // Reads the output gradient; ADDS into each input's gradient.
  virtual void Backward(const std::vector<TensorGrad>& input_grads) = 0;
  // Backward, calling `final_from(begin)` whenever the layer's parameter
  // gradients from `begin` (an offset in DenseParameters) to its last one
  // are final, before the rest is computed (a stack of layers, top first);
  // the default tells nothing before the whole layer is done.
  using ParamsFinal = std::function<void(size_t begin)>;
  virtual void BackwardInParts(const std::vector<TensorGrad>& input_grads,
                               const ParamsFinal& final_from) {
    (void)final_from;
    Backward(input_grads);
  }
  virtual TensorGrad output_grad() = 0;
};

// The layer of a computing node (every layer but dense, embeddings and
// head, which the graph model reads and writes itself). `inputs`: the
// shapes of the node's inputs. Reserves its parameters in `params` in the
// order model_graph.h counts them.
// `seed` and `draw` (the model's, updated before each pass) feed the
// dropout of an mlp node.
std::unique_ptr<GraphLayer> CreateGraphLayer(const GraphNode& node,
                                             const std::vector<GraphShape>& inputs, Device* device,
                                             DenseParameters* params, uint64_t seed,
                                             const DropoutDraw* draw);

}  // namespace herald::worker

namespace herald::worker {

// Columns [begin, begin + width) of its one input, for each range in
// order, side by side (an embeddings node whose features are not one
// contiguous run of the feature matrix).
struct ColumnRange {
  int begin = 0;
  int width = 0;
};
std::unique_ptr<GraphLayer> CreateColumnGather(std::vector<ColumnRange> ranges, Device* device);

}  // namespace herald::worker
