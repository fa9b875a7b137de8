// herald_ps's UCX data path against a real PsCore: requests in the row
// format are served straight into the job's shard; a message that does not
// decode, names no job or asks what the shard refuses is answered with an
// error naming it, is counted, and changes nothing stored; the server keeps
// serving.

#include "ps_server/service/ucx_ps_server.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "ps_server/wire/row_wire.h"

namespace herald::ps {
namespace {

class UcxPsServerTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kRun = 5;  // the job's run on the shard
  void SetUp() override {
    proto::PsStartJobRequest start;
    start.set_job_id("job");
    start.set_shard(0);
    start.set_num_shards(1);
    start.set_num_workers(1);
    start.set_run_id(kRun);
    start.mutable_spec()->mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_SGD);
    start.mutable_spec()->mutable_sparse_optimizer()->set_learning_rate(0.5f);
    start.mutable_spec()->add_tables()->set_dim(4);
    proto::PsStartJobResponse started;
    ASSERT_TRUE(core_.StartJob(start, &started).ok());
    ucx::RpcServerOptions options;
    options.ucx.loopback_only = true;
    options.ucx.shared_memory = true;
    auto server = UcxPsServer::Start(&core_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    auto client =
        ucx::UcxRpcClient::Connect({server_->address()}, {"shard 0"}, "", absl::Seconds(10),
                                   ucx::UcxWorker::Options{true, true});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }

  absl::StatusOr<ucx::AlignedBuffer> Call(ucx::AlignedBuffer m) {
    return client_->Call(0, std::move(m), absl::Seconds(10));
  }

  uint64_t StoredRows() {
    proto::PsStatsRequest r;
    r.set_job_id("job");
    proto::PsStatsResponse stats;
    EXPECT_TRUE(core_.Stats(r, &stats).ok());
    return stats.tables(0).rows();
  }

  PsCore core_{PsCoreOptions{}};
  std::unique_ptr<UcxPsServer> server_;
  std::unique_ptr<ucx::UcxRpcClient> client_;
};

TEST_F(UcxPsServerTest, FetchPushCommitFetchOverUcx) {
  const std::vector<Key> keys = {7, 8};
  auto first = Call(wire::EncodeFetch("job", kRun, FetchIn{0, false, false, {{0, keys}}}));
  ASSERT_TRUE(first.ok()) << first.status();
  auto rows = wire::DecodeFetchReply(*first, {2});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ((*rows)[0].row_floats, 4u);
  const float before = (*rows)[0].rows[0];
  const std::vector<float> grads(8, 1.0f);
  ASSERT_TRUE(Call(wire::EncodePush("job", kRun, PushIn{0, 0, {{0, 4, keys, grads}}})).ok());
  ASSERT_TRUE(core_.Shard("job").value()->IterationDone(Iteration(0), WorkerRank(0), 1).ok());
  auto second = Call(wire::EncodeFetch("job", kRun, FetchIn{1, false, false, {{0, keys}}}));
  ASSERT_TRUE(second.ok()) << second.status();
  rows = wire::DecodeFetchReply(*second, {2});
  ASSERT_TRUE(rows.ok());
  EXPECT_FLOAT_EQ((*rows)[0].rows[0], before - 0.5f);  // one SGD step of the pushed gradient
  EXPECT_EQ((*rows)[0].versions[1], 1u);
}

TEST_F(UcxPsServerTest, LargeMessagesReuseTheirBuffers) {
  // 16 384 keys: a 128 KiB request and a 384 KiB reply, both pooled sizes.
  std::vector<Key> keys(16384);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i * 7;
  auto fetch = [&] {
    auto reply = Call(wire::EncodeFetch("job", kRun, FetchIn{0, false, false, {{0, keys}}}));
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_GE(reply->size(), keys.size() * 4 * sizeof(float));
  };
  for (int i = 0; i < 3; ++i) fetch();  // the pool's blocks of these sizes exist now
  const ucx::BufferPool::Stats before = ucx::BufferPool::Shared().stats();
  for (int i = 0; i < 20; ++i) fetch();
  const ucx::BufferPool::Stats after = ucx::BufferPool::Shared().stats();
  // Each call's request and reply are pooled on both sides: client and
  // server share this process's pool. A block given back on the progress
  // thread just after the next call started may be allocated once more.
  EXPECT_GE(after.reused - before.reused, 40u);
  EXPECT_LE(after.allocated - before.allocated, 4u);
  EXPECT_EQ(after.freed, before.freed);
}

TEST_F(UcxPsServerTest, BadMessagesAreRefusedNamingWhatAndChangeNothing) {
  const std::vector<Key> keys = {1, 2, 3};
  ASSERT_TRUE(Call(wire::EncodeFetch("job", kRun, FetchIn{0, false, false, {{0, keys}}})).ok());
  const uint64_t rows = StoredRows();

  ucx::AlignedBuffer garbage(40);
  std::memset(garbage.data(), 0x5a, garbage.size());
  absl::Status s = Call(std::move(garbage)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("row message: magic"), std::string::npos) << s;
  EXPECT_EQ(server_->malformed(), 1u);

  s = Call(wire::EncodeFetch("other-job", kRun, FetchIn{0, false, false, {{0, keys}}})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("other-job"), std::string::npos) << s;
  // A worker of an earlier run of the job: refused, nothing stored.
  s = Call(wire::EncodeFetch("job", kRun - 1, FetchIn{0, false, false, {{0, {77, 78}}}})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("earlier run"), std::string::npos) << s;

  const std::vector<Key> new_keys = {100, 101};
  const std::vector<float> wrong_dim(6, 1.0f);  // dim 3 for a dim-4 table
  s = Call(wire::EncodePush("job", kRun, PushIn{0, 0, {{0, 3, new_keys, wrong_dim}}})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = Call(wire::EncodeFetch("job", kRun, FetchIn{0, false, false, {{5, keys}}})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("table 5"), std::string::npos) << s;
  s = Call(wire::EncodeFetch("job", kRun, FetchIn{0, true, true, {{0, keys}}})).status();
  EXPECT_NE(s.message().find("cannot be early"), std::string::npos) << s;

  EXPECT_EQ(StoredRows(), rows) << "a refused request stored something";
  proto::PsStatsRequest r;
  r.set_job_id("job");
  proto::PsStatsResponse stats;
  ASSERT_TRUE(core_.Stats(r, &stats).ok());
  EXPECT_GE(stats.rejected_requests(), 3u);
  // Still serving.
  EXPECT_TRUE(Call(wire::EncodeFetch("job", kRun, FetchIn{0, false, false, {{0, keys}}})).ok());
}

}  // namespace
}  // namespace herald::ps
