#include <signal.h>

#include <fstream>
#include <iostream>
#include <string>

#include "common/rpc/channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

using testing::ChildProcess;
using testing::MakeTestDir;
using testing::RunfilePath;

// Calls grpc.health.v1.Health/Check with an empty request (service "") and
// returns the serving status field (1 = SERVING), or -1 on failure.
int HealthStatus(int port) {
  auto channel = rpc::MakeChannel("127.0.0.1:" + std::to_string(port), {});
  if (!channel.ok()) return -1;
  grpc::GenericStub stub(*channel);
  grpc::ClientContext ctx;
  rpc::SetDeadline(&ctx, 5000);
  // HealthCheckRequest{service: ""} encoded explicitly (an empty buffer is
  // rejected by the server as unparsable).
  const char kRequest[] = {0x0A, 0x00};
  grpc::Slice slice(kRequest, sizeof(kRequest));
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::Status status;
  grpc::CompletionQueue cq;
  auto call = stub.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  if (!cq.Next(&tag, &ok) || !ok || !status.ok()) {
    std::cerr << "health check: " << status.error_code() << " " << status.error_message() << "\n";
    return -1;
  }
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return -1;
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  // HealthCheckResponse { ServingStatus status = 1; } => 0x08 <varint>
  if (bytes.size() == 2 && bytes[0] == 0x08) return bytes[1];
  return bytes.empty() ? 0 : -1;
}

class ServerLifecycle : public ::testing::TestWithParam<std::string> {
 protected:
  // `args` plus what the binary needs to start: herald_worker must name a
  // scheduler; nothing listens on 127.0.0.1:1, so it keeps retrying its
  // registration while it serves health.
  std::vector<std::string> Args(std::vector<std::string> args) const {
    if (GetParam() == "worker/herald_worker") args.push_back("--scheduler=127.0.0.1:1");
    return args;
  }
};

TEST_P(ServerLifecycle, ServesHealthOnPortZeroAndStopsOnSigterm) {
  std::string dir = MakeTestDir("lifecycle");
  std::string port_file = dir + "/port";
  auto child =
      ChildProcess::Start(RunfilePath(GetParam()),
                          Args({"--listen=127.0.0.1:0", "--port_file=" + port_file}), dir + "/log");
  ASSERT_TRUE(child.ok()) << child.status();
  auto port = (*child)->WaitForPortFile(port_file, 20000);
  ASSERT_TRUE(port.ok()) << port.status();
  EXPECT_EQ(HealthStatus(*port), 1) << (*child)->LogTail();

  ASSERT_TRUE((*child)->Signal(SIGTERM).ok());
  auto code = (*child)->WaitForExit(20000);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0) << (*child)->LogTail();
  EXPECT_NE((*child)->LogTail().find("shutting down"), std::string::npos);
}

TEST_P(ServerLifecycle, RefusesAPortAlreadyInUse) {
  std::string dir = MakeTestDir("busy");
  auto first = ChildProcess::Start(RunfilePath(GetParam()), Args({"--port_file=" + dir + "/port1"}),
                                   dir + "/log1");
  ASSERT_TRUE(first.ok());
  auto port = (*first)->WaitForPortFile(dir + "/port1", 20000);
  ASSERT_TRUE(port.ok()) << port.status();
  auto second =
      ChildProcess::Start(RunfilePath(GetParam()),
                          Args({"--listen=127.0.0.1:" + std::to_string(*port)}), dir + "/log2");
  ASSERT_TRUE(second.ok());
  auto code = (*second)->WaitForExit(20000);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 1);
  EXPECT_NE((*second)->LogTail().find("cannot bind"), std::string::npos) << (*second)->LogTail();
}

TEST_P(ServerLifecycle, BadFlagIsAUsageError) {
  std::string dir = MakeTestDir("badflag");
  auto child =
      ChildProcess::Start(RunfilePath(GetParam()), Args({"--log_level=loud"}), dir + "/log");
  ASSERT_TRUE(child.ok());
  auto code = (*child)->WaitForExit(20000);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 2);
  EXPECT_NE((*child)->LogTail().find("unknown log level 'loud'"), std::string::npos);
}

