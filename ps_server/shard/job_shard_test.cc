#include "ps_server/shard/job_shard.h"

#include <atomic>
#include <cstring>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "checkpoint/shard_file.h"
#include "common/data/test_util.h"
#include "common/math/sparse_optimizer.h"
#include "common/router.h"
#include "gtest/gtest.h"
#include "ps_server/service/shard_adaptor.h"

namespace herald::ps {
namespace {

using math::SparseOptimizerKind;

constexpr uint32_t kDim = 4;

std::string Pack(const std::vector<Key>& keys) {
  return std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(Key));
}
std::string Pack(const std::vector<float>& f) {
  return std::string(reinterpret_cast<const char*>(f.data()), f.size() * sizeof(float));
}
std::string Pack(const std::vector<uint64_t>& v, int) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(uint64_t));
}

JobShardOptions Options(SparseOptimizerKind kind, uint32_t workers, uint32_t shard = 0,
                        uint32_t shards = 1) {
  JobShardOptions o;
  o.job_id = "job";
  o.shard = shard;
  o.num_shards = shards;
  o.num_workers = workers;
  o.stripes_per_table = 4;
  for (uint32_t t = 0; t < 2; ++t) {
    TableOptions table;
    table.id = TableId(t);
    table.dim = kDim;
    table.seed = 7;
    table.optimizer.kind = kind;
    table.optimizer.learning_rate = 0.1f;
    o.tables.push_back(table);
  }
  return o;
}

class JobShardTest : public ::testing::Test {
 protected:
  std::unique_ptr<JobShard> Make(JobShardOptions o) {
    auto shard = JobShard::Create(std::move(o), &pool_);
    EXPECT_TRUE(shard.ok()) << shard.status();
    return *std::move(shard);
  }

  static absl::Status Push(JobShard& s, uint64_t t, uint32_t worker, uint32_t table,
                           std::vector<Key> keys, std::vector<float> grads, uint32_t dim = kDim) {
    proto::PushGradientsRequest r;
    r.set_job_id("job");
    r.set_iteration(t);
    r.set_worker_rank(worker);
    auto* g = r.add_grads();
    g->set_table_id(table);
    g->set_keys(Pack(keys));
    g->set_dim(dim);
    g->set_grads(Pack(grads));
    return ServePush(s, r);
  }

  static absl::StatusOr<bool> Done(JobShard& s, uint64_t t, uint32_t worker, uint32_t workers) {
    return s.IterationDone(Iteration(t), WorkerRank(worker), workers);
  }

  static absl::Status TryFetch(JobShard& s, uint64_t t, uint32_t table, std::vector<Key> keys,
                               absl::Duration wait, uint32_t early = 0,
                               proto::FetchResponse* response = nullptr) {
    proto::FetchRequest r;
    r.set_job_id("job");
    r.set_iteration(t);
    r.set_early(early != 0);
    r.set_early_distance(early);
    auto* k = r.add_keys();
    k->set_table_id(table);
    k->set_keys(Pack(keys));
    proto::FetchResponse ignored;
    return ServeFetch(s, r, absl::Now() + wait, response ? response : &ignored);
  }

  // Fetches one table's rows; fails the test on error.
  static proto::RowBlock Fetch(JobShard& s, uint64_t t, uint32_t table, std::vector<Key> keys) {
    proto::FetchResponse resp;
    absl::Status st = TryFetch(s, t, table, std::move(keys), absl::Seconds(30), 0, &resp);
    EXPECT_TRUE(st.ok()) << st;
    return resp.rows_size() ? resp.rows(0) : proto::RowBlock();
  }

  static std::vector<float> RowOf(const proto::RowBlock& b, size_t i) {
    std::vector<float> row(b.row_floats());
    std::memcpy(row.data(), b.rows().data() + i * b.row_floats() * 4, b.row_floats() * 4);
    return row;
  }
  static uint64_t VersionOf(const proto::RowBlock& b, size_t i) {
    uint64_t v;
    std::memcpy(&v, b.versions().data() + i * 8, 8);
    return v;
  }

  ThreadPool pool_{3};
};

