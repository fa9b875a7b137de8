// The model graph's check: order, shapes and parameter counts of a valid
// graph, and an error naming the node and field for each way a graph can
// be wrong.
#include "common/model_graph.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/model_spec_check.h"
#include "common/text_proto.h"
#include "common/trained_label.h"
#include "gtest/gtest.h"

namespace herald {
namespace {

// A JobSpec from its text format.
proto::JobSpec Parse(const std::string& text) {
  proto::JobSpec spec;
  const absl::Status parsed = ParseTextProto(text, &spec);
  EXPECT_TRUE(parsed.ok()) << parsed;
  return spec;
}

// 3 dense features, tables user (8), item (8) and tags (4), and `graph`.
proto::JobSpec Spec(const std::string& graph) {
  return Parse(R"(
    num_dense: 3
    tables { name: "user" dim: 8 }
    tables { name: "item" dim: 8 }
    tables { name: "tags" dim: 4 }
    model { graph { )" +
               graph + " } }");
}

// DCN-v2 (low rank) over [dense | every bag] beside a two-tower dot.
const char* kGraph = R"(
  nodes { name: "logit" inputs: ["top", "towers"] sum {} }
  nodes { name: "out" inputs: "logit" head {} }
  nodes { name: "x" inputs: ["dense", "bags"] concat {} }
  nodes { name: "dense" dense {} }
  nodes { name: "bags" embeddings {} }
  nodes { name: "cross" inputs: "x" cross { layers: 2 kind: CROSS_V2 rank: 4 } }
  nodes { name: "top" inputs: "cross" mlp { widths: [16, 1] } }
  nodes { name: "user" embeddings { features: "user" } }
  nodes { name: "item" embeddings { features: "item" } }
  nodes { name: "towers" inputs: ["user", "item"] dot {} }
)";

const GraphNode& Node(const ResolvedGraph& g, const std::string& name) {
  for (const GraphNode& n : g.nodes) {
    if (n.spec.name() == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return g.nodes[0];
}

TEST(ModelGraph, OrdersNodesAfterTheirInputsKeepingTheListedOrderOtherwise) {
  auto g = ResolveModelGraph(Spec(kGraph));
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> order;
  for (const GraphNode& n : g->nodes) order.push_back(n.spec.name());
  EXPECT_EQ(order, (std::vector<std::string>{"dense", "bags", "x", "cross", "top", "user", "item",
                                             "towers", "logit", "out"}));
  ASSERT_EQ(g->heads.size(), 1u);
  EXPECT_EQ(g->nodes[g->heads[0]].spec.name(), "out");
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    for (int j : g->nodes[i].inputs) EXPECT_LT(j, static_cast<int>(i));
  }
}

// Backward: a node once every node taking its output has run; among those
// ready, the one listed first (so a shared input sums its consumers'
// gradients in the order they are listed).
TEST(ModelGraph, BackwardTakesReadyNodesInTheListedOrder) {
  auto g = ResolveModelGraph(Spec(kGraph));
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> order;
  for (int i : g->backward) order.push_back(g->nodes[i].spec.name());
  EXPECT_EQ(order, (std::vector<std::string>{"out", "logit", "top", "cross", "x", "dense", "bags",
                                             "towers", "user", "item"}));
  const proto::ModelGraphSpec listed = Spec(kGraph).model().graph();
  for (const GraphNode& n : g->nodes) EXPECT_EQ(n.spec.name(), listed.nodes(n.listed).name());
}

// Each built-in kind resolves to its graph (builtin_model_graph.h): one
// head on the first label, layers listed in the hand-written models'
// parameter order.
TEST(ModelGraph, EachBuiltInKindIsAGraph) {
  struct Case {
    std::string model;
    std::vector<std::string> layers_listed;  // nodes with parameters, listed order
    int64_t parameters;
  };
  // X = 3 dense + 8 + 8 (+ 4 tags) columns.
  const std::vector<Case> cases = {
      {"kind: MODEL_WIDE_AND_DEEP top_mlp: [4]", {"wide", "deep"}, (23 + 1) + (23 * 4 + 4 + 5)},
      {"kind: MODEL_DCN top_mlp: [4] cross_layers: 2",
       {"deep", "logit", "cross"},
       (23 * 4 + 4) + (27 + 1) + 2 * 2 * 23},
      {"kind: MODEL_NCF top_mlp: [4]", {"deep", "logit"}, (23 * 4 + 4) + (12 + 1)},
  };
  for (const Case& c : cases) {
    proto::JobSpec spec = Parse(R"(
      num_dense: 3
      tables { name: "user" dim: 8 }
      tables { name: "item" dim: 8 }
      tables { name: "tags" dim: 4 }
      model { )" + c.model + " }");
    ASSERT_TRUE(ValidateModelSpec(spec).ok()) << c.model << ": " << ValidateModelSpec(spec);
    auto g = ResolveModelGraph(spec);
    ASSERT_TRUE(g.ok()) << c.model << ": " << g.status();
    EXPECT_EQ(g->parameters(), c.parameters) << c.model;
    ASSERT_EQ(g->heads.size(), 1u);
    std::vector<std::pair<int, std::string>> layers;
    for (const GraphNode& n : g->nodes) {
      if (n.parameters > 0) layers.emplace_back(n.listed, n.spec.name());
    }
    std::sort(layers.begin(), layers.end());
    std::vector<std::string> names;
    for (const auto& l : layers) names.push_back(l.second);
    EXPECT_EQ(names, c.layers_listed) << c.model;
  }
  // DeepFM and DLRM need one embedding width.
  for (const std::string model :
       {"kind: MODEL_DEEPFM top_mlp: [4]", "kind: MODEL_DLRM bottom_mlp: [8] top_mlp: [4]"}) {
    proto::JobSpec spec = Parse(R"(
      num_dense: 3
      tables { name: "user" dim: 8 }
      tables { name: "item" dim: 8 }
      model { )" + model + " }");
    ASSERT_TRUE(ValidateModelSpec(spec).ok()) << model << ": " << ValidateModelSpec(spec);
    auto g = ResolveModelGraph(spec);
    ASSERT_TRUE(g.ok()) << model << ": " << g.status();
    EXPECT_GT(g->parameters(), 0);
  }
}

TEST(ModelGraph, ShapesAndParameterCounts) {
  auto g = ResolveModelGraph(Spec(kGraph));
  ASSERT_TRUE(g.ok()) << g.status();
  const GraphNode& bags = Node(*g, "bags");
  EXPECT_EQ(bags.shape.width, 20);
  EXPECT_EQ(bags.shape.fields, 0);  // 8, 8 and 4: not one width
  EXPECT_EQ(bags.features, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Node(*g, "x").shape.width, 23);
  // Two rank-4 layers over width 23: V 23×4, U 4×23, b 23.
  EXPECT_EQ(Node(*g, "cross").parameters, 2 * (2 * 23 * 4 + 23));
  EXPECT_EQ(Node(*g, "top").parameters, 23 * 16 + 16 + 16 * 1 + 1);
  EXPECT_EQ(Node(*g, "towers").shape.width, 1);
  EXPECT_EQ(g->parameters(), 2 * (2 * 23 * 4 + 23) + 23 * 16 + 16 + 17);
  const std::string text = DescribeModelGraph(*g);
  EXPECT_NE(text.find("cross v2 x2 r4"), std::string::npos) << text;
  EXPECT_NE(text.find("total"), std::string::npos) << text;
}

TEST(ModelGraph, GroupsOfOneWidthFeedInteractions) {
  auto g = ResolveModelGraph(Spec(R"(
    nodes { name: "bottom" inputs: "dense" mlp { widths: [8] activate_last: true } }
    nodes { name: "dense" dense {} }
    nodes { name: "ui" embeddings { features: ["user", "item"] } }
    nodes { name: "fields" inputs: ["bottom", "ui"] concat {} }
    nodes { name: "pairs" inputs: "fields" dot_interaction { self_terms: true } }
    nodes { name: "fm" inputs: "ui" fm {} }
    nodes { name: "top" inputs: ["pairs"] mlp { widths: [1] } }
    nodes { name: "logit" inputs: ["top", "fm"] sum {} }
    nodes { name: "out" inputs: "logit" head { label: "label" } }
  )"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Node(*g, "fields").shape.fields, 3);
  EXPECT_EQ(Node(*g, "fields").shape.field_dim, 8);
  EXPECT_EQ(Node(*g, "pairs").shape.width, 3 + 3);  // 3 pairs, 3 self terms
}

// A CSV schema with two labels (a click, a rating) and `graph`.
proto::JobSpec TwoLabelSpec(const std::string& graph) {
  return Parse(R"(
    num_dense: 1
    tables { name: "user" dim: 8 }
    tables { name: "item" dim: 8 }
    data { format: DATA_FORMAT_CSV schema {
      columns { name: "click" role: COLUMN_LABEL }
      columns { name: "rating" role: COLUMN_LABEL label: LABEL_REGRESSION }
      columns { name: "age" role: COLUMN_DENSE }
      columns { name: "user" role: COLUMN_SPARSE }
      columns { name: "item" role: COLUMN_SPARSE }
    } }
    model { graph { )" +
               graph + " } }");
}

// A shared bottom and two towers: a click head and a rating head.
const char* kTwoHeads = R"(
  nodes { name: "bags" embeddings {} }
  nodes { name: "bottom" inputs: "bags" mlp { widths: [8] activate_last: true } }
  nodes { name: "rating_tower" inputs: "bottom" mlp { widths: [1] } }
  nodes { name: "rating" inputs: "rating_tower" head { label: "rating" loss_weight: 0.5 } }
  nodes { name: "click_tower" inputs: "bottom" mlp { widths: [1] } }
  nodes { name: "click" inputs: "click_tower" head {} }
)";

TEST(ModelGraph, TwoHeadsTrainTwoLabelsInTheOrderListed) {
  const proto::JobSpec spec = TwoLabelSpec(kTwoHeads);
  auto g = ResolveModelGraph(spec);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->heads.size(), 2u);
  EXPECT_EQ(g->nodes[g->heads[0]].spec.name(), "rating");
  EXPECT_EQ(g->nodes[g->heads[1]].spec.name(), "click");
  const std::vector<TrainedLabel> labels = TrainedLabelsOf(spec);
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0].name, "rating");
  EXPECT_TRUE(labels[0].regression);
  EXPECT_EQ(labels[0].column, 1u);
  EXPECT_EQ(labels[0].loss_weight, 0.5f);
  EXPECT_EQ(labels[1].name, "click");  // an empty label: the data's first
  EXPECT_FALSE(labels[1].regression);
  EXPECT_EQ(labels[1].column, 0u);
  EXPECT_EQ(labels[1].loss_weight, 1.0f);
}

void ExpectError(const proto::JobSpec& spec, const std::string& message);

TEST(ModelGraph, RejectsTwoHeadsOfOneLabelAndANegativeWeight) {
  ExpectError(TwoLabelSpec(R"(
    nodes { name: "bags" embeddings {} }
    nodes { name: "a" inputs: "bags" mlp { widths: [1] } }
    nodes { name: "b" inputs: "bags" mlp { widths: [1] } }
    nodes { name: "ha" inputs: "a" head {} }
    nodes { name: "hb" inputs: "b" head { label: "click" } })"),
              "model.graph.nodes[4] \"hb\": head.label \"click\": nodes[3] \"ha\" predicts it too");
  ExpectError(TwoLabelSpec(R"(
    nodes { name: "bags" embeddings {} }
    nodes { name: "a" inputs: "bags" mlp { widths: [1] } }
    nodes { name: "ha" inputs: "a" head { loss_weight: -1 } })"),
              "nodes[2] \"ha\": head.loss_weight: -1 must be a finite number >= 0");
  ExpectError(TwoLabelSpec(R"(
    nodes { name: "bags" embeddings {} }
    nodes { name: "a" inputs: "bags" mlp { widths: [1] } }
    nodes { name: "ha" inputs: "a" head { label: "conversion" } })"),
              "the data has no such label (its labels: click, rating)");
}

void ExpectError(const proto::JobSpec& spec, const std::string& message) {
  const absl::Status s = ValidateModelSpec(spec);
  ASSERT_FALSE(s.ok()) << message;
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(message), std::string::npos) << s;
}

