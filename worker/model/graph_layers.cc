// The layers of model-graph nodes (graph_layer.h): combinators written here
// on the Device interface, networks adapted from the built-in models'
// layers.
#include <memory>
#include <vector>

#include "worker/device/device_array.h"
#include "worker/model/concat.h"
#include "worker/model/cross_layer.h"
#include "worker/model/cross_v2_layer.h"
#include "worker/model/dot_interaction.h"
#include "worker/model/fm_interaction.h"
#include "worker/model/graph_layer.h"
#include "worker/model/mlp.h"

namespace herald::worker {
namespace {

// A layer owning a contiguous rows × width output and its gradient.
class OwnedOutput : public GraphLayer {
 public:
  OwnedOutput(Device* device, int width) : device_(device), width_(width) {
    y_.Bind(device);
    dy_.Bind(device);
  }
  TensorGrad output_grad() override { return {dy_.data(), width_}; }

 protected:
  Tensor Resize(int rows) {
    rows_ = rows;
    y_.Resize(static_cast<size_t>(rows) * width_);
    dy_.Resize(y_.size());
    device_->Fill(dy_.data(), dy_.size(), 0.0f);
    return {y_.data(), width_};
  }

  Device* device_;
  int width_;
  int rows_ = 0;
  std::vector<Tensor> in_;
  DeviceArray<float> y_, dy_;
};

class ColumnGather final : public OwnedOutput {
 public:
  ColumnGather(std::vector<ColumnRange> ranges, Device* device, int width)
      : OwnedOutput(device, width), ranges_(std::move(ranges)) {}

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    in_ = in;
    const Tensor out = Resize(rows);
    int column = 0;
    for (const ColumnRange& r : ranges_) {
      device_->Copy2D(in[0].data + r.begin, in[0].stride, rows, r.width, y_.data() + column,
                      width_);
      column += r.width;
    }
    return out;
  }

  void Backward(const std::vector<TensorGrad>& grads) override {
    if (grads[0].data == nullptr) return;
    int column = 0;
    for (const ColumnRange& r : ranges_) {
      device_->Add2D(dy_.data() + column, width_, rows_, r.width, grads[0].data + r.begin,
                     grads[0].stride);
      column += r.width;
    }
  }

 private:
  std::vector<ColumnRange> ranges_;
};

class ConcatLayer final : public GraphLayer {
 public:
  ConcatLayer(Device* device, std::vector<int> widths) : concat_(device, std::move(widths)) {}

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    std::vector<Concat::Input> inputs;
    for (const Tensor& t : in) inputs.push_back({t.data, t.stride});
    return {concat_.Forward(inputs, rows), concat_.out()};
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    std::vector<Concat::InputGrad> g;
    for (const TensorGrad& t : grads) g.push_back({t.data, t.stride});
    concat_.Backward(g);
  }
  TensorGrad output_grad() override { return {concat_.output_grad(), concat_.out()}; }

 private:
  Concat concat_;
};

// y = Σ inputs, in input order.
class SumLayer final : public OwnedOutput {
 public:
  using OwnedOutput::OwnedOutput;

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    const Tensor out = Resize(rows);
    device_->Copy2D(in[0].data, in[0].stride, rows, width_, y_.data(), width_);
    for (size_t k = 1; k < in.size(); ++k) {
      device_->Add2D(in[k].data, in[k].stride, rows, width_, y_.data(), width_);
    }
    return out;
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    for (const TensorGrad& g : grads) {
      if (g.data != nullptr) device_->Add2D(dy_.data(), width_, rows_, width_, g.data, g.stride);
    }
  }
};

// y = a ⊙ b.
class ProductLayer final : public OwnedOutput {
 public:
  using OwnedOutput::OwnedOutput;

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    in_ = in;
    const Tensor out = Resize(rows);
    device_->Multiply2D(in[0].data, in[0].stride, in[1].data, in[1].stride, rows, width_, y_.data(),
                        width_, /*accumulate=*/false);
    return out;
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    for (int k = 0; k < 2; ++k) {  // da += dy ⊙ b, db += dy ⊙ a
      if (grads[k].data == nullptr) continue;
      const Tensor& other = in_[1 - k];
      device_->Multiply2D(dy_.data(), width_, other.data, other.stride, rows_, width_,
                          grads[k].data, grads[k].stride, /*accumulate=*/true);
    }
  }
};

