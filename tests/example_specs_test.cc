// Every job spec in deploy/examples/ parses as text-format JobSpec and passes
// the scheduler's validation and the model factory (one per model kind).

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "scheduler/service/job_spec_check.h"
#include "tests/harness/process.h"
#include "worker/device/cpu_device.h"
#include "worker/model/model_factory.h"

namespace herald {
namespace {

TEST(ExampleSpecs, EveryExampleIsAValidJobForItsModel) {
  std::set<proto::ModelKind> kinds;
  for (const char* name : {"wide_and_deep", "deepfm", "dcn", "ncf", "dlrm"}) {
    SCOPED_TRACE(name);
    std::ifstream in(testing::RunfilePath(std::string("deploy/examples/") + name + ".txt"));
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    proto::JobSpec spec;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &spec));
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

}  // namespace
}  // namespace herald
