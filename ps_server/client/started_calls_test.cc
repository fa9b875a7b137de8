// PsClient::StartFetch / StartPushGradients / StartWriteBack over UCX (a real PsCore behind a
// gRPC control server and a UCX data server, in this process): a started
// call returns at once, even when the shard holds its answer back, and its
// Wait gives what the synchronous call gives; errors come back from Wait
// naming the shard.

#include <memory>
#include <vector>

#include "common/rpc/server.h"
#include "gtest/gtest.h"
#include "ps_server/client/sharded_ps_client.h"
#include "ps_server/service/ps_core.h"
#include "ps_server/service/ps_service.h"
#include "ps_server/service/ucx_ps_server.h"

namespace herald::ps {
namespace {

class StartedCalls : public ::testing::Test {
 protected:
  void SetUp() override {
    service_ = std::make_unique<PsService>(&core_);
    auto server = rpc::StartServer(rpc::ServerOptions(), {service_.get()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ucx::RpcServerOptions ucx_options;
    ucx_options.ucx.loopback_only = true;
    ucx_options.ucx.shared_memory = true;
    auto ucx = UcxPsServer::Start(&core_, ucx_options);
    ASSERT_TRUE(ucx.ok()) << ucx.status();
    ucx_ = std::move(*ucx);
    PsClientOptions options;
    options.ucx_addresses = {ucx_->address()};
    options.ucx_shared_memory = true;
    auto client = MakeGrpcPsClient({server_->address()}, options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    proto::JobSpec spec;
    spec.mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_SGD);
    spec.mutable_sparse_optimizer()->set_learning_rate(0.5f);
    spec.add_tables()->set_dim(4);
    ASSERT_TRUE(client_->StartJob("job", spec, 1).ok());
  }

  PsCore core_{PsCoreOptions{}};
  std::unique_ptr<PsService> service_;
  std::unique_ptr<rpc::RunningServer> server_;
  std::unique_ptr<UcxPsServer> ucx_;
  std::unique_ptr<PsClient> client_;
};

TEST_F(StartedCalls, AStartedFetchReturnsAtOnceAndWaitGivesTheCommittedRows) {
  const std::vector<TableKeys> keys = {{TableId(0), {7, 8, 7}}};
  auto first = client_->Fetch("job", Iteration(0), keys);
  ASSERT_TRUE(first.ok()) << first.status();
  const float before = (*first)[0].rows[0];
  // Iteration 1's fetch waits on the shard for iteration 0's commit; the
  // caller is not held: it pushes and commits while the fetch is out.
  PendingCall<absl::StatusOr<std::vector<TableRows>>> started =
      client_->StartFetch("job", Iteration(1), keys, FetchMode::kCommitted, Launch::kBackground);
  const std::vector<TableGrads> grads = {{TableId(0), {7, 8}, 4, std::vector<float>(8, 1.0f)}};
  ASSERT_TRUE(
      client_->StartPushGradients("job", Iteration(0), WorkerRank(0), grads, Launch::kBackground)
          .Wait()
          .ok());
  ASSERT_TRUE(client_->IterationDone("job", Iteration(0), WorkerRank(0), 1).ok());
  absl::StatusOr<std::vector<TableRows>> rows = started.Wait();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ((*rows)[0].keys, keys[0].keys);
  EXPECT_FLOAT_EQ((*rows)[0].rows[0], before - 0.5f);  // after the commit
  EXPECT_EQ((*rows)[0].rows[0], (*rows)[0].rows[8]);   // the duplicate key, placed twice
  auto synchronous = client_->Fetch("job", Iteration(1), keys);
  ASSERT_TRUE(synchronous.ok());
  EXPECT_EQ((*synchronous)[0].rows, (*rows)[0].rows);
  EXPECT_EQ((*synchronous)[0].versions, (*rows)[0].versions);
  // A push that does not fit is refused by its Wait, naming the table.
  const absl::Status bad =
      client_
          ->StartPushGradients("job", Iteration(1), WorkerRank(0), {{TableId(0), {7}, 4, {1.0f}}},
                               Launch::kBackground)
          .Wait();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(bad.message().find("push of table 0"), std::string::npos) << bad;
}

TEST_F(StartedCalls, AFetchIntoASinkWritesTheCommittedRowsOnWait) {
  const std::vector<TableKeys> keys = {{TableId(0), {7, 8}}};
  auto first = client_->Fetch("job", Iteration(0), keys);
  ASSERT_TRUE(first.ok()) << first.status();
  const uint32_t row_floats = (*first)[0].row_floats;
  std::vector<float> rows(2 * row_floats, -1.0f);
  std::vector<uint64_t> versions(2, 999);
  PendingCall<absl::Status> started =
      client_->StartFetchInto("job", Iteration(1), keys, FetchMode::kCommitted, Launch::kBackground,
                              {{rows.data()}, {versions.data()}, {row_floats}});
  const std::vector<TableGrads> grads = {{TableId(0), {7}, 4, std::vector<float>(4, 1.0f)}};
  ASSERT_TRUE(client_->PushGradients("job", Iteration(0), WorkerRank(0), grads).ok());
  ASSERT_TRUE(client_->IterationDone("job", Iteration(0), WorkerRank(0), 1).ok());
  const absl::Status s = started.Wait();
  ASSERT_TRUE(s.ok()) << s;
  auto synchronous = client_->Fetch("job", Iteration(1), keys);
  ASSERT_TRUE(synchronous.ok()) << synchronous.status();
  EXPECT_EQ(rows, (*synchronous)[0].rows);
  EXPECT_EQ(versions, (*synchronous)[0].versions);
  EXPECT_FLOAT_EQ(rows[0], (*first)[0].rows[0] - 0.5f);       // key 7 trained
  EXPECT_EQ(rows[row_floats], (*first)[0].rows[row_floats]);  // key 8 not
  EXPECT_EQ(versions[0], (*first)[0].versions[0] + 1);
}

TEST_F(StartedCalls, AStartedWriteBackStoresTheRowsAndErrorsComeFromWait) {
  const std::vector<TableKeys> keys = {{TableId(0), {3}}};
  auto fetched = client_->Fetch("job", Iteration(0), keys);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  std::vector<TableRows> rows = *fetched;
  rows[0].rows.assign(rows[0].row_floats, 2.5f);
  PendingCall<absl::Status> written =
      client_->StartWriteBack("job", Iteration(0), WorkerRank(0), rows, Launch::kBackground);
  ASSERT_TRUE(written.Wait().ok());
  ASSERT_TRUE(client_->IterationDone("job", Iteration(0), WorkerRank(0), 1).ok());
  auto after = client_->Fetch("job", Iteration(1), keys);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)[0].rows, rows[0].rows);
  // The same key written back twice in one iteration is refused, by Wait.
  PendingCall<absl::Status> again =
      client_->StartWriteBack("job", Iteration(1), WorkerRank(0), rows, Launch::kBackground);
  ASSERT_TRUE(again.Wait().ok());
  const absl::Status twice =
      client_->StartWriteBack("job", Iteration(1), WorkerRank(0), rows, Launch::kBackground).Wait();
  EXPECT_EQ(twice.code(), absl::StatusCode::kAlreadyExists) << twice;
  EXPECT_NE(twice.message().find("ps shard 0"), std::string::npos) << twice;
}

}  // namespace
}  // namespace herald::ps