TEST(ModelGraph, RejectsEachWrongGraphNamingTheNodeAndField) {
  EXPECT_TRUE(ValidateModelSpec(Spec(kGraph)).ok());
  ExpectError(Spec(R"(nodes { name: "a" inputs: "b" mlp { widths: 1 } }
                      nodes { name: "b" inputs: "a" mlp { widths: 1 } }
                      nodes { name: "h" inputs: "a" head {} })"),
              "model.graph: a cycle: nodes \"a\", \"b\"");
  ExpectError(Spec(R"(nodes { name: "h" inputs: "missing" head {} })"),
              "model.graph.nodes[0] \"h\".inputs[0] \"missing\": no node of that name");
  ExpectError(Spec(R"(nodes { name: "e" embeddings {} }
                      nodes { name: "p" inputs: "e" dot_interaction {} }
                      nodes { name: "t" inputs: "p" mlp { widths: 1 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "model.graph.nodes[1] \"p\": inputs[0] \"e\": dot_interaction needs a group of at "
              "least 2 vectors of one width; the input is vectors of different widths");
  ExpectError(Spec(R"(nodes { name: "u" embeddings { features: "user" } }
                      nodes { name: "t" embeddings { features: "tags" } }
                      nodes { name: "d" inputs: ["u", "t"] dot {} }
                      nodes { name: "h" inputs: "d" head {} })"),
              "nodes[2] \"d\": inputs[1] \"t\": width 4 differs from inputs[0] \"u\"'s 8");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "t" inputs: "d" mlp { widths: 1 } }
                      nodes { name: "h" inputs: "t" head { label: "conversion" } })"),
              "nodes[2] \"h\": head.label \"conversion\": the data has no such label (its "
              "labels: label)");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "t" inputs: "d" mlp { widths: 1 } })"),
              "model.graph: no head");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "t" inputs: "d" mlp { widths: 2 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "nodes[2] \"h\": inputs[0] \"t\": a head takes one value per sample (width 1)");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "unused" embeddings {} }
                      nodes { name: "t" inputs: "d" mlp { widths: 1 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "nodes[1] \"unused\": its output reaches no head");
  ExpectError(Spec(R"(nodes { name: "e" embeddings { features: ["user", "age"] } }
                      nodes { name: "t" inputs: "e" mlp { widths: 1 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "nodes[0] \"e\": embeddings.features[1] \"age\": no such sparse feature (the "
              "job's: user, item, tags)");
  ExpectError(Spec(R"(nodes { name: "x" embeddings {} }
                      nodes { name: "c" inputs: "x" cross { kind: CROSS_V2 layers: 1 rank: 20 } }
                      nodes { name: "t" inputs: "c" mlp { widths: 1 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "nodes[1] \"c\": cross.rank: 20 must be < the input's width 20");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "t" inputs: "d" mlp { widths: [4, 1] dropout: 1 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "nodes[1] \"t\": mlp.dropout: 1 must be in [0, 1)");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "t" inputs: "d" mlp { widths: 1 dropout: 0.5 } }
                      nodes { name: "h" inputs: "t" head {} })"),
              "nodes[1] \"t\": mlp.dropout: drops the outputs of every layer but the last; a "
              "one-layer mlp has none");
  ExpectError(Spec(R"(nodes { name: "x" dense {} }
                      nodes { name: "x" inputs: "x" head {} })"),
              "model.graph.nodes[1] \"x\": the name is also nodes[0]'s");
  ExpectError(Spec(R"(nodes { name: "d" dense {} }
                      nodes { name: "s" inputs: "d" sum {} }
                      nodes { name: "h" inputs: "s" head {} })"),
              "nodes[1] \"s\".inputs: sum takes at least 2 inputs; got 1");
  proto::JobSpec kind_too = Spec(kGraph);
  kind_too.mutable_model()->set_kind(proto::MODEL_DCN);
  ExpectError(kind_too, "model.kind: set beside model.graph");
}

}  // namespace
}  // namespace herald
