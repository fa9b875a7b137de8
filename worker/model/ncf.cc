#include "worker/model/concat.h"
#include "worker/model/linear.h"
#include "worker/model/mlp.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

class Ncf final : public RecModel {
 public:
  Ncf(Device* device, ModelShape shape, const std::vector<int>& hidden)
      : RecModel(device, std::move(shape)),
        dim_(shape_.tables[0].dim),
        deep_(device, &params_, shape_.width(), hidden, true),
        concat_(device, {dim_, hidden.back()}),
        output_(device, &params_, dim_ + hidden.back(), 1) {
    gmf_.Bind(device);
  }

 private:
  const float* ForwardHead(const float* x, int rows) override {
    const int width = shape_.width();
    rows_ = rows;
    x_ = x;
    gmf_.Resize(static_cast<size_t>(rows) * dim_);
    device_->Multiply2D(x + shape_.column(0), width, x + shape_.column(1), width, rows, dim_,
                        gmf_.data(), dim_, /*accumulate=*/false);
    deep_.Forward(x, width, rows);
    concat_.Forward({{gmf_.data(), dim_}, {deep_.output(), deep_.out()}}, rows);
    return output_.Forward(concat_.output(), concat_.out(), rows);
  }

  void BackwardHead(const float* dlogits, float* dx) override {
    const int width = shape_.width();
    device_->Axpy(rows_, 1.0f, dlogits, output_.output_grad());
    output_.Backward(concat_.output_grad(), concat_.out());
    // The GMF gradient is read straight from the concatenation's first block.
    const float* dgmf = concat_.output_grad();
    const int stride = concat_.out();
    concat_.Backward({{nullptr, 0}, {deep_.output_grad(), deep_.out()}});
    // d(user) += dgmf ⊙ item, d(item) += dgmf ⊙ user.
    device_->Multiply2D(dgmf, stride, x_ + shape_.column(1), width, rows_, dim_,
                        dx + shape_.column(0), width, /*accumulate=*/true);
    device_->Multiply2D(dgmf, stride, x_ + shape_.column(0), width, rows_, dim_,
                        dx + shape_.column(1), width, /*accumulate=*/true);
    deep_.Backward(dx, width);
  }

  int dim_;
  Mlp deep_;
  Concat concat_;
  Linear output_;
  DeviceArray<float> gmf_;
  const float* x_ = nullptr;
  int rows_ = 0;
};

}  // namespace

std::unique_ptr<RecModel> MakeNcf(Device* device, ModelShape shape,
                                  const std::vector<int>& hidden) {
  return std::make_unique<Ncf>(device, std::move(shape), hidden);
}

}  // namespace herald::worker
