// heraldctl model SPEC, run as a user would: a graph's nodes with shapes and
// parameter counts, JSON, a built-in kind, and a wrong graph refused with
// exit 2 naming the node.

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

  auto built_in = RunHeraldctl(dir, {"model", RunfilePath("deploy/examples/dcn.txt")});
  ASSERT_EQ(built_in.code, 0) << built_in.output;
  EXPECT_NE(built_in.output.find("MODEL_DCN (built-in): "), std::string::npos) << built_in.output;
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
