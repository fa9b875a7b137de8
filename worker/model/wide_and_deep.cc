#include "worker/model/linear.h"
#include "worker/model/mlp.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

class WideAndDeep final : public RecModel {
 public:
  WideAndDeep(Device* device, ModelShape shape, const std::vector<int>& hidden)
      : RecModel(device, std::move(shape)),
        wide_(device, &params_, shape_.width(), 1),
        deep_(device, &params_, shape_.width(), HiddenThenLogit(hidden), false) {
    logits_.Bind(device);
  }

 private:
  const float* ForwardHead(const float* x, int rows) override {
    const int width = shape_.width();
    wide_.Forward(x, width, rows);
    deep_.Forward(x, width, rows);
    logits_.Resize(rows);
    device_->Copy2D(wide_.output(), 1, rows, 1, logits_.data(), 1);
    device_->Axpy(rows, 1.0f, deep_.output(), logits_.data());
    return logits_.data();
  }

  void BackwardHead(const float* dlogits, float* dx) override {
    const int rows = static_cast<int>(logits_.size());
    device_->Axpy(rows, 1.0f, dlogits, wide_.output_grad());
    device_->Axpy(rows, 1.0f, dlogits, deep_.output_grad());
    wide_.Backward(dx, shape_.width());
    deep_.Backward(dx, shape_.width());
  }

  Linear wide_;
  Mlp deep_;
  DeviceArray<float> logits_;
};

}  // namespace

std::unique_ptr<RecModel> MakeWideAndDeep(Device* device, ModelShape shape,
                                          const std::vector<int>& hidden) {
  return std::make_unique<WideAndDeep>(device, std::move(shape), hidden);
}

}  // namespace herald::worker