TEST_F(JobShardTest, ReadOnlyFetchServesCommittedRowsAndCreatesNone) {
  auto shard = Make(Options(SparseOptimizerKind::kAdagrad, 1));
  const proto::RowBlock initial = Fetch(*shard, 0, 0, {42});  // creates key 42
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {42}, {0.5f, 0.5f, 0.5f, 0.5f}).ok());
  ASSERT_TRUE(*Done(*shard, 0, 0, 1));
  auto read_only = [&](std::vector<Key> keys, bool early, proto::FetchResponse* out) {
    proto::FetchRequest r;
    r.set_job_id("job");
    r.set_iteration(1);
    r.set_read_only(true);
    r.set_early(early);
    auto* k = r.add_keys();
    k->set_table_id(0);
    k->set_keys(Pack(keys));
    return ServeFetch(*shard, r, absl::Now() + absl::Seconds(5), out);
  };
  proto::FetchResponse got;
  ASSERT_TRUE(read_only({42, 7}, false, &got).ok());
  // 42: as committed (trained once); 7, never stored: its initial row.
  const proto::RowBlock trained = Fetch(*shard, 1, 0, {42});
  EXPECT_EQ(RowOf(got.rows(0), 0), RowOf(trained, 0));
  EXPECT_NE(RowOf(got.rows(0), 0), RowOf(initial, 0));
  EXPECT_EQ(VersionOf(got.rows(0), 0), 1u);
  EXPECT_EQ(VersionOf(got.rows(0), 1), 0u);
  proto::PsStatsResponse stats;
  shard->Stats(&stats);
  EXPECT_EQ(stats.tables(0).rows(), 1u) << "the read-only fetch created key 7";
  EXPECT_EQ(stats.rows_read_only(), 2u);
  EXPECT_EQ(stats.read_only_requests(), 1u);
  EXPECT_EQ(stats.rows_fetched(), 2u);  // the training fetches of 42 only
  // ... and it is the row the shard creates when a training fetch asks.
  EXPECT_EQ(RowOf(got.rows(0), 1), RowOf(Fetch(*shard, 1, 0, {7}), 0));
  // Never early.
  proto::FetchResponse refused;
  const absl::Status early = read_only({42}, true, &refused);
  EXPECT_EQ(early.code(), absl::StatusCode::kInvalidArgument) << early;
  EXPECT_NE(early.message().find("cannot be early"), std::string::npos) << early;
}

TEST_F(JobShardTest, CommitSumsGradientsInRankOrderAndAppliesTheOptimizerOnce) {
  auto shard = Make(Options(SparseOptimizerKind::kAdagrad, 2));
  const std::vector<float> before = RowOf(Fetch(*shard, 0, 1, {42}), 0);
  const std::vector<float> g0 = {0.1f, -0.2f, 0.3f, 1e-3f}, g1 = {1e7f, 0.5f, -0.25f, 3.0f};
  // Worker 1 pushes first; the sum must still be g0 + g1, in that order.
  ASSERT_TRUE(Push(*shard, 0, 1, 1, {42}, g1).ok());
  ASSERT_TRUE(Push(*shard, 0, 0, 1, {42}, g0).ok());
  EXPECT_FALSE(*Done(*shard, 0, 1, 2));
  EXPECT_TRUE(*Done(*shard, 0, 0, 2));

  std::vector<float> expect = before, sum(kDim);
  for (uint32_t d = 0; d < kDim; ++d) sum[d] = g0[d] + g1[d];
  math::SparseOptimizerConfig config;
  config.kind = SparseOptimizerKind::kAdagrad;
  config.learning_rate = 0.1f;
  math::ApplySparseUpdate(config, kDim, sum.data(), expect.data(), expect.data() + kDim);
  const proto::RowBlock after = Fetch(*shard, 1, 1, {42});
  EXPECT_EQ(RowOf(after, 0), expect);
  EXPECT_EQ(VersionOf(after, 0), 1u);
  EXPECT_NE(RowOf(after, 0), before);
}

