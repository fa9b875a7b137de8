// Model graphs (model.graph) built by CreateModel: a graph using every
// layer matches finite differences in its dense parameters and the rows it
// reads; its parameter count is the resolved graph's; a graph written as
// Wide&Deep trains as the built-in Wide&Deep, bit for bit; parameters sit
// in the order the nodes are listed.
#include <memory>
#include <string>
#include <vector>

#include "common/model_graph.h"
#include "common/text_proto.h"
#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"
#include "worker/model/model_factory.h"
#include "worker/model/model_gradient_check.h"

namespace herald::worker {
namespace {

constexpr int kDense = 3;
const std::vector<int> kDims = {4, 4, 4, 2};  // tables a, b, c, d

proto::JobSpec Spec(const std::string& model) {
  proto::JobSpec spec;
  const absl::Status parsed = ParseTextProto(R"(
    seed: 42
    num_dense: 3
    tables { name: "a" dim: 4 }
    tables { name: "b" dim: 4 }
    tables { name: "c" dim: 4 pooling: POOLING_MEAN }
    tables { name: "d" dim: 2 }
    model { )" + model + " }",
                                             &spec);
  EXPECT_TRUE(parsed.ok()) << parsed;
  return spec;
}

// Every layer kind: views, a gather, interactions, both cross kinds,
// combinators and MLPs with and without activations.
const char* kEveryLayer = R"(graph {
  nodes { name: "dense" dense {} }
  nodes { name: "bottom" inputs: "dense" mlp { widths: [5, 4] activate_last: true } }
  nodes { name: "abc" embeddings { features: ["a", "b", "c"] } }
  nodes { name: "ca" embeddings { features: ["c", "a"] } }
  nodes { name: "all" embeddings {} }
  nodes { name: "ea" embeddings { features: "a" } }
  nodes { name: "eb" embeddings { features: "b" } }
  nodes { name: "x" inputs: ["dense", "all"] concat {} }
  nodes { name: "fields" inputs: ["bottom", "abc"] concat {} }
  nodes { name: "pairs" inputs: "fields" dot_interaction { self_terms: true } }
  nodes { name: "fm" inputs: "ca" fm {} }
  nodes { name: "cross2" inputs: "x" cross { kind: CROSS_V2 layers: 2 rank: 2 } }
  nodes { name: "cross1" inputs: "fields" cross { layers: 1 } }
  nodes { name: "gmf" inputs: ["ea", "eb"] product {} }
  nodes { name: "dot" inputs: ["ea", "eb"] dot {} }
  nodes { name: "deep" inputs: ["pairs", "cross2", "cross1", "gmf"] concat {} }
  nodes { name: "tower" inputs: "deep" mlp { widths: [6, 1] activation: ACTIVATION_NONE } }
  nodes { name: "logit" inputs: ["tower", "fm", "dot"] sum {} }
  nodes { name: "out" inputs: "logit" head {} }
})";

TEST(GraphModel, EveryLayerMatchesFiniteDifferences) {
  CpuDevice dev;
  const proto::JobSpec spec = Spec(kEveryLayer);
  auto model = CreateModel(spec, &dev);
  ASSERT_TRUE(model.ok()) << model.status();
  auto graph = ResolveModelGraph(spec);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ((*model)->params().size(), size_t(graph->parameters()));

  testing::TestBatch batch(kDims, kDense);
  testing::ExpectModelGradientsMatch(model->get(), &batch, 400);
}

TEST(GraphModel, SameSeedSameBits) {
  CpuDevice dev;
  auto a = CreateModel(Spec(kEveryLayer), &dev);
  auto b = CreateModel(Spec(kEveryLayer), &dev);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->params().values().ToHost(), (*b)->params().values().ToHost());
  testing::TestBatch batch(kDims, kDense);
  ModelInput in = batch.Input(&batch.grads);
  EXPECT_EQ((*a)->TrainStep(in, 0.25f), (*b)->TrainStep(in, 0.25f));
  EXPECT_EQ((*a)->params().grads().ToHost(), (*b)->params().grads().ToHost());
}

