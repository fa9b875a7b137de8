// Every job spec in deploy/examples/ parses as text-format JobSpec and passes
// the scheduler's validation and the model factory (one per model kind);
// variations of one that the validation must refuse.

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/model_graph.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "scheduler/data/data_schema_spec.h"
#include "scheduler/data/schema_file.h"
#include "scheduler/jobs/job_spec_check.h"
#include "tests/harness/process.h"
#include "worker/device/cpu_device.h"
#include "worker/model/model_factory.h"

namespace herald {
namespace {

proto::JobSpec ReadExample(const std::string& name) {
  std::ifstream in(testing::RunfilePath("deploy/examples/" + name + ".txt"));
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  proto::JobSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &spec)) << name;
  return spec;
}

TEST(ExampleSpecs, EveryExampleIsAValidJobForItsModel) {
  std::set<proto::ModelKind> kinds;
  for (const char* name : {"wide_and_deep", "deepfm", "dcn", "ncf", "dlrm"}) {
    SCOPED_TRACE(name);
    const proto::JobSpec spec = ReadExample(name);
    EXPECT_EQ(spec.name(), name);
    EXPECT_TRUE(scheduler::ValidateJobSpec(spec).ok()) << scheduler::ValidateJobSpec(spec);
    worker::CpuDevice device;
    auto model = worker::CreateModel(spec, &device);
    EXPECT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(spec.tables_size(), 26);
    kinds.insert(spec.model().kind());
  }
  EXPECT_EQ(kinds.size(), 5u);
}

// The model-graph example: valid, and its graph has the shapes written in
// its comment (x: 13 + 26·16 = 429 wide; 27 fields of 16 → 351 dots).
TEST(ExampleSpecs, TheGraphExampleIsAValidJob) {
  const proto::JobSpec spec = ReadExample("dcn_v2_graph");
  EXPECT_TRUE(scheduler::ValidateJobSpec(spec).ok()) << scheduler::ValidateJobSpec(spec);
  worker::CpuDevice device;
  auto model = worker::CreateModel(spec, &device);
  ASSERT_TRUE(model.ok()) << model.status();
  auto graph = ResolveModelGraph(spec);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(size_t(graph->parameters()), (*model)->params().size());
  for (const GraphNode& node : graph->nodes) {
    if (node.spec.name() == "x") {
      EXPECT_EQ(node.shape.width, 429);
    }
    if (node.spec.name() == "dots") {
      EXPECT_EQ(node.shape.width, 351);
    }
  }
}

// The two-head example: its schema read from beside it, a valid job whose
// model trains the click and the rating.
TEST(ExampleSpecs, TheTwoHeadExampleTrainsTwoLabels) {
  proto::JobSpec spec = ReadExample("shop_two_heads");
  const std::string dir =
      std::filesystem::path(testing::RunfilePath("deploy/examples/shop_two_heads.txt"))
          .parent_path();
  ASSERT_TRUE(scheduler::InlineSchemaFile(&spec, dir).ok());
  ASSERT_TRUE(scheduler::ResolveDataSchema(&spec).ok());
  EXPECT_TRUE(scheduler::ValidateJobSpec(spec).ok()) << scheduler::ValidateJobSpec(spec);
  worker::CpuDevice device;
  auto model = worker::CreateModel(spec, &device);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ((*model)->shape().heads.size(), 2u);
  EXPECT_EQ((*model)->shape().num_labels, 2u);
  EXPECT_EQ((*model)->shape().heads[1].loss, worker::LossKind::kSquaredError);
}

// The CSV example: its schema file, read from beside the spec as heraldctl
// reads it, makes a valid job with the tables in the schema's order.
TEST(ExampleSpecs, TheCsvExampleReadsItsSchemaFile) {
  proto::JobSpec spec = ReadExample("shop_csv");
  const std::string dir =
      std::filesystem::path(testing::RunfilePath("deploy/examples/shop_csv.txt")).parent_path();
  ASSERT_TRUE(scheduler::InlineSchemaFile(&spec, dir).ok());
  ASSERT_TRUE(scheduler::ResolveDataSchema(&spec).ok());
  EXPECT_EQ(spec.num_dense(), 2u);
  EXPECT_EQ(spec.data().schema().columns_size(), 9);
  EXPECT_EQ(spec.data().schema().columns(7).weight_separator(), ":");
  EXPECT_TRUE(scheduler::ValidateJobSpec(spec).ok()) << scheduler::ValidateJobSpec(spec);
  worker::CpuDevice device;
  auto model = worker::CreateModel(spec, &device);
  EXPECT_TRUE(model.ok()) << model.status();
}

// The example with scheduling.allocation_passes: up to 8 under a
// location-aware policy; more, or any under vanilla, refused by name.
TEST(ExampleSpecs, AllocationPassesAreCheckedAgainstTheirRangeAndPolicy) {
  proto::JobSpec spec = ReadExample("wide_and_deep");
  spec.mutable_scheduling()->set_policy(proto::POLICY_HERALD);
  for (uint32_t passes : {0u, 1u, 2u, 8u}) {
    spec.mutable_scheduling()->set_allocation_passes(passes);
    EXPECT_TRUE(scheduler::ValidateJobSpec(spec).ok()) << passes;
  }
  spec.mutable_scheduling()->set_allocation_passes(9);
  EXPECT_NE(
      scheduler::ValidateJobSpec(spec).message().find("scheduling.allocation_passes: 9, want 0..8"),
      std::string::npos)
      << scheduler::ValidateJobSpec(spec);
  spec.mutable_scheduling()->set_allocation_passes(2);
  spec.mutable_scheduling()->set_policy(proto::POLICY_VANILLA);
  EXPECT_NE(scheduler::ValidateJobSpec(spec).message().find(
                "scheduling.allocation_passes: 2 with policy vanilla"),
            std::string::npos)
      << scheduler::ValidateJobSpec(spec);
}

// data_path: the three DataPath values pass; another number is refused by name.
TEST(ExampleSpecs, DataPathIsOneOfTheDataPaths) {
  proto::JobSpec spec = ReadExample("wide_and_deep");
  for (proto::DataPath path :
       {proto::DATA_PATH_DEFAULT, proto::DATA_PATH_GRPC, proto::DATA_PATH_UCX}) {
    spec.set_data_path(path);
    EXPECT_TRUE(scheduler::ValidateJobSpec(spec).ok()) << proto::DataPath_Name(path);
  }
  spec.set_data_path(static_cast<proto::DataPath>(7));
  EXPECT_NE(scheduler::ValidateJobSpec(spec).message().find("data_path: 7 is not a DataPath"),
            std::string::npos)
      << scheduler::ValidateJobSpec(spec);
}

}  // namespace
}  // namespace herald