TEST_F(JobShardTest, SameInputsInAnyArrivalOrderGiveTheSameBits) {
  auto a = Make(Options(SparseOptimizerKind::kAdam, 3));
  auto b = Make(Options(SparseOptimizerKind::kAdam, 3));
  std::vector<Key> keys = {1, 2, 3, 1000, 77};
  auto grads = [&](uint32_t w) {
    std::vector<float> g;
    for (size_t i = 0; i < keys.size() * kDim; ++i) g.push_back(0.37f * (w + 1) - 0.011f * i);
    return g;
  };
  for (uint64_t t = 0; t < 3; ++t) {
    for (uint32_t w : {0u, 1u, 2u}) ASSERT_TRUE(Push(*a, t, w, 0, keys, grads(w)).ok());
    for (uint32_t w : {2u, 0u, 1u}) ASSERT_TRUE(Push(*b, t, w, 0, keys, grads(w)).ok());
    for (uint32_t w : {0u, 1u, 2u}) ASSERT_TRUE(Done(*a, t, w, 3).ok());
    for (uint32_t w : {1u, 2u, 0u}) ASSERT_TRUE(Done(*b, t, w, 3).ok());
  }
  const proto::RowBlock ra = Fetch(*a, 3, 0, keys), rb = Fetch(*b, 3, 0, keys);
  EXPECT_EQ(ra.rows(), rb.rows());
  EXPECT_EQ(ra.versions(), rb.versions());
  EXPECT_EQ(VersionOf(ra, 0), 3u);
}

TEST_F(JobShardTest, FetchWaitsForThePreviousIterationToCommit) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {5}, {1, 1, 1, 1}).ok());
  ASSERT_TRUE(Done(*shard, 0, 0, 2).ok());
  // Iteration 0 is not committed (worker 1 has not reported): a fetch for
  // iteration 1 cannot be served and names the missing worker.
  absl::Status s = TryFetch(*shard, 1, 0, {5}, absl::Milliseconds(30));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("not reported: workers 1"), std::string::npos) << s;

  proto::RowBlock fetched;
  std::thread fetcher([&] { fetched = Fetch(*shard, 1, 0, {5}); });
  ASSERT_TRUE(*Done(*shard, 0, 1, 2));
  fetcher.join();
  EXPECT_EQ(VersionOf(fetched, 0), 1u);
}

TEST_F(JobShardTest, FetchCopiesStripesTheCommitWroteWithoutWaitingForTheRest) {
  JobShardOptions options = Options(SparseOptimizerKind::kSgd, 1);
  // Two keys of table 0 in different stripes.
  const ShardTable stripes(options.tables[0], options.stripes_per_table);
  const Key held_key = 1;
  Key free_key = 2;
  while (stripes.StripeOf(free_key) == stripes.StripeOf(held_key)) ++free_key;
  // The commit stops before writing held_key's stripe until released.
  absl::Notification holding, release;
  options.before_stripe_commit = [&](uint32_t table, uint32_t stripe) {
    if (table != 0 || stripe != stripes.StripeOf(held_key)) return;
    holding.Notify();
    release.WaitForNotification();
  };
  auto shard = Make(std::move(options));
  const std::vector<float> before = RowOf(Fetch(*shard, 0, 0, {held_key, free_key}), 1);
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {held_key, free_key}, {1, 1, 1, 1, 2, 2, 2, 2}).ok());
  std::thread reporter([&] { EXPECT_TRUE(*Done(*shard, 0, 0, 1)); });
  holding.WaitForNotification();

  // Served while the commit of iteration 0 is still under way.
  proto::FetchResponse response;
  absl::Status s = TryFetch(*shard, 1, 0, {free_key}, absl::Seconds(10), false, &response);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(VersionOf(response.rows(0), 0), 1u);
  EXPECT_FLOAT_EQ(RowOf(response.rows(0), 0)[0], before[0] - 0.1f * 2);

  // The held stripe's row is served only once the commit wrote it.
  std::atomic<bool> served{false};
  proto::RowBlock held;
  std::thread fetcher([&] {
    held = Fetch(*shard, 1, 0, {held_key});
    served = true;
  });
  EXPECT_FALSE(served.load());
  release.Notify();
  fetcher.join();
  reporter.join();
  EXPECT_EQ(VersionOf(held, 0), 1u);
  EXPECT_EQ(shard->next_iteration(), 1u);
}