// Wide&Deep written as a graph is the graph the built-in kind stands for
// (nodes listed in another order, with the same layers in the same order):
// both start from the same bits and compute the same loss and gradients,
// bit for bit.
TEST(GraphModel, WideAndDeepAsAGraphTrainsAsTheBuiltIn) {
  CpuDevice dev;
  auto built_in = CreateModel(Spec("kind: MODEL_WIDE_AND_DEEP top_mlp: [6, 5]"), &dev);
  auto graph = CreateModel(Spec(R"(graph {
    nodes { name: "x" inputs: ["dense", "bags"] concat {} }
    nodes { name: "dense" dense {} }
    nodes { name: "bags" embeddings {} }
    nodes { name: "wide" inputs: "x" mlp { widths: 1 } }
    nodes { name: "deep" inputs: "x" mlp { widths: [6, 5, 1] } }
    nodes { name: "logit" inputs: ["wide", "deep"] sum {} }
    nodes { name: "click" inputs: "logit" head { label: "label" } }
  })"),
                           &dev);
  ASSERT_TRUE(built_in.ok() && graph.ok()) << graph.status();
  ASSERT_EQ((*built_in)->params().values().ToHost(), (*graph)->params().values().ToHost());
  testing::TestBatch b1(kDims, kDense), b2(kDims, kDense);
  ModelInput in1 = b1.Input(&b1.grads), in2 = b2.Input(&b2.grads);
  EXPECT_EQ((*built_in)->TrainStep(in1, 0.25f), (*graph)->TrainStep(in2, 0.25f));
  EXPECT_EQ((*built_in)->params().grads().ToHost(), (*graph)->params().grads().ToHost());
  EXPECT_EQ(b1.grads, b2.grads);
}

// Two MLP nodes, "lower" (W 3×2, b 2) and "upper" (W 2×1, b 1) reading it,
// and the rest of a graph around them, without parameters.
const std::string kLower = R"(nodes { name: "lower" inputs: "dense" mlp { widths: 2 } })";
const std::string kUpper = R"(nodes { name: "upper" inputs: "lower" mlp { widths: 1 } })";
const std::string kRest = R"(nodes { name: "dense" dense {} }
                             nodes { name: "dot" inputs: ["upper", "upper"] dot {} }
                             nodes { name: "sum" inputs: ["dot", "fm"] sum {} }
                             nodes { name: "fm" inputs: "bags3" fm {} }
                             nodes { name: "bags3" embeddings { features: ["a", "b", "c"] } }
                             nodes { name: "out" inputs: "sum" head {} })";

// Parameter blocks follow the order the nodes are listed, not the forward
// order: a tower listed before the layer it reads comes first. (Biases
// start at zero, weights do not: the zeros show where each layer sits.)
TEST(GraphModel, ParametersAreLaidOutInTheOrderTheNodesAreListed) {
  CpuDevice dev;
  auto zeros = [&](const std::string& nodes) {
    auto model = CreateModel(Spec("graph { " + nodes + " }"), &dev);
    EXPECT_TRUE(model.ok()) << model.status();
    std::vector<size_t> at;
    const std::vector<float> values = (*model)->params().values().ToHost();
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == 0) at.push_back(i);
    }
    return at;
  };
  // lower: W 3×2 then b 2; upper: W 2×1 then b 1.
  EXPECT_EQ(zeros(kLower + kUpper + kRest), (std::vector<size_t>{6, 7, 10}));
  EXPECT_EQ(zeros(kUpper + kLower + kRest), (std::vector<size_t>{2, 9, 10}));
}

// The backward tells which dense gradients are final as it goes: every
// suffix it names holds, when named, the step's final bits; a layer listed
// after the one it reads frees its gradients first, so with the nodes in
// forward order the all-reduce of the upper layer can start before the
// lower layer's backward, as can an MLP's top layers' before its first's.
TEST(GraphModel, BackwardNamesTheGradientsThatAreFinalAsItGoes) {
  CpuDevice dev;
  const std::string forward_order = "graph { " + kLower + kUpper + kRest + " }";
  const std::string upper_first = "graph { " + kUpper + kLower + kRest + " }";
  // One MLP node of three layers over 17 inputs: W 17×5, b 5 | W 5×4, b 4 |
  // W 4×1, b 1, freed top layer first.
  const std::string stack = R"(graph {
    nodes { name: "dense" dense {} }
    nodes { name: "bags" embeddings {} }
    nodes { name: "x" inputs: ["dense", "bags"] concat {} }
    nodes { name: "deep" inputs: "x" mlp { widths: [5, 4, 1] } }
    nodes { name: "out" inputs: "deep" head {} }
  })";
  for (const std::string& graph : {forward_order, upper_first, stack, std::string(kEveryLayer)}) {
    auto model = CreateModel(Spec(graph), &dev);
    ASSERT_TRUE(model.ok()) << model.status();
    DenseParameters& params = (*model)->params();
    testing::TestBatch batch(kDims, kDense);
    ModelInput in = batch.Input(&batch.grads);
    std::vector<size_t> begins;
    std::vector<std::vector<float>> seen;  // grads[begin, size) when named
    (*model)->QueueTrainStep(in, 0.25f, [&](size_t begin) {
      begins.push_back(begin);
      const std::vector<float> now = params.grads().ToHost();
      seen.emplace_back(now.begin() + begin, now.end());
    });
    (*model)->TakeLoss();
    const std::vector<float> final_grads = params.grads().ToHost();
    ASSERT_FALSE(begins.empty());
    EXPECT_EQ(begins.back(), 0u);
    for (size_t k = 0; k < begins.size(); ++k) {
      if (k > 0) {
        EXPECT_LT(begins[k], begins[k - 1]);
      }
      EXPECT_EQ(seen[k], std::vector<float>(final_grads.begin() + begins[k], final_grads.end()))
          << "named at " << begins[k];
    }
    std::vector<size_t> want;
    if (graph == forward_order) want = {8, 0};  // upper first
    if (graph == upper_first) want = {0};
    if (graph == stack) want = {114, 90, 0};
    if (!want.empty()) {
      EXPECT_EQ(begins, want);
    }
  }
}