// --version prints the binary's name, the release (the VERSION file), the
// commit and the wire version, and exits 0 without starting anything.
TEST(EveryBinary, PrintsItsVersionCommitAndWireVersion) {
  std::ifstream file(RunfilePath("VERSION"));
  std::string version;
  file >> version;
  ASSERT_FALSE(version.empty());
  const std::string dir = MakeTestDir("version");
  int i = 0;
  for (const char* binary : {"ps_server/herald_ps", "worker/herald_worker",
                             "scheduler/herald_scheduler", "cli/heraldctl", "tools/model_reader"}) {
    auto child =
        ChildProcess::Start(RunfilePath(binary), {"--version"}, dir + "/log" + std::to_string(i++));
    ASSERT_TRUE(child.ok()) << child.status();
    auto code = (*child)->WaitForExit(20000);
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 0) << binary;
    const std::string name = std::string(binary).substr(std::string(binary).rfind('/') + 1);
    const std::string out = (*child)->LogTail();
    EXPECT_NE(out.find(name + " " + version + " (commit "), std::string::npos) << out;
    EXPECT_NE(out.find(", wire version "), std::string::npos) << out;
  }
}

TEST(WorkerProcess, NeedsASchedulerAndRefusesAMissingDevice) {
  std::string dir = MakeTestDir("worker_flags");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "--scheduler is required"},
      // A CUDA build says the GPU does not exist, another build that it has no CUDA.
      {{"--scheduler=127.0.0.1:1", "--device=cuda:4096"}, "--device: cuda:4096"},
      {{"--scheduler=127.0.0.1:1", "--device=tpu"}, "expected cpu or cuda:N"},
      {{"--scheduler=127.0.0.1:1", "--device=cuda:x"}, "expected cpu or cuda:N"},
      // The null device (bench/pipeline_bench) is only in herald_worker_with_test_hooks.
      {{"--scheduler=127.0.0.1:1", "--device=null"}, "expected cpu or cuda:N"},
      {{"--scheduler=127.0.0.1:1", "--pinned_staging_mb=0"}, "expected 1..4096"},
      {{"--scheduler=127.0.0.1:1", "--token-file=" + dir + "/missing"}, "cannot read"},
  };
  int i = 0;
  for (const auto& [args, message] : cases) {
    auto child = ChildProcess::Start(RunfilePath("worker/herald_worker"), args,
                                     dir + "/log" + std::to_string(i++));
    ASSERT_TRUE(child.ok());
    auto code = (*child)->WaitForExit(20000);
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 2) << message;
    EXPECT_NE((*child)->LogTail().find(message), std::string::npos) << (*child)->LogTail();
  }
}

TEST(SchedulerProcess, RefusesPlannerThreadsOutOfRange) {
  std::string dir = MakeTestDir("scheduler_flags");
  int i = 0;
  for (const char* threads : {"--planner_threads=-1", "--planner-threads=65"}) {
    auto child = ChildProcess::Start(RunfilePath("scheduler/herald_scheduler"), {threads},
                                     dir + "/log" + std::to_string(i++));
    ASSERT_TRUE(child.ok());
    auto code = (*child)->WaitForExit(20000);
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 2) << threads;
    EXPECT_NE((*child)->LogTail().find("--planner_threads in 0..64"), std::string::npos)
        << (*child)->LogTail();
  }
}

INSTANTIATE_TEST_SUITE_P(Binaries, ServerLifecycle,
                         ::testing::Values("ps_server/herald_ps", "worker/herald_worker",
                                           "scheduler/herald_scheduler"),
                         [](const auto& info) {
                           return info.param.substr(info.param.find('/') + 1);
                         });

}  // namespace
}  // namespace herald