// y[r] = a[r]·b[r].
class DotLayer final : public OwnedOutput {
 public:
  DotLayer(Device* device, int in_width) : OwnedOutput(device, 1), in_width_(in_width) {}

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    in_ = in;
    const Tensor out = Resize(rows);
    device_->RowDots(in[0].data, in[0].stride, in[1].data, in[1].stride, rows, in_width_,
                     y_.data());
    return out;
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    for (int k = 0; k < 2; ++k) {  // da += dy · b, db += dy · a
      if (grads[k].data == nullptr) continue;
      const Tensor& other = in_[1 - k];
      device_->AddScaledRows(dy_.data(), other.data, other.stride, rows_, in_width_, grads[k].data,
                             grads[k].stride);
    }
  }

 private:
  int in_width_;
};

class MlpLayer final : public GraphLayer {
 public:
  MlpLayer(Device* device, DenseParameters* params, int in, const proto::MlpSpec& spec,
           uint64_t seed, uint32_t node, const DropoutDraw* draw)
      : mlp_(device, params, in, std::vector<int>(spec.widths().begin(), spec.widths().end()),
             spec.activate_last(), spec.activation() == proto::ACTIVATION_RELU),
        draw_(draw) {
    if (spec.dropout() > 0) mlp_.SetDropout(spec.dropout(), seed, node);
  }

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    return {mlp_.Forward(in[0].data, in[0].stride, rows, draw_), mlp_.out()};
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    mlp_.Backward(grads[0].data, grads[0].stride);
  }
  void BackwardInParts(const std::vector<TensorGrad>& grads,
                       const ParamsFinal& final_from) override {
    mlp_.Backward(grads[0].data, grads[0].stride, final_from);
  }
  TensorGrad output_grad() override { return {mlp_.output_grad(), mlp_.out()}; }

 private:
  Mlp mlp_;
  const DropoutDraw* draw_;
};

// A stack of cross layers over x0 = the input: x_{l+1} = cross_l(x0, x_l).
template <typename Layer>
class CrossStack final : public GraphLayer {
 public:
  template <typename... Args>
  CrossStack(int layers, int width, Device* device, DenseParameters* params, Args... args)
      : width_(width) {
    for (int i = 0; i < layers; ++i) {
      layers_.push_back(std::make_unique<Layer>(device, params, width, args...));
    }
  }

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    Tensor xl = in[0];
    for (auto& layer : layers_) {
      xl = {layer->Forward(in[0].data, in[0].stride, xl.data, xl.stride, rows), width_};
    }
    return xl;
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    for (size_t i = layers_.size(); i-- > 0;) {
      TensorGrad dxl = i > 0 ? TensorGrad{layers_[i - 1]->output_grad(), width_} : grads[0];
      layers_[i]->Backward(grads[0].data, grads[0].stride, dxl.data, dxl.stride);
    }
  }
  TensorGrad output_grad() override { return {layers_.back()->output_grad(), width_}; }

 private:
  int width_;
  std::vector<std::unique_ptr<Layer>> layers_;
};

class FmLayer final : public GraphLayer {
 public:
  FmLayer(Device* device, const GraphShape& in) : fm_(device, in.fields, in.field_dim) {}

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    return {fm_.Forward(in[0].data, in[0].stride, rows), 1};
  }
  void Backward(const std::vector<TensorGrad>& grads) override {
    if (grads[0].data != nullptr) fm_.Backward(grads[0].data, grads[0].stride);
  }
  TensorGrad output_grad() override { return {fm_.output_grad(), 1}; }

 private:
  FmInteraction fm_;
};

// DotInteraction's pairs, then (self_terms) each field's dot with itself.
class DotInteractionLayer final : public OwnedOutput {
 public:
  DotInteractionLayer(Device* device, const GraphShape& in, bool self_terms)
      : OwnedOutput(device, in.fields * (in.fields - 1) / 2 + (self_terms ? in.fields : 0)),
        fields_(in.fields),
        dim_(in.field_dim),
        pairs_(fields_ * (fields_ - 1) / 2),
        self_terms_(self_terms) {
    if (pairs_ > 0) interaction_ = std::make_unique<DotInteraction>(device, fields_, dim_);
    self_.Bind(device);
  }