// Two heads over a shared bottom: a click (cross-entropy) and a rating
// (squared error, weight 0.5), each reading its own label column.
TEST(GraphModel, TwoHeadsMatchFiniteDifferencesOfTheirWeightedLosses) {
  CpuDevice dev;
  proto::JobSpec spec;
  ASSERT_TRUE(ParseTextProto(R"(
    seed: 7
    num_dense: 3
    tables { name: "a" dim: 4 }
    tables { name: "b" dim: 4 }
    tables { name: "c" dim: 4 pooling: POOLING_MEAN }
    tables { name: "d" dim: 2 }
    data { format: DATA_FORMAT_CSV schema {
      columns { name: "click" role: COLUMN_LABEL }
      columns { name: "x1" role: COLUMN_DENSE }
      columns { name: "x2" role: COLUMN_DENSE }
      columns { name: "x3" role: COLUMN_DENSE }
      columns { name: "rating" role: COLUMN_LABEL label: LABEL_REGRESSION }
      columns { name: "a" role: COLUMN_SPARSE }
      columns { name: "b" role: COLUMN_SPARSE }
      columns { name: "c" role: COLUMN_SPARSE }
      columns { name: "d" role: COLUMN_SPARSE }
    } }
    model { graph {
      nodes { name: "dense" dense {} }
      nodes { name: "bags" embeddings {} }
      nodes { name: "x" inputs: ["dense", "bags"] concat {} }
      nodes { name: "shared" inputs: "x" cross { kind: CROSS_V2 layers: 1 rank: 3 } }
      # Linear (no ReLU kink under the finite differences' steps)
      nodes { name: "bottom" inputs: "shared" mlp { widths: [6] } }
      nodes { name: "click_tower" inputs: "bottom" mlp { widths: [1] } }
      nodes { name: "rating_tower" inputs: "bottom" mlp { widths: [4, 1] } }
      nodes { name: "click" inputs: "click_tower" head { label: "click" } }
      nodes { name: "rating" inputs: "rating_tower" head { label: "rating" loss_weight: 0.5 } }
    } })",
                             &spec)
                  .ok());
  auto model = CreateModel(spec, &dev);
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelShape& shape = (*model)->shape();
  ASSERT_EQ(shape.num_labels, 2u);
  ASSERT_EQ(shape.heads.size(), 2u);
  EXPECT_EQ(shape.heads[1].label, 1u);
  EXPECT_EQ(shape.heads[1].loss, LossKind::kSquaredError);
  EXPECT_EQ(shape.heads[1].weight, 0.5f);
  testing::TestBatch batch(kDims, kDense);
  batch.labels = {1, 2.5f, 0, -1, 0, 0.5f, 1, 3};  // (click, rating) per sample
  testing::ExpectModelGradientsMatch(model->get(), &batch, 400);
}

// Dropout on a ReLU bottom and a linear tower.
const char* kDropout = R"(graph {
  nodes { name: "dense" dense {} }
  nodes { name: "bags" embeddings {} }
  nodes { name: "x" inputs: ["dense", "bags"] concat {} }
  nodes { name: "bottom" inputs: "x" mlp { widths: [12, 8] activate_last: true dropout: 0.5 } }
  nodes { name: "tower" inputs: "bottom" mlp { widths: [6, 5, 1] activation: ACTIVATION_NONE
                                                dropout: 0.3 } }
  nodes { name: "out" inputs: "tower" head {} }
})";