// A report that completes the next iteration while a commit is still under
// way leaves that commit to the committing thread, which applies it after
// its own: the rows are those of the two commits in order (Adagrad's
// accumulator makes the order show), never the later one first.
TEST_F(JobShardTest, ALaterIterationCommitsAfterTheOneUnderWay) {
  JobShardOptions options = Options(SparseOptimizerKind::kAdagrad, 1);
  const ShardTable stripes(options.tables[0], options.stripes_per_table);
  const Key key = 1;
  absl::Notification holding, release;
  int calls = 0;  // the committing threads run one at a time
  options.before_stripe_commit = [&](uint32_t table, uint32_t stripe) {
    if (table != 0 || stripe != stripes.StripeOf(key) || calls++ > 0) return;
    holding.Notify();
    release.WaitForNotification();
  };
  auto shard = Make(std::move(options));
  auto reference = Make(Options(SparseOptimizerKind::kAdagrad, 1));
  for (JobShard* s : {shard.get(), reference.get()}) {
    Fetch(*s, 0, 0, {key});
    ASSERT_TRUE(Push(*s, 0, 0, 0, {key}, {1, 2, 3, 4}).ok());
  }
  std::thread reporter([&] { EXPECT_TRUE(*Done(*shard, 0, 0, 1)); });
  holding.WaitForNotification();
  // Iteration 0's commit holds before the key's stripe; iteration 1 is
  // pushed and reported meanwhile and waits for it.
  ASSERT_TRUE(Push(*shard, 1, 0, 0, {key}, {-5, 6, 0.5f, 8}).ok());
  EXPECT_FALSE(*Done(*shard, 1, 0, 1));
  release.Notify();
  reporter.join();
  EXPECT_EQ(shard->next_iteration(), 2u);

  ASSERT_TRUE(*Done(*reference, 0, 0, 1));
  ASSERT_TRUE(Push(*reference, 1, 0, 0, {key}, {-5, 6, 0.5f, 8}).ok());
  ASSERT_TRUE(*Done(*reference, 1, 0, 1));
  const proto::RowBlock got = Fetch(*shard, 2, 0, {key});
  const proto::RowBlock want = Fetch(*reference, 2, 0, {key});
  EXPECT_EQ(VersionOf(got, 0), 2u);
  EXPECT_EQ(RowOf(got, 0), RowOf(want, 0));
}

TEST_F(JobShardTest, EndingTheJobReleasesAWaitingFetchAndRefusesWhatFollows) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  ASSERT_TRUE(Done(*shard, 0, 0, 2).ok());
  // A fetch for iteration 1 waits for iteration 0, which worker 1 (gone
  // with its run) never reports.
  absl::Status waited;
  const absl::Time start = absl::Now();
  std::thread fetcher([&] { waited = TryFetch(*shard, 1, 0, {5}, absl::Seconds(60)); });
  proto::PsStatsResponse stats;
  for (int i = 0; i < 20000 && stats.fetches_waiting() == 0; ++i) {  // bounded: until it waits
    stats.Clear();
    shard->Stats(&stats);
    if (stats.fetches_waiting() == 0) absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(stats.fetches_waiting(), 1u);
  shard->End("ended for a test");
  fetcher.join();
  EXPECT_EQ(waited.code(), absl::StatusCode::kAborted) << waited;
  EXPECT_NE(waited.message().find("ended for a test"), std::string::npos) << waited;
  EXPECT_LT(absl::Now() - start, absl::Seconds(30)) << "the fetch waited for its deadline";
  // Whatever still holds the shard is refused, and nothing is stored.
  const absl::Status push = Push(*shard, 0, 1, 0, {6}, {1, 1, 1, 1});
  EXPECT_EQ(push.code(), absl::StatusCode::kAborted) << push;
  EXPECT_EQ(Done(*shard, 0, 1, 2).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(TryFetch(*shard, 0, 0, {7}, absl::Seconds(1)).code(), absl::StatusCode::kAborted);
  stats.Clear();
  shard->Stats(&stats);
  EXPECT_EQ(stats.tables(0).rows(), 0u);
  EXPECT_EQ(stats.iterations_committed(), 0u);
}

TEST_F(JobShardTest, EarlyFetchIsServedOnlyForRowsWithoutPendingChanges) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {5}, {1, 1, 1, 1}).ok());
  EXPECT_TRUE(TryFetch(*shard, 1, 0, {6, 7}, absl::ZeroDuration(), /*early=*/true).ok());
  EXPECT_EQ(TryFetch(*shard, 1, 0, {6, 5}, absl::Milliseconds(20), true).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(TryFetch(*shard, 1, 0, {6}, absl::Milliseconds(20), false).code(),
            absl::StatusCode::kDeadlineExceeded);
}

