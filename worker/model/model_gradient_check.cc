#include "worker/model/model_gradient_check.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "worker/model/gradient_check.h"

namespace herald::worker::testing {

TestBatch::TestBatch(std::vector<int> table_dims, int num_dense)
    : dims(std::move(table_dims)), dense(TestValues(kRows * num_dense, 20)) {
  const std::vector<std::vector<uint32_t>> offset_patterns = {
      {0, 1, 2, 3, 4}, {0, 2, 3, 3, 5}, {0, 3, 4, 5, 6}, {0, 1, 1, 2, 3}};
  const std::vector<std::vector<uint32_t>> slot_patterns = {
      {0, 1, 0, 4}, {2, 3, 3, 0, 1}, {1, 2, 2, 4, 0, 3}, {4, 3, 1}};
  for (size_t t = 0; t < dims.size(); ++t) {
    offsets.push_back(offset_patterns[t % offset_patterns.size()]);
    slots.push_back(slot_patterns[t % slot_patterns.size()]);
    cache.push_back(TestValues(kSlots * (dims[t] + 2), 30 + t, 0.5f));
    grads.emplace_back(kSlots * dims[t], 0.0f);
  }
}

ModelInput TestBatch::Input(std::vector<std::vector<float>>* grad_arrays) {
  ModelInput in;
  in.rows = kRows;
  in.dense = dense.data();
  in.labels = labels.data();
  for (size_t t = 0; t < dims.size(); ++t) {
    in.tables.push_back({offsets[t].data(), slots[t].data(), cache[t].data(), dims[t] + 2,
                         (*grad_arrays)[t].data()});
  }
  return in;
}

void ExpectModelGradientsMatch(RecModel* model, TestBatch* batch, size_t max_coordinates,
                               bool dropout) {
  ModelInput in = batch->Input(&batch->grads);
  const double loss0 = model->TrainStep(in, 1.0f);
  EXPECT_GT(loss0, 0.0);
  DenseParameters& params = model->params();
  const std::vector<float> dense_grads = params.grads().ToHost();

  std::vector<std::vector<float>> scratch = batch->grads;
  ModelInput probe = batch->Input(&scratch);
  auto loss = [&] { return model->TrainStep(probe, 1.0f); };
  GradientCheckOptions options;
  options.max_coordinates = max_coordinates;
  ExpectGradientMatches(loss, params.value(0), dense_grads, "dense", options);
  for (size_t t = 0; t < batch->dims.size(); ++t) {
    const int dim = batch->dims[t];
    std::vector<float> analytic(batch->cache[t].size(), 0.0f);
    for (int s = 0; s < TestBatch::kSlots; ++s) {
      for (int d = 0; d < dim; ++d) analytic[s * (dim + 2) + d] = batch->grads[t][s * dim + d];
    }
    ExpectGradientMatches(loss, batch->cache[t].data(), analytic, "table " + std::to_string(t),
                          options);
  }
  // Predict agrees with the training forward pass.
  const std::vector<float> p = model->Predict(in);
  const ModelShape& shape = model->shape();
  const size_t heads = shape.heads.size();
  ASSERT_EQ(p.size(), TestBatch::kRows * heads);
  double want = 0;
  for (int i = 0; i < TestBatch::kRows; ++i) {
    for (size_t h = 0; h < heads; ++h) {
      const HeadShape& head = shape.heads[h];
      const double y = batch->labels[i * shape.num_labels + head.label], q = p[i * heads + h];
      const double loss = head.loss == LossKind::kSquaredError ? (q - y) * (q - y)
                          : y > 0.5                            ? -std::log(q)
                                                               : -std::log(1.0 - q);
      want += head.weight * loss;
    }
  }
  if (dropout) {
    EXPECT_GT(std::abs(want - loss0), 1e-4) << "the masks changed nothing";
  } else {
    EXPECT_NEAR(want, loss0, 1e-4);
  }
}

}  // namespace herald::worker::testing
