#include "worker/model/fm_interaction.h"
#include "worker/model/linear.h"
#include "worker/model/mlp.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

class DeepFm final : public RecModel {
 public:
  DeepFm(Device* device, ModelShape shape, const std::vector<int>& hidden)
      : RecModel(device, std::move(shape)),
        first_order_(device, &params_, shape_.width(), 1),
        fm_(device, static_cast<int>(shape_.tables.size()), shape_.tables[0].dim),
        deep_(device, &params_, shape_.width(), HiddenThenLogit(hidden), false) {
    logits_.Bind(device);
  }

 private:
  const float* ForwardHead(const float* x, int rows) override {
    const int width = shape_.width();
    first_order_.Forward(x, width, rows);
    fm_.Forward(x + shape_.num_dense, width, rows);
    deep_.Forward(x, width, rows);
    logits_.Resize(rows);
    device_->Copy2D(first_order_.output(), 1, rows, 1, logits_.data(), 1);
    device_->Axpy(rows, 1.0f, fm_.output(), logits_.data());
    device_->Axpy(rows, 1.0f, deep_.output(), logits_.data());
    return logits_.data();
  }

  void BackwardHead(const float* dlogits, float* dx) override {
    const int rows = static_cast<int>(logits_.size());
    const int width = shape_.width();
    device_->Axpy(rows, 1.0f, dlogits, first_order_.output_grad());
    device_->Axpy(rows, 1.0f, dlogits, fm_.output_grad());
    device_->Axpy(rows, 1.0f, dlogits, deep_.output_grad());
    first_order_.Backward(dx, width);
    fm_.Backward(dx + shape_.num_dense, width);
    deep_.Backward(dx, width);
  }

  Linear first_order_;
  FmInteraction fm_;
  Mlp deep_;
  DeviceArray<float> logits_;
};

}  // namespace

std::unique_ptr<RecModel> MakeDeepFm(Device* device, ModelShape shape,
                                     const std::vector<int>& hidden) {
  return std::make_unique<DeepFm>(device, std::move(shape), hidden);
}

}  // namespace herald::worker
