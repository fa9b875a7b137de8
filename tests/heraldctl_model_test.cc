// heraldctl model SPEC, run as a user would: a graph's nodes with shapes and
// parameter counts, JSON, a built-in kind as its graph (written out with
// --as_graph), and a wrong graph refused with exit 2 naming the node.

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

using testing::MakeTestDir;
using testing::RunfilePath;
using testing::RunHeraldctl;

TEST(HeraldctlModel, PrintsEachNodeOfTheGraphExampleAndTheTotal) {
  const std::string dir = MakeTestDir("ctl_model");
  const std::string spec = RunfilePath("deploy/examples/dcn_v2_graph.txt");
  auto text = RunHeraldctl(dir, {"model", spec});
  ASSERT_EQ(text.code, 0) << text.output;
  // x = [13 dense | 26 × 16] = 429; three rank-64 v2 layers: 3·(2·429·64 + 429).
  EXPECT_NE(text.output.find("cross v2 x3 r64"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(std::to_string(3 * (2 * 429 * 64 + 429))), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("351"), std::string::npos) << text.output;  // 27 fields' pairs
  EXPECT_NE(text.output.find("total"), std::string::npos);

  auto json = RunHeraldctl(dir, {"model", spec, "--json"});
  ASSERT_EQ(json.code, 0) << json.output;
  EXPECT_NE(json.output.find("{\"name\": \"dots\", \"layer\": \"dot_interaction\", \"inputs\": "
                             "[\"fields\"], \"width\": 351"),
            std::string::npos)
      << json.output;
}

// A built-in kind prints as the graph it stands for, and --as_graph writes
// that graph out as a model section: a spec holding it describes the same
// model, node for node.
TEST(HeraldctlModel, ABuiltInKindIsItsGraphWrittenOut) {
  const std::string dir = MakeTestDir("ctl_model_kind");
  const std::string dcn = RunfilePath("deploy/examples/dcn.txt");
  auto text = RunHeraldctl(dir, {"model", dcn});
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("MODEL_DCN (built-in), as its graph:"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("cross v1 x3"), std::string::npos) << text.output;

  auto written = RunHeraldctl(dir, {"model", dcn, "--as_graph"});
  ASSERT_EQ(written.code, 0) << written.output;
  EXPECT_NE(written.output.find("model {\n  graph {\n"), std::string::npos) << written.output;
  // The example without its model line, then the written-out graph.
  std::ifstream in(dcn);
  const std::string graph_spec = dir + "/dcn_graph.txt";
  std::ofstream out(graph_spec);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model", 0) != 0) out << line << "\n";
  }
  out << written.output;
  out.close();

  auto kind_json = RunHeraldctl(dir, {"model", dcn, "--json"});
  auto graph_json = RunHeraldctl(dir, {"model", graph_spec, "--json"});
  ASSERT_EQ(kind_json.code, 0) << kind_json.output;
  ASSERT_EQ(graph_json.code, 0) << graph_json.output;
  const std::string kind_prefix = "{\"kind\": \"MODEL_DCN\", ";
  ASSERT_EQ(kind_json.output.rfind(kind_prefix, 0), 0u) << kind_json.output;
  EXPECT_EQ("{" + kind_json.output.substr(kind_prefix.size()), graph_json.output);
}

TEST(HeraldctlModel, AWrongGraphExitsTwoNamingTheNode) {
  const std::string dir = MakeTestDir("ctl_model_bad");
  const std::string spec = dir + "/bad.txt";
  std::ofstream(spec) << R"(
    num_dense: 2
    tables { name: "user" dim: 8 }
    tables { name: "item" dim: 4 }
    model { graph {
      nodes { name: "u" embeddings { features: "user" } }
      nodes { name: "i" embeddings { features: "item" } }
      nodes { name: "score" inputs: ["u", "i"] dot {} }
      nodes { name: "out" inputs: "score" head {} }
    } })";
  auto result = RunHeraldctl(dir, {"model", spec});
  EXPECT_EQ(result.code, 2) << result.output;
  EXPECT_NE(result.output.find("model.graph.nodes[2] \"score\": inputs[1] \"i\": width 4 differs"),
            std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace herald
