#include <fstream>
#include <string>

#include "common/rpc/channel.h"
#include "common/rpc/server.h"
#include "common/rpc/status_convert.h"
#include "gtest/gtest.h"
#include "proto/ps.grpc.pb.h"

namespace herald::rpc {
namespace {

TEST(StatusConvert, RoundTripsEveryCodeAndMessage) {
  for (int code = 1; code <= 16; ++code) {
    absl::Status s(static_cast<absl::StatusCode>(code), "shard 2: boom");
    grpc::Status g = ToGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), code);
    EXPECT_EQ(g.error_message(), "shard 2: boom");
    EXPECT_EQ(FromGrpcStatus(g), s);
  }
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

// A service whose Stats handler answers with a marker value.
class MarkerPs final : public proto::ParameterServer::Service {
  grpc::Status Stats(grpc::ServerContext*, const proto::PsStatsRequest* req,
                     proto::PsStatsResponse* resp) override {
    if (req->job_id() == "bad")
      return ToGrpcStatus(absl::InvalidArgumentError("unknown job 'bad'"));
    resp->set_rows_fetched(4242);
    return grpc::Status::OK;
  }
};

TEST(StartServer, BindsPortZeroAndServesOnLoopback) {
  MarkerPs service;
  auto server = StartServer(ServerOptions{}, {&service});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_GT((*server)->port(), 0);
  EXPECT_EQ((*server)->address(), "127.0.0.1:" + std::to_string((*server)->port()));

  auto channel = MakeChannel((*server)->address(), ChannelOptions{});
  ASSERT_TRUE(channel.ok());
  auto stub = proto::ParameterServer::NewStub(*channel);
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 5000);
  proto::PsStatsRequest req;
  proto::PsStatsResponse resp;
  ASSERT_TRUE(stub->Stats(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.rows_fetched(), 4242u);

  grpc::ClientContext ctx2;
  SetDeadline(&ctx2, 5000);
  req.set_job_id("bad");
  absl::Status s = FromGrpcStatus(stub->Stats(&ctx2, req, &resp));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "unknown job 'bad'");

  (*server)->Shutdown();
  (*server)->Shutdown();  // idempotent
}

TEST(StartServer, RejectsMalformedAddressAndBusyPort) {
  MarkerPs service;
  ServerOptions bad;
  bad.listen_address = "localhost";
  EXPECT_EQ(StartServer(bad, {&service}).status().code(), absl::StatusCode::kInvalidArgument);

  auto first = StartServer(ServerOptions{}, {&service});
  ASSERT_TRUE(first.ok());
  MarkerPs service2;
  ServerOptions same;
  same.listen_address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = StartServer(same, {&service2});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(WritePortFile, WritesNumberAtomically) {
  std::string path = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/port";
  ASSERT_TRUE(WritePortFile(path, 12345).ok());
  std::ifstream in(path);
  int port = 0;
  in >> port;
  EXPECT_EQ(port, 12345);
}

}  // namespace
}  // namespace herald::rpc
