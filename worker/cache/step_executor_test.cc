// The executor against the real PS code (in-process shards) and real Gloo:
// partitioned training with caching, ownership, pushes and write-backs
// equals the single-process reference; bad plans are rejected whole.
#include "worker/cache/step_executor.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "common/math/optimizer_spec.h"
#include "common/rng.h"
#include "common/testing/job_spec_testing.h"
#include "gtest/gtest.h"
#include "plan/step.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "ps_server/client/sharded_ps_client.h"
#include "worker/collectives/gloo_all_reducer.h"
#include "worker/collectives/kv_store.h"
#include "worker/device/cpu_device.h"
#include "worker/model/model_factory.h"
#include "worker/reference/reference_trainer.h"
#include "worker/testing/bsp_test_planner.h"
#include "worker/testing/in_process_training.h"

namespace herald::worker {
namespace {

constexpr uint32_t kNumDense = 2;

proto::JobSpec Spec(proto::ModelKind kind) {
  proto::JobSpec spec;
  spec.set_seed(7);
  spec.set_num_dense(kNumDense);
  spec.mutable_model()->set_kind(kind);
  spec.mutable_model()->add_top_mlp(8);
  spec.mutable_model()->add_bottom_mlp(4);
  herald::testing::UseAdamAndAdagrad(&spec, 0.01f, 0.05f);
  for (int t = 0; t < 3; ++t) {
    auto* table = spec.add_tables();
    table->set_dim(4);
    if (t == 1) {
      table->set_pooling(proto::POOLING_MEAN);
      table->mutable_optimizer()->set_kind(proto::OPTIMIZER_SGD);
      table->mutable_optimizer()->set_learning_rate(0.1f);
    }
  }
  return spec;
}

// Skewed keys over small key spaces, so rows are shared, owned, evicted and
// moved between workers; table 2 is multi-hot.
std::vector<data::KeyBatch> Batches(size_t iterations, uint32_t batch_size) {
  CounterRng rng(99, 1, 2);
  std::vector<data::KeyBatch> out;
  for (size_t it = 0; it < iterations; ++it) {
    data::KeyBatch b;
    b.num_samples = batch_size;
    b.tables.resize(3);
    for (uint32_t i = 0; i < batch_size; ++i) {
      b.labels.push_back(rng.NextFloat() < 0.3f ? 1.0f : 0.0f);
      for (uint32_t d = 0; d < kNumDense; ++d) b.dense.push_back(rng.NextFloat());
      for (int t = 0; t < 3; ++t) {
        const int hots = t == 2 ? 1 + static_cast<int>(rng.NextBelow(3)) : 1;
        for (int h = 0; h < hots; ++h) {
          const double u = rng.NextDouble();
          b.tables[t].keys.push_back(static_cast<Key>(40 * u * u * u) + 1000 * t);
        }
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

using Worker = testing::TestWorker;

using Outcome = testing::TrainingOutcome;

// Trains `batches` on `workers` workers against 2 in-process PS shards;
// the steps it ran, where `ran` is given.
Outcome TrainDistributed(proto::JobSpec spec, const std::vector<data::KeyBatch>& batches,
                         uint32_t workers, uint32_t slots, ps::InProcessPsCluster* cluster,
                         std::vector<std::vector<plan::Step>>* ran = nullptr,
                         bool commits_on_a_thread = false) {
  spec.set_name("job-w" + std::to_string(workers));
  testing::TestPlannerOptions planner;
  planner.job_id = spec.name();
  planner.num_workers = workers;
  planner.cache_slots = slots;
  planner.num_dense = kNumDense;
  auto steps = testing::PlanAll(batches, planner);
  EXPECT_TRUE(steps.ok()) << steps.status();
  if (!steps.ok()) return {};
  auto next = cluster->client().StartJob(spec.name(), spec, workers);
  EXPECT_TRUE(next.ok()) << next.status();
  auto out = testing::TrainSteps(spec, *steps, workers, slots, &cluster->client(), {},
                                 commits_on_a_thread);
  EXPECT_TRUE(out.ok()) << out.status();
  if (ran != nullptr) *ran = *steps;
  return out.ok() ? *std::move(out) : Outcome{};
}

class PartitionedTraining : public ::testing::TestWithParam<proto::ModelKind> {};

TEST_P(PartitionedTraining, EqualsTheReferenceForOneTwoAndThreeWorkers) {
  const proto::JobSpec spec = Spec(GetParam());
  const std::vector<data::KeyBatch> batches = Batches(/*iterations=*/6, /*batch_size=*/24);
  CpuDevice ref_device;
  auto reference = ReferenceTrainer::Create(spec, &ref_device);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<double> ref_losses;
  for (const data::KeyBatch& b : batches) {
    auto loss = (*reference)->Train(b);
    ASSERT_TRUE(loss.ok());
    ref_losses.push_back(*loss);
  }
  // Commits inline, and handed off to a thread the steps do not wait for
  // (as herald_worker runs them): the same model.
  for (const bool commits_on_a_thread : {false, true}) {
    for (uint32_t workers : {1u, 2u, 3u}) {
      ps::InProcessPsCluster cluster(2);
      // 48 slots: every worker's keys of an iteration fit, older rows get evicted.
      Outcome out =
          TrainDistributed(spec, batches, workers, 48, &cluster, nullptr, commits_on_a_thread);
      ASSERT_FALSE(out.dense.empty());
      const std::string tag = "workers=" + std::to_string(workers) +
                              (commits_on_a_thread ? ", commits on a thread" : ", commits inline");
      // Every row the job touched, read from the PS after the final flush.
      std::vector<ps::TableKeys> keys(3);
      for (uint32_t t = 0; t < 3; ++t) {
        keys[t].table = TableId(t);
        for (Key k = 0; k < 40; ++k) keys[t].keys.push_back(k + 1000 * t);
      }
      const absl::Status same =
          testing::CompareWithReference(out, **reference, ref_losses, &cluster.client(),
                                        "job-w" + std::to_string(workers), batches.size(), keys);
      EXPECT_TRUE(same.ok()) << tag << ": " << same;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PartitionedTraining,
                         ::testing::Values(proto::MODEL_WIDE_AND_DEEP, proto::MODEL_DLRM),
                         [](const auto& info) { return proto::ModelKind_Name(info.param); });

TEST(StepExecutor, SameRunTwiceGivesTheSameBitsAndCountsTraffic) {
  const proto::JobSpec spec = Spec(proto::MODEL_WIDE_AND_DEEP);
  const std::vector<data::KeyBatch> batches = Batches(4, 24);
  ps::InProcessPsCluster a(2), b(2);
  std::vector<std::vector<plan::Step>> steps;
  Outcome first = TrainDistributed(spec, batches, 2, 48, &a, &steps);
  Outcome second = TrainDistributed(spec, batches, 2, 48, &b);
  EXPECT_EQ(first.dense, second.dense);
  EXPECT_EQ(first.losses, second.losses);
  ASSERT_EQ(first.results.size(), 4u);
  ASSERT_EQ(steps.size(), 4u);
  // Worker 0's counters are its plans' lists: every fetched and pushed row,
  // and of the rows it evicts or writes back, the dirty ones.
  uint64_t written = 0;
  for (size_t t = 0; t < steps.size(); ++t) {
    uint64_t fetch = 0, push = 0, writeback = 0, evict = 0;
    for (const plan::TablePlan& table : steps[t][0].plan) {
      fetch += table.fetch.keys.size();
      push += table.push.keys.size();
      writeback += table.writeback.keys.size();
      evict += table.evict.keys.size();
    }
    const StepResult& r = first.results[t];
    SCOPED_TRACE(t);
    EXPECT_EQ(r.rows_fetched, fetch);
    EXPECT_EQ(r.rows_pushed, push);
    EXPECT_GE(r.rows_written_back, writeback);
    EXPECT_LE(r.rows_written_back, writeback + evict);
    EXPECT_EQ(r.num_samples, steps[t][0].num_samples);
    // 16 bytes of key and version per row at least, with its floats.
    EXPECT_GT(r.bytes_moved, 16 * (r.rows_fetched + r.rows_written_back) + 8 * r.rows_pushed);
    EXPECT_GT(r.times.compute_ms, 0.0);
    written += r.rows_written_back;
  }
  EXPECT_GT(first.results[0].rows_fetched, 0u);  // cold cache
  EXPECT_GT(written, 0u);                        // at least the final flush
}

// A PsClient passing every call on to another, recording each fetch as it
// is requested: its iteration, early distance, keys, and the step the test
// says runs then.
class RecordingPsClient final : public ps::PsClient {
 public:
  struct FetchRecord {
    uint64_t iteration = 0, running = 0;
    uint32_t early_distance = 0;
    std::vector<ps::TableKeys> keys;
  };
  explicit RecordingPsClient(ps::PsClient* inner) : inner_(inner) {}
  uint64_t running = 0;
  std::vector<FetchRecord> fetches;

  uint32_t num_shards() const override { return inner_->num_shards(); }
  absl::StatusOr<uint64_t> StartJob(const std::string& job_id, const proto::JobSpec& spec,
                                    uint32_t num_workers, const std::string& manifest,
                                    const std::string& restore_job_id) override {
    return inner_->StartJob(job_id, spec, num_workers, manifest, restore_job_id);
  }
  absl::Status EndJob(const std::string& job_id) override { return inner_->EndJob(job_id); }
  PendingCall<absl::StatusOr<std::vector<ps::TableRows>>> StartFetch(
      const std::string& job_id, Iteration iteration, const std::vector<ps::TableKeys>& keys,
      ps::FetchMode mode, ps::Launch launch) override {
    Record(iteration, keys, mode);
    return inner_->StartFetch(job_id, iteration, keys, mode, launch);
  }
  PendingCall<absl::Status> StartFetchInto(const std::string& job_id, Iteration iteration,
                                           const std::vector<ps::TableKeys>& keys,
                                           ps::FetchMode mode, ps::Launch launch,
                                           const ps::RowSink& sink) override {
    Record(iteration, keys, mode);
    return inner_->StartFetchInto(job_id, iteration, keys, mode, launch, sink);
  }
  PendingCall<absl::Status> StartPushGradients(const std::string& job_id, Iteration iteration,
                                               WorkerRank worker,
                                               const std::vector<ps::TableGrads>& grads,
                                               ps::Launch launch) override {
    return inner_->StartPushGradients(job_id, iteration, worker, grads, launch);
  }
  PendingCall<absl::Status> StartWriteBack(const std::string& job_id, Iteration iteration,
                                           WorkerRank worker,
                                           const std::vector<ps::TableRows>& rows,
                                           ps::Launch launch) override {
    return inner_->StartWriteBack(job_id, iteration, worker, rows, launch);
  }
  absl::StatusOr<bool> IterationDone(const std::string& job_id, Iteration iteration,
                                     WorkerRank worker, uint32_t num_workers,
                                     ps::PsDiskReads* disk_reads,
                                     const std::vector<ps::TableKeys>* expire) override {
    return inner_->IterationDone(job_id, iteration, worker, num_workers, disk_reads, expire);
  }
  absl::StatusOr<std::vector<proto::CheckpointShard>> CheckpointShards(
      const std::string& job_id, uint64_t iteration, const std::string& dir) override {
    return inner_->CheckpointShards(job_id, iteration, dir);
  }
  absl::StatusOr<std::vector<proto::PsStatsResponse>> Stats(const std::string& job_id) override {
    return inner_->Stats(job_id);
  }
  absl::Status LookAhead(const std::string& job_id, Iteration iteration,
                         const std::vector<ps::TableKeys>& keys) override {
    return inner_->LookAhead(job_id, iteration, keys);
  }

 private:
  void Record(Iteration iteration, const std::vector<ps::TableKeys>& keys, ps::FetchMode mode) {
    fetches.push_back({iteration.value(), running, mode.early_distance, keys});
  }
  ps::PsClient* inner_;
};

// Rows marked early at distance d are requested up to d steps ahead (at
// most prefetch_steps), each in a request whose distance no row of it
// exceeds, and never sooner; the model is the same bits for every setting.
TEST(StepExecutor, RowsMarkedEarlyAreRequestedAsFarAheadAsTheirDistanceAllows) {
  const proto::JobSpec spec = Spec(proto::MODEL_WIDE_AND_DEEP);
  const std::vector<data::KeyBatch> batches = Batches(10, 16);
  testing::TestPlannerOptions planner;
  planner.job_id = "ahead";
  planner.cache_slots = 24;  // rows are evicted, written back and fetched again
  planner.num_dense = kNumDense;
  auto steps = testing::PlanAll(batches, planner);
  ASSERT_TRUE(steps.ok()) << steps.status();
  std::vector<std::vector<float>> dense;
  for (uint32_t prefetch_steps : {1u, 2u, 3u}) {
    SCOPED_TRACE(prefetch_steps);
    ps::InProcessPsCluster cluster(2);
    RecordingPsClient ps(&cluster.client());
    ASSERT_TRUE(ps.StartJob("ahead", spec, 1, "", "").ok());
    InProcessKvStore store;
    testing::TestWorker worker;
    worker.prefetch_steps = prefetch_steps;
    ASSERT_TRUE(worker.Init(spec, 0, 1, planner.cache_slots, &ps, &store).ok());
    for (size_t t = 0; t < steps->size(); ++t) {
      std::vector<const plan::Step*> ahead;
      for (size_t k = t + 1; k < steps->size() && k <= t + kMaxEarlyDistance; ++k) {
        ahead.push_back(&(*steps)[k][0]);
      }
      ps.running = t;
      auto r = worker.executor->Run((*steps)[t][0], ahead);
      ASSERT_TRUE(r.ok()) << r.status();
    }
    dense.push_back(worker.model->params().values().ToHost());
    uint64_t furthest = 0, early_rows = 0;
    for (const RecordingPsClient::FetchRecord& f : ps.fetches) {
      const uint64_t steps_ahead = f.iteration - f.running;
      ASSERT_GE(f.iteration, f.running);
      EXPECT_LE(steps_ahead, prefetch_steps);
      EXPECT_GE(f.early_distance, steps_ahead) << "requested before its distance allows";
      furthest = std::max(furthest, steps_ahead);
      // Every row of the request is marked at least the request's distance.
      const plan::Step& step = (*steps)[f.iteration][0];
      for (const ps::TableKeys& table : f.keys) {
        const plan::FetchRows& planned = step.plan[table.table.value()].fetch;
        for (Key key : table.keys) {
          const size_t i =
              std::find(planned.keys.begin(), planned.keys.end(), key) - planned.keys.begin();
          ASSERT_LT(i, planned.keys.size());
          EXPECT_GE(planned.early[i], f.early_distance) << "key " << key;
          if (f.early_distance > 0) ++early_rows;
        }
      }
    }
    EXPECT_EQ(furthest, prefetch_steps) << "some rows went as far ahead as allowed";
    EXPECT_GT(early_rows, 0u);
  }
  EXPECT_EQ(dense[0], dense[1]);
  EXPECT_EQ(dense[0], dense[2]);
}

// ---------------------------------------------------------------- bad plans

class BadPlans : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = Spec(proto::MODEL_WIDE_AND_DEEP);
    spec_.set_name("bad");
    ASSERT_TRUE(cluster_.client().StartJob("bad", spec_, 1).ok());
    ASSERT_TRUE(worker_.Init(spec_, 0, 1, 8, &cluster_.client(), nullptr).ok());
    // Iteration 0: fetch keys 1, 2 of every table into slots 0, 1; one
    // sample per key, both owned.
    for (int t = 0; t < 3; ++t) {
      good_.plan.resize(3);
      good_.samples.resize(3);
      plan::TablePlan& p = good_.plan[t];
      p.fetch.keys = {Key(1), Key(2)};
      p.fetch.slots = {0, 1};
      p.owned_slots = {0, 1};
      good_.samples[t].offsets = {0, 1, 2};
      good_.samples[t].slots = {0, 1};
    }
    good_.job_id = "bad";
    good_.num_samples = 2;
    good_.global_batch_size = 2;
    good_.labels = {1, 0};
    good_.dense = {0.5f, 0.25f, 1, 0};
  }

  void ExpectRejected(const plan::Step& step, const std::string& message) {
    const std::vector<float> dense = worker_.model->params().values().ToHost();
    auto r = worker_.executor->Run(step);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status();
    // Nothing ran: the model and the cache are as before.
    EXPECT_EQ(worker_.model->params().values().ToHost(), dense);
  }

  proto::JobSpec spec_;
  ps::InProcessPsCluster cluster_{1};
  Worker worker_;
  plan::Step good_;
};

TEST_F(BadPlans, AreRejectedWholeAndTheGoodPlanStillRuns) {
  plan::Step s = good_;
  s.plan[1].fetch.slots[1] = 8;
  ExpectRejected(s, "plan for table 1: fetch.slots[1]: slot 8 out of range (8 slots)");
  s = good_;
  s.plan[0].fetch.slots = {3, 3};
  ExpectRejected(s, "fetch.slots[1]: slot 3 used twice");
  s = good_;
  s.plan[2].owned_slots = {0};
  ExpectRejected(s, "samples of table 2: slots[1] = 1 is neither owned, shared nor remote");
  s = good_;
  s.plan[0].writeback.slots = {0};
  s.plan[0].writeback.keys = {Key(2)};
  ExpectRejected(s, "writeback.slots[0]: slot 0 does not hold key 2");
  s = good_;
  s.plan[0].evict.slots = {5};
  s.plan[0].evict.keys = {Key(9)};
  ExpectRejected(s, "evict.slots[0]: slot 5 does not hold key 9 (empty)");
  // Every trained slot is used by a sample, and every sample's slot is trained.
  s = good_;
  s.plan[1].fetch.keys.push_back(Key(3));
  s.plan[1].fetch.slots.push_back(2);
  s.plan[1].owned_slots.push_back(2);
  ExpectRejected(s, "plan for table 1: owned_slots[2]: slot 2 is used by no sample");
  s = good_;
  s.samples[2].slots[0] = 9;
  ExpectRejected(s, "samples of table 2: slots[0] = 9 is out of range");
  // A row initialised here lands like a fetched one.
  s = good_;
  s.plan[0].init.keys = {Key(1)};
  s.plan[0].init.slots = {4};
  ExpectRejected(s, "init.keys[0]: key 1 brought in twice (fetched, received or initialised)");
  // Served rows: gradients are gathered only into owned slots holding the
  // key, and sent only to another worker of the job.
  s = good_;
  s.plan[0].gather.slots = {5};
  s.plan[0].gather.keys = {Key(1)};
  s.plan[0].gather.peers = {1};
  ExpectRejected(s, "gather.slots[0]: slot 5 is not owned this step");
  s.plan[0].gather.slots = {0};
  s.plan[0].gather.keys = {Key(2)};
  ExpectRejected(s, "gather.keys[0]: slot 0 holds key 1, not 2");
  s = good_;
  s.plan[0].owned_slots = {0};
  s.plan[0].remote.slots = {1};
  s.plan[0].remote.keys = {Key(2)};
  s.plan[0].remote.peers = {3};
  ExpectRejected(s, "table 0: gradient to the owner worker 3 (this is 0 of 1)");
  s.plan[0].owned_slots = {0, 1};
  ExpectRejected(s, "remote.slots[0]: slot 1 listed twice");
  for (int t = 0; t < 3; ++t) EXPECT_EQ(worker_.cache->Resident(t), 0u);

  auto r = worker_.executor->Run(good_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rows_fetched, 6u);
  // Iteration 1: key 1 is resident (and dirty) in slot 0.
  plan::Step next = good_;
  next.iteration = 1;
  next.plan[0].fetch.keys = {Key(1)};
  next.plan[0].fetch.slots = {4};
  ExpectRejected(next, "fetch.keys[0]: key 1 is already resident in slot 0");
  next = good_;
  next.iteration = 1;
  for (auto& p : next.plan) p.fetch.keys.clear(), p.fetch.slots.clear();
  next.plan[0].fetch.keys = {Key(1)};
  next.plan[0].fetch.slots = {0};
  ExpectRejected(next,
                 "slot 0 holds the newest (dirty) copy of key 1; overwriting it would lose it");
  next.plan[0].fetch.keys = {};
  next.plan[0].fetch.slots = {};
  next.plan[0].evict.slots = {0};
  next.plan[0].evict.keys = {Key(1)};
  next.plan[0].fetch.keys = {Key(1)};
  next.plan[0].fetch.slots = {2};
  ExpectRejected(next, "key 1 is evicted dirty by this plan");
  // Hand-offs: a received row may not land on a dirty copy, a sent slot
  // must hold its key dirty, and without an exchanger nothing is handed off.
  next = good_;
  next.iteration = 1;
  for (auto& p : next.plan) p.fetch.keys.clear(), p.fetch.slots.clear();
  next.plan[0].receive.slots = {0};
  next.plan[0].receive.keys = {Key(1)};
  ExpectRejected(next, "receive.slots[0]: slot 0 holds the newest (dirty) copy of key 1");
  next.plan[0].receive.slots = {};
  next.plan[0].receive.keys = {};
  next.plan[0].send.slots = {0};
  next.plan[0].send.keys = {Key(7)};
  next.plan[0].send.peers = {1};
  ExpectRejected(next, "send.slots[0]: slot 0 does not hold key 7 dirty");
}

// The next step is checked at the end of the one before (while a GPU
// finishes it); a bad next step fails only when it runs, and a step checked
// ahead is checked again if the cache changed since.
TEST_F(BadPlans, AStepCheckedAheadIsCheckedAgainIfTheCacheChanged) {
  plan::Step next = good_;
  next.iteration = 1;
  for (auto& p : next.plan) p.fetch.keys.clear(), p.fetch.slots.clear();
  plan::Step bad_next = next;
  bad_next.plan[1].owned_slots = {0, 1, 7};
  auto r = worker_.executor->Run(good_, &bad_next);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(bad_next.checked_at, 0u);
  ExpectRejected(bad_next, "plan for table 1: owned_slots[2]: slot 7 is empty");

  plan::Step later = next;
  later.iteration = 2;
  r = worker_.executor->Run(next, &later);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(later.checked_at, 0u);  // checked ahead
  worker_.cache->Evict(0, 0);       // and then the cache changes
  ExpectRejected(later, "plan for table 0: owned_slots[0]: slot 0 is empty");
}

// A check ahead counts only for the executor that made it: another one
// (whose cache holds nothing) checks the same step object itself.
TEST_F(BadPlans, AStepCheckedAheadByOneExecutorIsCheckedByAnother) {
  plan::Step next = good_;
  next.iteration = 1;
  for (auto& p : next.plan) p.fetch.keys.clear(), p.fetch.slots.clear();
  auto r = worker_.executor->Run(good_, &next);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(next.checked_at, 0u);
  Worker other;
  ASSERT_TRUE(other.Init(spec_, 0, 1, 8, &cluster_.client(), nullptr).ok());
  auto refused = other.executor->Run(next);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("slot 0 is empty"), std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace herald::worker
