#pragma once
// Whole-model finite-difference checks (testonly): a small batch over every
// feature of a model, and the check of its dense and embedding gradients.

#include <cstdint>
#include <vector>

#include "worker/model/rec_model.h"

namespace herald::worker::testing {

// 4 samples with multi-hot, repeated and empty bags over 5 slots per table,
// binary labels 1, 0, 0, 1 (a test may set `labels` to several per sample,
// as the model's shape reads them) and `num_dense` dense values each. Feature t
// reads table t of dim dims[t]; each slot holds the values and 2 floats
// standing in for optimizer state.
struct TestBatch {
  TestBatch(std::vector<int> dims, int num_dense);

  // The batch over these gradient arrays (one per table, `dim` floats per slot).
  ModelInput Input(std::vector<std::vector<float>>* grad_arrays);

  static constexpr int kRows = 4;
  static constexpr int kSlots = 5;
  std::vector<int> dims;
  std::vector<float> dense;
  std::vector<float> labels = {1, 0, 0, 1};
  std::vector<std::vector<uint32_t>> offsets, slots;
  std::vector<std::vector<float>> cache;  // kSlots × (dim + 2) per table
  std::vector<std::vector<float>> grads;  // kSlots × dim per table
};

// Trains `batch` once and expects the model's gradients w.r.t. its dense
// parameters and every table's rows to match central differences of the
// loss (`max_coordinates` of each), and Predict to give that loss: Σ over
// the heads of weight × (cross-entropy or squared error). A model with
// dropout (`dropout`) trains under masks that Predict does not apply: its
// Predict must then give another loss.
void ExpectModelGradientsMatch(RecModel* model, TestBatch* batch, size_t max_coordinates,
                               bool dropout = false);

}  // namespace herald::worker::testing