// Distance d: served once t - d - 1 committed, while t - d .. t - 1 are
// still open, unless one of them already buffers a change to a key.
TEST_F(JobShardTest, EarlyFetchAtADistanceWaitsOnlyForTheCommitBeforeIt) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {5}, {1, 1, 1, 1}).ok());
  ASSERT_TRUE(Done(*shard, 0, 0, 2).ok());
  ASSERT_TRUE(*Done(*shard, 0, 1, 2));                         // 0 committed: key 5 at version 1
  ASSERT_TRUE(Push(*shard, 1, 0, 0, {8}, {1, 1, 1, 1}).ok());  // 1 open, changing 8
  // For iteration 3 at distance 2 (1 and 2 change nothing fetched): at once.
  proto::FetchResponse at_once;
  ASSERT_TRUE(TryFetch(*shard, 3, 0, {6, 5}, absl::ZeroDuration(), 2, &at_once).ok());
  EXPECT_EQ(VersionOf(at_once.rows(0), 1), 1u);
  EXPECT_EQ(RowOf(at_once.rows(0), 1), RowOf(Fetch(*shard, 1, 0, {5}), 0));
  // Iteration 1 holds a change for key 8: it waits for 2's commit.
  EXPECT_EQ(TryFetch(*shard, 3, 0, {6, 8}, absl::Milliseconds(20), 2).code(),
            absl::StatusCode::kDeadlineExceeded);
  // Distance 1 needs 1 committed: it waits for that commit, not for 2's.
  EXPECT_EQ(TryFetch(*shard, 3, 0, {6}, absl::Milliseconds(20), 1).code(),
            absl::StatusCode::kDeadlineExceeded);
  absl::Status waited;
  std::thread fetcher([&] { waited = TryFetch(*shard, 3, 0, {6}, absl::Seconds(30), 1); });
  ASSERT_TRUE(Done(*shard, 1, 0, 2).ok());
  ASSERT_TRUE(*Done(*shard, 1, 1, 2));  // 1 committed; 2 never reported
  fetcher.join();
  EXPECT_TRUE(waited.ok()) << waited;
  // More than the protocol's distance is refused, and the shard serves on.
  const absl::Status far = TryFetch(*shard, 3, 0, {6}, absl::ZeroDuration(), 4);
  EXPECT_EQ(far.code(), absl::StatusCode::kInvalidArgument) << far;
  EXPECT_NE(far.message().find("early_distance 4, at most 3"), std::string::npos) << far;
  EXPECT_TRUE(TryFetch(*shard, 3, 0, {6}, absl::ZeroDuration(), 3).ok());
  // Marked early but for iteration 2, whose previous iteration committed:
  // served, not ahead.
  EXPECT_TRUE(TryFetch(*shard, 2, 0, {8}, absl::ZeroDuration(), 1).ok());
  // Counted among the fetches served (not the ones that timed out or were
  // refused): 4 marked early, 3 of them before iteration - 1 committed.
  proto::PsStatsResponse stats;
  shard->Stats(&stats);
  EXPECT_EQ(stats.early_requests(), 4u);
  EXPECT_EQ(stats.early_served_ahead(), 3u);
}

TEST_F(JobShardTest, WriteBackIsStoredAtCommitBeforeGradients) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  proto::WriteBackRequest w;
  w.set_job_id("job");
  w.set_iteration(0);
  w.set_worker_rank(1);
  auto* rb = w.add_rows();
  rb->set_table_id(0);
  rb->set_keys(Pack(std::vector<Key>{9, 10}));
  rb->set_row_floats(kDim);
  rb->set_rows(Pack(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  rb->set_versions(Pack(std::vector<uint64_t>{4, 2}, 0));
  ASSERT_TRUE(ServeWriteBack(*shard, w).ok());
  // Not visible before the commit: fetches see one committed state.
  EXPECT_NE(RowOf(Fetch(*shard, 0, 0, {9}), 0), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {10}, {10, 10, 10, 10}).ok());
  EXPECT_EQ(ServeWriteBack(*shard, w).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(Done(*shard, 0, 0, 2).ok());
  ASSERT_TRUE(Done(*shard, 0, 1, 2).ok());
  const proto::RowBlock r = Fetch(*shard, 1, 0, {9, 10});
  EXPECT_EQ(RowOf(r, 0), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(VersionOf(r, 0), 4u);
  EXPECT_EQ(RowOf(r, 1), (std::vector<float>{4, 5, 6, 7}));  // 5..8 - 0.1 * 10
  EXPECT_EQ(VersionOf(r, 1), 3u);
  // An older version than the stored one is a stale owner: refused.
  w.set_iteration(1);
  rb->set_versions(Pack(std::vector<uint64_t>{3, 3}, 0));
  absl::Status s = ServeWriteBack(*shard, w);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("stale write-back of key 9"), std::string::npos) << s;
}

TEST_F(JobShardTest, AWorkerMayFinishTheNextIterationBeforeTheCommit) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  ASSERT_TRUE(Done(*shard, 0, 0, 2).ok());
  ASSERT_TRUE(Push(*shard, 1, 0, 0, {3}, {1, 1, 1, 1}).ok());
  EXPECT_FALSE(*Done(*shard, 1, 0, 2));
  EXPECT_TRUE(*Done(*shard, 0, 1, 2));
  EXPECT_EQ(shard->next_iteration(), 1u);
  ASSERT_TRUE(Push(*shard, 1, 1, 0, {3}, {1, 1, 1, 1}).ok());
  EXPECT_TRUE(*Done(*shard, 1, 1, 2));
  EXPECT_EQ(shard->next_iteration(), 2u);
  EXPECT_EQ(VersionOf(Fetch(*shard, 2, 0, {3}), 0), 1u);
}