  Tensor Forward(const std::vector<Tensor>& in, int rows) override {
    in_ = in;
    const Tensor out = Resize(rows);
    if (interaction_ != nullptr) {
      device_->Copy2D(interaction_->Forward(in[0].data, in[0].stride, rows), pairs_, rows, pairs_,
                      y_.data(), width_);
    }
    if (self_terms_) {
      self_.Resize(rows);
      for (int f = 0; f < fields_; ++f) {
        const float* x = in[0].data + f * dim_;
        device_->RowDots(x, in[0].stride, x, in[0].stride, rows, dim_, self_.data());
        device_->Copy2D(self_.data(), 1, rows, 1, y_.data() + pairs_ + f, width_);
      }
    }
    return out;
  }

  void Backward(const std::vector<TensorGrad>& grads) override {
    const TensorGrad& dx = grads[0];
    if (dx.data == nullptr) return;
    if (interaction_ != nullptr) {
      device_->Copy2D(dy_.data(), width_, rows_, pairs_, interaction_->output_grad(), pairs_);
      interaction_->Backward(dx.data, dx.stride);
    }
    if (!self_terms_) return;
    for (int f = 0; f < fields_; ++f) {  // dx_f += 2 · dy_f · x_f
      device_->Copy2D(dy_.data() + pairs_ + f, width_, rows_, 1, self_.data(), 1);
      device_->Axpy(rows_, 1.0f, self_.data(), self_.data());  // doubles, exactly
      device_->AddScaledRows(self_.data(), in_[0].data + f * dim_, in_[0].stride, rows_, dim_,
                             dx.data + f * dim_, dx.stride);
    }
  }

 private:
  const int fields_, dim_, pairs_;
  const bool self_terms_;
  std::unique_ptr<DotInteraction> interaction_;
  DeviceArray<float> self_;  // one column: a field's self term, or its gradient
};

}  // namespace

std::unique_ptr<GraphLayer> CreateColumnGather(std::vector<ColumnRange> ranges, Device* device) {
  int width = 0;
  for (const ColumnRange& r : ranges) width += r.width;
  return std::make_unique<ColumnGather>(std::move(ranges), device, width);
}

std::unique_ptr<GraphLayer> CreateGraphLayer(const GraphNode& node,
                                             const std::vector<GraphShape>& inputs, Device* device,
                                             DenseParameters* params, uint64_t seed,
                                             const DropoutDraw* draw) {
  const proto::GraphNodeSpec& s = node.spec;
  switch (s.layer_case()) {
    case proto::GraphNodeSpec::kConcat: {
      std::vector<int> widths;
      for (const GraphShape& in : inputs) widths.push_back(in.width);
      return std::make_unique<ConcatLayer>(device, std::move(widths));
    }
    case proto::GraphNodeSpec::kSum:
      return std::make_unique<SumLayer>(device, node.shape.width);
    case proto::GraphNodeSpec::kProduct:
      return std::make_unique<ProductLayer>(device, node.shape.width);
    case proto::GraphNodeSpec::kDot:
      return std::make_unique<DotLayer>(device, inputs[0].width);
    case proto::GraphNodeSpec::kMlp:
      return std::make_unique<MlpLayer>(device, params, inputs[0].width, s.mlp(), seed,
                                        static_cast<uint32_t>(node.listed), draw);
    case proto::GraphNodeSpec::kCross: {
      const int layers = static_cast<int>(s.cross().layers());
      if (s.cross().kind() == proto::CROSS_V2) {
        return std::make_unique<CrossStack<CrossV2Layer>>(layers, inputs[0].width, device, params,
                                                          static_cast<int>(s.cross().rank()));
      }
      return std::make_unique<CrossStack<CrossLayer>>(layers, inputs[0].width, device, params);
    }
    case proto::GraphNodeSpec::kFm:
      return std::make_unique<FmLayer>(device, inputs[0]);
    case proto::GraphNodeSpec::kDotInteraction:
      return std::make_unique<DotInteractionLayer>(device, inputs[0],
                                                   s.dot_interaction().self_terms());
    default:
      return nullptr;
  }
}

}  // namespace herald::worker
