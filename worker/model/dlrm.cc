#include "worker/model/concat.h"
#include "worker/model/dot_interaction.h"
#include "worker/model/mlp.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

class Dlrm final : public RecModel {
 public:
  Dlrm(Device* device, ModelShape shape, const std::vector<int>& bottom,
       const std::vector<int>& hidden)
      : RecModel(device, std::move(shape)),
        dim_(shape_.tables[0].dim),
        fields_(static_cast<int>(shape_.tables.size()) + 1),
        bottom_(device, &params_, shape_.num_dense, bottom, true),
        interaction_(device, fields_, dim_),
        concat_(device, {dim_, interaction_.out()}),
        top_(device, &params_, dim_ + interaction_.out(), HiddenThenLogit(hidden), false) {
    z_.Bind(device);
    dz_.Bind(device);
  }

 private:
  const float* ForwardHead(const float* x, int rows) override {
    const int width = shape_.width();
    const int z_width = fields_ * dim_;
    rows_ = rows;
    const float* bottom = bottom_.Forward(x, width, rows);
    // z = [bottom | bag_0 | … ]: the bags are X's columns after the dense ones.
    z_.Resize(static_cast<size_t>(rows) * z_width);
    device_->Copy2D(bottom, dim_, rows, dim_, z_.data(), z_width);
    device_->Copy2D(x + shape_.num_dense, width, rows, z_width - dim_, z_.data() + dim_, z_width);
    interaction_.Forward(z_.data(), z_width, rows);
    concat_.Forward({{bottom, dim_}, {interaction_.output(), interaction_.out()}}, rows);
    return top_.Forward(concat_.output(), concat_.out(), rows);
  }

  void BackwardHead(const float* dlogits, float* dx) override {
    const int width = shape_.width();
    const int z_width = fields_ * dim_;
    device_->Axpy(rows_, 1.0f, dlogits, top_.output_grad());
    top_.Backward(concat_.output_grad(), concat_.out());
    concat_.Backward(
        {{bottom_.output_grad(), dim_}, {interaction_.output_grad(), interaction_.out()}});
    dz_.Resize(z_.size());
    device_->Fill(dz_.data(), dz_.size(), 0.0f);
    interaction_.Backward(dz_.data(), z_width);
    device_->Add2D(dz_.data(), z_width, rows_, dim_, bottom_.output_grad(), dim_);
    device_->Add2D(dz_.data() + dim_, z_width, rows_, z_width - dim_, dx + shape_.num_dense, width);
    bottom_.Backward(nullptr, 0);  // dense inputs need no gradient
  }

  int dim_;
  int fields_;
  Mlp bottom_;
  DotInteraction interaction_;
  Concat concat_;
  Mlp top_;
  DeviceArray<float> z_, dz_;
  int rows_ = 0;
};

}  // namespace

std::unique_ptr<RecModel> MakeDlrm(Device* device, ModelShape shape, const std::vector<int>& bottom,
                                   const std::vector<int>& hidden) {
  return std::make_unique<Dlrm>(device, std::move(shape), bottom, hidden);
}

}  // namespace herald::worker
