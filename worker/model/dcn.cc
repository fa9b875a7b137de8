#include <memory>

#include "worker/model/concat.h"
#include "worker/model/cross_layer.h"
#include "worker/model/linear.h"
#include "worker/model/mlp.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

class Dcn final : public RecModel {
 public:
  Dcn(Device* device, ModelShape shape, const std::vector<int>& hidden, int cross_layers)
      : RecModel(device, std::move(shape)),
        deep_(device, &params_, shape_.width(), hidden, true),
        concat_(device, {shape_.width(), hidden.back()}),
        output_(device, &params_, shape_.width() + hidden.back(), 1) {
    for (int i = 0; i < cross_layers; ++i) {
      cross_.push_back(std::make_unique<CrossLayer>(device, &params_, shape_.width()));
    }
  }

 private:
  const float* ForwardHead(const float* x, int rows) override {
    const int width = shape_.width();
    rows_ = rows;
    const float* xl = x;  // every cross output has the input's width
    for (auto& layer : cross_) xl = layer->Forward(x, width, xl, width, rows);
    deep_.Forward(x, width, rows);
    concat_.Forward({{xl, width}, {deep_.output(), deep_.out()}}, rows);
    return output_.Forward(concat_.output(), concat_.out(), rows);
  }

  void BackwardHead(const float* dlogits, float* dx) override {
    const int width = shape_.width();
    device_->Axpy(rows_, 1.0f, dlogits, output_.output_grad());
    output_.Backward(concat_.output_grad(), concat_.out());
    concat_.Backward({{cross_.back()->output_grad(), width}, {deep_.output_grad(), deep_.out()}});
    deep_.Backward(dx, width);
    for (size_t i = cross_.size(); i-- > 0;) {
      float* dxl = i > 0 ? cross_[i - 1]->output_grad() : dx;
      cross_[i]->Backward(dx, width, dxl, width);
    }
  }

  std::vector<std::unique_ptr<CrossLayer>> cross_;
  Mlp deep_;
  Concat concat_;
  Linear output_;
  int rows_ = 0;
};

}  // namespace

std::unique_ptr<RecModel> MakeDcn(Device* device, ModelShape shape, const std::vector<int>& hidden,
                                  int cross_layers) {
  return std::make_unique<Dcn>(device, std::move(shape), hidden, cross_layers);
}

}  // namespace herald::worker