// The batch with its rows in the order `rows` (row r of the result is row
// rows[r] of `batch`).
testing::TestBatch Permuted(const testing::TestBatch& batch, const std::vector<uint32_t>& rows) {
  testing::TestBatch out = batch;
  const size_t num_dense = batch.dense.size() / testing::TestBatch::kRows;
  for (size_t r = 0; r < rows.size(); ++r) {
    out.labels[r] = batch.labels[rows[r]];
    for (size_t d = 0; d < num_dense; ++d) {
      out.dense[r * num_dense + d] = batch.dense[rows[r] * num_dense + d];
    }
  }
  for (size_t t = 0; t < batch.dims.size(); ++t) {
    out.slots[t].clear();
    out.offsets[t] = {0};
    for (uint32_t r : rows) {
      for (uint32_t i = batch.offsets[t][r]; i < batch.offsets[t][r + 1]; ++i) {
        out.slots[t].push_back(batch.slots[t][i]);
      }
      out.offsets[t].push_back(static_cast<uint32_t>(out.slots[t].size()));
    }
  }
  return out;
}

// Dropout masks stay fixed within a step (iteration, sample), so finite
// differences hold; prediction uses no mask; and a sample keeps its mask
// in whichever row of a worker's batch it lands, by its index in the
// global batch, so a permuted batch that says where its rows come from
// trains the same gradients.
TEST(GraphModel, DropoutMatchesFiniteDifferencesAndFollowsTheSample) {
  CpuDevice dev;
  auto model = CreateModel(Spec(kDropout), &dev);
  ASSERT_TRUE(model.ok()) << model.status();
  testing::TestBatch batch(kDims, kDense);
  testing::ExpectModelGradientsMatch(model->get(), &batch, 300, /*dropout=*/true);

  // Without dropout: the same parameters, the same predictions, another loss.
  std::string plain = kDropout;
  for (const char* p :
       {" dropout: 0.5", "\n                                                dropout: 0.3"}) {
    plain.erase(plain.find(p), std::string(p).size());
  }
  auto no_dropout = CreateModel(Spec(plain), &dev);
  ASSERT_TRUE(no_dropout.ok()) << no_dropout.status();
  ASSERT_EQ((*model)->params().values().ToHost(), (*no_dropout)->params().values().ToHost());
  testing::TestBatch b1(kDims, kDense), b2(kDims, kDense);
  EXPECT_EQ((*model)->Predict(b1.Input(&b1.grads)), (*no_dropout)->Predict(b2.Input(&b2.grads)));
  EXPECT_NE((*model)->TrainStep(b1.Input(&b1.grads), 1.0f),
            (*no_dropout)->TrainStep(b2.Input(&b2.grads), 1.0f));

  // The batch as a worker might get it: rows 2, 0, 3, 1 of the global batch.
  const std::vector<uint32_t> rows = {2, 0, 3, 1};
  auto train = [&](testing::TestBatch* b, const uint32_t* sample_ids, uint64_t iteration) {
    ModelInput in = b->Input(&b->grads);
    in.sample_ids = sample_ids;
    in.iteration = iteration;
    const double loss = (*model)->TrainStep(in, 1.0f);
    return std::pair{loss, (*model)->params().grads().ToHost()};
  };
  testing::TestBatch whole(kDims, kDense);
  const auto [loss, grads] = train(&whole, nullptr, 5);
  testing::TestBatch permuted = Permuted(whole, rows);
  const auto [permuted_loss, permuted_grads] = train(&permuted, rows.data(), 5);
  EXPECT_NEAR(permuted_loss, loss, 1e-6);
  ASSERT_EQ(permuted_grads.size(), grads.size());
  for (size_t i = 0; i < grads.size(); ++i) EXPECT_NEAR(permuted_grads[i], grads[i], 1e-6) << i;
  // Masks drawn by row instead: another loss; another iteration: too.
  testing::TestBatch by_row = Permuted(whole, rows);
  EXPECT_GT(std::abs(train(&by_row, nullptr, 5).first - loss), 1e-4);
  testing::TestBatch later(kDims, kDense);
  EXPECT_GT(std::abs(train(&later, nullptr, 6).first - loss), 1e-4);
}

TEST(GraphModel, AnInvalidGraphIsRefusedNamingTheNode) {
  CpuDevice dev;
  auto model = CreateModel(Spec(R"(graph {
    nodes { name: "e" embeddings { features: ["a", "d"] } }
    nodes { name: "f" inputs: "e" fm {} }
    nodes { name: "h" inputs: "f" head {} }
  })"),
                           &dev);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("model.graph.nodes[1] \"f\": inputs[0] \"e\": fm needs"),
            std::string::npos)
      << model.status();
}

}  // namespace
}  // namespace herald::worker
