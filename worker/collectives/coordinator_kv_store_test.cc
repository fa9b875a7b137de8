// Two Gloo ranks rendezvous through CoordinatorKvStore over a real gRPC
// server on 127.0.0.1 port 0. The server is a minimal Coordinator for this
// test (the real one is the scheduler's), backed by an InProcessKvStore.
#include "worker/collectives/coordinator_kv_store.h"

#include <thread>

#include "common/rpc/server.h"
#include "common/rpc/status_convert.h"
#include "gtest/gtest.h"
#include "worker/collectives/gloo_all_reducer.h"

namespace herald::worker {
namespace {

class FakeCoordinator final : public proto::Coordinator::Service {
 public:
  grpc::Status KvSet(grpc::ServerContext*, const proto::KvSetRequest* request,
                     proto::KvSetResponse*) override {
    return rpc::ToGrpcStatus(store_.Set(request->scope() + "/" + request->key(), request->value()));
  }
  grpc::Status KvGet(grpc::ServerContext*, const proto::KvGetRequest* request,
                     proto::KvGetResponse* response) override {
    std::vector<std::string> keys;
    for (const auto& k : request->keys()) keys.push_back(request->scope() + "/" + k);
    auto values = store_.Get(keys, absl::Milliseconds(request->wait_ms()));
    if (!values.ok()) return rpc::ToGrpcStatus(values.status());
    for (auto& v : *values) response->add_values(std::move(v));
    return grpc::Status::OK;
  }

 private:
  InProcessKvStore store_;
};

TEST(CoordinatorKvStore, GlooRanksRendezvousOverTheRpc) {
  FakeCoordinator coordinator;
  auto server = rpc::StartServer({}, {&coordinator});
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials());
  std::shared_ptr<proto::Coordinator::StubInterface> stub = proto::Coordinator::NewStub(channel);

  std::vector<std::vector<float>> data = {{1, 2, 3}, {10, 20, 30}};
  std::vector<absl::Status> status(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      CoordinatorKvStore store(stub, "job-7");
      auto reducer = GlooAllReducer::Connect(&store, r, 2, GlooOptions{});
      status[r] = reducer.ok() ? (*reducer)->AllReduceSum(data[r].data(), 3) : reducer.status();
    });
  }
  for (auto& t : ranks) t.join();
  ASSERT_TRUE(status[0].ok()) << status[0];
  ASSERT_TRUE(status[1].ok()) << status[1];
  EXPECT_EQ(data[0], (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(data[1], data[0]);

  // A key nobody sets: the error comes back through the RPC, naming it.
  CoordinatorKvStore store(stub, "job-8");
  auto missing = store.Get({"never"}, absl::Milliseconds(50));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(missing.status().message().find("job-8/never"), std::string::npos) << missing.status();
}

}  // namespace
}  // namespace herald::worker