TEST_F(JobShardTest, RejectsRequestsThatDoNotFitAndKeepsServing) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 2));
  ASSERT_TRUE(Push(*shard, 0, 0, 0, {1}, {1, 1, 1, 1}).ok());
  auto expect = [](absl::Status s, absl::StatusCode code, const std::string& text) {
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(text), std::string::npos) << s;
  };
  expect(Push(*shard, 0, 1, 5, {1}, {1, 1, 1, 1}), absl::StatusCode::kInvalidArgument,
         "grads[0]: table 5 does not exist in job job (2 tables)");
  expect(Push(*shard, 0, 1, 0, {1}, {1, 1, 1}, 3), absl::StatusCode::kInvalidArgument,
         "grads[0]: dim 3 does not match table 0 (dim 4)");
  expect(Push(*shard, 0, 1, 0, {1, 2}, {1, 1, 1, 1}), absl::StatusCode::kInvalidArgument,
         "grads are 16 bytes, expected 32");
  expect(Push(*shard, 0, 0, 0, {2, 1}, std::vector<float>(8, 1)), absl::StatusCode::kAlreadyExists,
         "worker 0 already pushed key 1 of table 0");
  expect(Push(*shard, 0, 1, 0, {2}, {1, NAN, 1, 1}), absl::StatusCode::kInvalidArgument,
         "gradient of key 2 is not finite");
  expect(Push(*shard, 0, 7, 0, {2}, {1, 1, 1, 1}), absl::StatusCode::kInvalidArgument,
         "worker_rank 7 is outside the job's 2 workers");
  expect(Push(*shard, 9, 1, 0, {2}, {1, 1, 1, 1}), absl::StatusCode::kFailedPrecondition,
         "too far ahead");
  proto::PushGradientsRequest bad_bytes;
  bad_bytes.set_iteration(0);
  auto* g = bad_bytes.add_grads();
  g->set_table_id(0);
  g->set_keys("123");
  expect(ServePush(*shard, bad_bytes), absl::StatusCode::kInvalidArgument,
         "keys are 3 bytes, not a multiple of 8");
  ASSERT_TRUE(Done(*shard, 0, 0, 2).ok());
  expect(Done(*shard, 0, 0, 2).status(), absl::StatusCode::kAlreadyExists,
         "worker 0 already reported iteration 0");
  expect(Push(*shard, 0, 0, 0, {3}, {1, 1, 1, 1}), absl::StatusCode::kFailedPrecondition,
         "worker 0 already reported it done");
  expect(Done(*shard, 0, 1, 3).status(), absl::StatusCode::kInvalidArgument,
         "num_workers 3 does not match the job's 2");
  ASSERT_TRUE(Done(*shard, 0, 1, 2).ok());
  expect(Push(*shard, 0, 1, 0, {3}, {1, 1, 1, 1}), absl::StatusCode::kFailedPrecondition,
         "push for iteration 0: already committed");
  expect(TryFetch(*shard, 0, 0, {1}, absl::ZeroDuration()), absl::StatusCode::kFailedPrecondition,
         "iteration 0 is already committed");

  // Only the one valid push was applied: key 1 moved by -0.1, key 2 untouched.
  const proto::RowBlock r = Fetch(*shard, 1, 0, {1, 2});
  EXPECT_EQ(VersionOf(r, 0), 1u);
  EXPECT_EQ(VersionOf(r, 1), 0u);
  proto::PsStatsResponse stats;
  shard->Stats(&stats);
  EXPECT_EQ(stats.rejected_requests(), 13u);
  EXPECT_EQ(stats.iterations_committed(), 1u);
  EXPECT_EQ(stats.gradients_pushed(), 1u);
}

TEST_F(JobShardTest, RejectsKeysOfAnotherShard) {
  auto shard = Make(Options(SparseOptimizerKind::kSgd, 1, /*shard=*/0, /*shards=*/2));
  auto router = *KeyRouter::Create(2);
  Key foreign = 0;
  while (router.ShardOf(TableId(0), foreign).value() == 0) ++foreign;
  absl::Status s = TryFetch(*shard, 0, 0, {foreign}, absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("belongs to shard 1, not shard 0"), std::string::npos) << s;
}

TEST_F(JobShardTest, RowCapFailsTheRequestAndKeepsExistingRows) {
  JobShardOptions o = Options(SparseOptimizerKind::kSgd, 1);
  o.tables[0].max_rows = 2;
  auto shard = Make(o);
  const proto::RowBlock first = Fetch(*shard, 0, 0, {1, 2});
  absl::Status s = TryFetch(*shard, 0, 0, {1, 3}, absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("table 0 is full"), std::string::npos) << s;
  EXPECT_EQ(Fetch(*shard, 0, 0, {1, 2}).rows(), first.rows());
}

TEST_F(JobShardTest, CheckpointCapturesTheCommittedIterationAndRestores) {
  data::testing::TempDir dir;
  auto shard = Make(Options(SparseOptimizerKind::kRowwiseAdagrad, 1));
  std::vector<Key> keys;
  for (Key k = 0; k < 300; ++k) keys.push_back(k * 7919);
  ASSERT_TRUE(Push(*shard, 0, 0, 1, keys, std::vector<float>(keys.size() * kDim, 0.5f)).ok());
  ASSERT_TRUE(Done(*shard, 0, 0, 1).ok());
  proto::CheckpointRequest req;
  req.set_iteration(0);
  req.set_dir(dir.path());
  proto::CheckpointResponse resp;
  std::vector<uint64_t> progress;
  ASSERT_TRUE(ServeCheckpoint(*shard, req, absl::Now() + absl::Seconds(5), &resp,
                              [&](uint64_t written, uint64_t total) {
                                EXPECT_EQ(total, 300u);
                                progress.push_back(written);
                              })
                  .ok());
  // Reported after each table (the first holds none of these rows).
  EXPECT_EQ(progress, std::vector<uint64_t>({0, 300}));
  EXPECT_EQ(resp.rows(), 300u);
  EXPECT_EQ(resp.checksum().size(), 8u);
  EXPECT_EQ(*checkpoint::FileCrc32Hex(resp.path()), resp.checksum());
  const std::string file = resp.path();

  // Checkpointing an older iteration once a later one committed is refused.
  ASSERT_TRUE(Done(*shard, 1, 0, 1).ok());
  EXPECT_EQ(ServeCheckpoint(*shard, req, absl::Now(), &resp).code(),
            absl::StatusCode::kFailedPrecondition);

  JobShardOptions o = Options(SparseOptimizerKind::kRowwiseAdagrad, 1);
  o.first_iteration = 1;
  auto restored = Make(o);
  checkpoint::ShardFileHeader header;
  uint32_t table = 0;
  auto info = checkpoint::ReadShardFile(
      file, &header,
      [&](const checkpoint::ShardTableHeader& t) {
        table = t.table_id;
        return absl::OkStatus();
      },
      [&](Key key, uint64_t version, const float* row) {
        return restored->RestoreRow(TableId(table), key, version, row);
      });
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(header.iteration, 0u);
  // Iteration 1 changed nothing, so the live shard at 2 equals the restore at 1.
  const proto::RowBlock live = Fetch(*shard, 2, 1, keys);
  const proto::RowBlock back = Fetch(*restored, 1, 1, keys);
  EXPECT_EQ(back.rows(), live.rows());
  EXPECT_EQ(back.versions(), live.versions());
  EXPECT_EQ(VersionOf(back, 0), 1u);
}

}  // namespace
}  // namespace herald::ps
