// Real processes on 127.0.0.1: herald_scheduler, two herald_ps shards and
// two herald_worker, all sharing a cluster token. Jobs are submitted over
// the JobService API; the trained embedding rows on the PS must equal the
// single-process reference trainer's on the same batches.

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/scheduler.grpc.pb.h"
#include "ps_server/client/sharded_ps_client.h"
#include "scheduler/data/batch_stream.h"
#include "scheduler/data/data_schema_spec.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/process.h"
#include "tests/harness/small_job.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"
#include "worker/testing/in_process_training.h"

namespace herald {
namespace {

proto::JobSpec TrainingSpec(const std::string& name, proto::PolicyKind policy,
                            uint64_t iterations) {
  return testing::SmallWideAndDeepJob(name, policy, iterations);
}

class TrainingCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    // A state directory: jobs over the same data share their cache sizing.
    testing::ClusterFlags flags;
    flags.scheduler = {"--state_dir=" + testing::MakeTestDir("training_state")};
    auto cluster = testing::LocalCluster::Start("cluster", 2, 2, nullptr, {}, flags);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    dir_ = cluster_->dir();
    address_ = cluster_->address();
    token_file_ = cluster_->token_file();
    jobs_ = cluster_->jobs();
  }

  void Authorize(grpc::ClientContext* context) { cluster_->Authorize(context); }
  std::string Submit(const proto::JobSpec& spec) {
    absl::StatusOr<std::string> job = cluster_->Submit(spec);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : "";
  }
  proto::JobStatus Watch(const std::string& job_id,
                         const std::function<bool(const proto::JobStatus&)>& until = nullptr) {
    return cluster_->Watch(job_id, until);
  }
  std::string Logs() { return cluster_->Logs(); }
  std::vector<std::string> PsAddresses() { return cluster_->PsAddresses(); }

  // Trains the reference on the job's batches and compares every trained row
  // the PS holds for `job_id`, and the final loss. `drop_weights`: the
  // reference trains as if the data had no per-id weights (then it must
  // differ from a job on weighted data).
  // `heraldctl evaluate --json` of the job's export (written to `name`),
  // scored in batches of 64.
  std::string EvaluateExport(const std::string& job, const std::string& name) {
    const std::string exported = dir_ + "/" + name;
    EXPECT_TRUE(cluster_->Export(job, exported).ok());
    testing::CommandResult evaluated =
        testing::RunHeraldctl(dir_, {"evaluate", "--model=" + exported, "--batch=64", "--json"});
    EXPECT_EQ(evaluated.code, 0) << evaluated.output;
    return evaluated.output;
  }
  // `heraldctl status JOB --history --csv`.
  std::string HistoryCsv(const std::string& job) {
    testing::CommandResult status =
        testing::RunHeraldctl(dir_, {"status", job, "--history", "--csv", "--scheduler=" + address_,
                                     "--token-file=" + token_file_});
    EXPECT_EQ(status.code, 0) << status.output;
    return status.output;
  }

  void ExpectEqualsReference(const proto::JobSpec& spec, const std::string& job_id,
                             double final_loss, bool drop_weights = false) {
    worker::CpuDevice device;
    auto reference = worker::ReferenceTrainer::Create(spec, &device);
    ASSERT_TRUE(reference.ok()) << reference.status();
    auto stream = scheduler::BatchStream::Open(
        scheduler::StreamOptionsFromSpec(spec, scheduler::Split::kTrain));
    ASSERT_TRUE(stream.ok()) << stream.status();
    std::vector<absl::flat_hash_set<Key>> keys(spec.tables_size());
    data::KeyBatch batch;
    double loss = 0;
    uint64_t iterations = 0;
    for (;;) {
      auto more = (*stream)->Next(&batch);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      if (drop_weights) {
        for (data::KeyBatch::Table& t : batch.tables) t.weights.clear();
      }
      auto l = (*reference)->Train(batch);
      ASSERT_TRUE(l.ok()) << l.status();
      loss = *l / spec.global_batch_size();
      ++iterations;
      for (size_t t = 0; t < keys.size(); ++t) {
        keys[t].insert(batch.tables[t].keys.begin(), batch.tables[t].keys.end());
      }
    }
    ASSERT_EQ(iterations, spec.iterations());
    if (drop_weights) {
      EXPECT_GT(std::abs(final_loss - loss), 1e-4 * loss) << "the weights changed nothing";
      return;
    }
    EXPECT_NEAR(final_loss, loss, 1e-4 * loss);
    std::vector<ps::TableKeys> table_keys;
    for (size_t t = 0; t < keys.size(); ++t) {
      table_keys.push_back({static_cast<TableId>(t), {keys[t].begin(), keys[t].end()}});
    }
    auto ps = ps::MakeGrpcPsClient(PsAddresses());
    ASSERT_TRUE(ps.ok());
    EXPECT_TRUE(worker::testing::CompareRowsWithReference(**reference, ps->get(), job_id,
                                                          iterations, table_keys)
                    .ok());
  }

  // Holds out a tenth of `spec`'s samples, scored every 5 iterations in
  // batches of 64, and runs it to success.
  proto::JobStatus RunEvaluated(proto::JobSpec* spec) {
    spec->mutable_data()->set_eval_fraction(0.1);
    spec->mutable_eval()->set_every_iterations(5);
    spec->mutable_eval()->set_batch_size(64);
    const proto::JobStatus done = Watch(Submit(*spec));
    EXPECT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << "\n" << Logs();
    return done;
  }

  std::unique_ptr<testing::LocalCluster> cluster_;
  std::string dir_, address_, token_file_;
  proto::JobService::Stub* jobs_ = nullptr;
};

TEST_F(TrainingCluster, JobsUnderHeraldThenVanillaEqualTheReference) {
  for (proto::PolicyKind policy : {proto::POLICY_HERALD, proto::POLICY_VANILLA}) {
    SCOPED_TRACE(proto::PolicyKind_Name(policy));
    const proto::JobSpec spec = TrainingSpec(proto::PolicyKind_Name(policy), policy, 12);
    const std::string job = Submit(spec);
    const proto::JobStatus done = Watch(job);
    ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << "\n" << Logs();
    EXPECT_EQ(done.progress().iteration(), 12u);
    EXPECT_EQ(done.progress().iterations_planned(), 12u);
    EXPECT_GT(done.progress().rows_fetched(), 0u);
    EXPECT_GT(done.progress().scheduler_plan_ms(), 0.0);
    EXPECT_GT(done.progress().scheduler_encode_ms(), 0.0);
    // The second job reads the same data the same way (the policy does not
    // change the sizing pass): it takes the first one's sizing, and still
    // trains the reference model.
    EXPECT_EQ(done.progress().cache_sizing_loaded(), policy == proto::POLICY_VANILLA);
    ExpectEqualsReference(spec, job, done.progress().loss());
  }
}

// Numbers in [0, n) from a 64-bit LCG: test data that is the same on every
// machine.
class TestNumbers {
 public:
  explicit TestNumbers(uint64_t seed) : state_(seed) {}
  uint64_t operator()(uint64_t n) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return (state_ >> 33) % n;
  }

 private:
  uint64_t state_;
};

// A CSV file with a header in its own column order: click and rating
// labels, a float price (affine) and age (missing 30), string user ids,
// decimal item ids, the items last viewed (multi-hot, sharing the item
// table), multi-hot hex genres with per-id weights (some without: 1) and
// a column to ignore.
std::string WriteShopCsv(const std::string& dir, int rows) {
  const std::string path = dir + "/shop.csv";
  std::ofstream out(path);
  out << "note,genres,user,age,item,viewed,price,rating,click\n";
  TestNumbers next(7);
  for (int r = 0; r < rows; ++r) {
    const uint64_t user = next(40), item = next(25);
    out << "\"free, text\"," << std::hex << (1 + next(6)) << std::dec;
    if (next(3) != 0) out << ":" << 0.25 * (1 + next(8));
    out << "|" << std::hex << (7 + next(5)) << std::dec << ":" << 0.5 * next(5) << ",user-" << user
        << ",";
    if (next(4) != 0) out << 18 + next(50);
    out << "," << 1000 + item << ",";
    const uint64_t views = next(3);
    for (uint64_t v = 0; v < views; ++v) out << (v ? "|" : "") << 1000 + (item + 3 * v + 1) % 25;
    out << "," << (item % 7) * 1.25 << "," << next(5) << "," << ((user + item) % 3 == 0 ? 1 : 0)
        << "\n";
  }
  return path;
}

proto::JobSpec ShopSpec(const std::string& csv) {
  proto::JobSpec spec = TrainingSpec("shop", proto::POLICY_HERALD, 10);
  spec.set_num_dense(0);
  spec.clear_tables();
  for (const char* name : {"item", "genres", "user"}) {  // not in column order
    auto* table = spec.add_tables();
    table->set_name(name);
    table->set_dim(4);
  }
  proto::DataSpec* data = spec.mutable_data();
  data->set_format(proto::DATA_FORMAT_CSV);
  data->add_paths(csv);
  data->set_on_malformed(proto::MALFORMED_FAIL);
  const char* schema = R"pb(
    columns { name: "click" role: COLUMN_LABEL }
    columns { name: "rating" role: COLUMN_LABEL label: LABEL_REGRESSION }
    columns { name: "price" role: COLUMN_DENSE transform: TRANSFORM_AFFINE scale: 0.5 shift: -1 }
    columns { name: "age" role: COLUMN_DENSE missing: 30 transform: TRANSFORM_LOG1P }
    columns { name: "user" role: COLUMN_SPARSE ids: IDS_STRING }
    columns { name: "item" role: COLUMN_SPARSE ids: IDS_DECIMAL }
    columns {
      name: "viewed"
      role: COLUMN_SPARSE
      ids: IDS_DECIMAL
      multi_hot_separator: "|"
      table: "item"
      pooling: POOLING_MEAN
    }
    columns { name: "genres" role: COLUMN_SPARSE multi_hot_separator: "|" weight_separator: ":" }
    columns { name: "note" role: COLUMN_IGNORE }
  )pb";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(schema, data->mutable_schema()));
  return spec;
}

TEST_F(TrainingCluster, ACsvWithAHeaderAndStringIdsTrainsTheReferenceModel) {
  const proto::JobSpec spec = ShopSpec(WriteShopCsv(dir_, 1200));
  const std::string job = Submit(spec);
  const proto::JobStatus done = Watch(job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << "\n" << Logs();
  EXPECT_EQ(done.progress().iteration(), 10u);
  EXPECT_EQ(done.progress().malformed_lines(), 0u);
  // The reference reads the spec as the scheduler resolved it: tables in
  // the schema's order, num_dense from its dense columns.
  proto::JobSpec resolved = spec;
  ASSERT_TRUE(scheduler::ResolveDataSchema(&resolved).ok());
  EXPECT_EQ(resolved.num_dense(), 2u);
  EXPECT_EQ(resolved.tables(0).name(), "user");
  EXPECT_EQ(resolved.tables(2).name(), "genres");
  ExpectEqualsReference(resolved, job, done.progress().loss());
  // The genres' weights reach the batches and count: without them the
  // reference ends elsewhere.
  auto stream = scheduler::BatchStream::Open(
      scheduler::StreamOptionsFromSpec(resolved, scheduler::Split::kTrain));
  ASSERT_TRUE(stream.ok()) << stream.status();
  data::KeyBatch first;
  ASSERT_TRUE(*(*stream)->Next(&first));
  const std::vector<float>& weights = first.tables[2].weights;
  ASSERT_EQ(weights.size(), first.tables[2].keys.size());
  EXPECT_NE(std::count(weights.begin(), weights.end(), 1.0f),
            static_cast<std::ptrdiff_t>(weights.size()));
  EXPECT_EQ(first.tables[1].features, 2u);  // item and viewed share the item table
  ExpectEqualsReference(resolved, job, done.progress().loss(), /*drop_weights=*/true);

  // A spec that names num_dense beside the schema, or a table no column
  // uses, is refused at submit naming the fields.
  proto::JobSpec both = spec;
  both.set_num_dense(2);
  absl::StatusOr<std::string> refused = cluster_->Submit(both);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "num_dense and data.schema"))
      << refused.status();
  proto::JobSpec unused = spec;
  unused.add_tables()->set_name("orphan");
  unused.mutable_tables(3)->set_dim(4);
  refused = cluster_->Submit(unused);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "'orphan' is looked up by no SPARSE"))
      << refused.status();
}

// Id admission (tables[].admission): the job trains the reference model
// of the filtered stream, and its evaluations score the held-out samples
// with only the keys admitted by their iteration, as heraldctl evaluate
// scores them from the export (whose rows are the admitted keys').
TEST_F(TrainingCluster, IdAdmissionTrainsTheReferenceAndEvaluatesAdmittedKeysOnly) {
  proto::JobSpec spec = TrainingSpec("admission", proto::POLICY_HERALD, 12);
  for (proto::TableSpec& t : *spec.mutable_tables()) t.mutable_admission()->set_min_count(3);
  const proto::JobStatus done = RunEvaluated(&spec);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED);
  const std::string& job = done.job_id();
  ExpectEqualsReference(spec, job, done.progress().loss());
  // The progress counts what admission did, as a stream read here does.
  auto stream = scheduler::BatchStream::Open(
      scheduler::StreamOptionsFromSpec(spec, scheduler::Split::kTrain));
  ASSERT_TRUE(stream.ok());
  data::KeyBatch batch;
  while (*(*stream)->Next(&batch)) {
  }
  const scheduler::KeyLifecycle::Counts counts = (*stream)->key_lifecycle()->counts();
  EXPECT_GT(counts.admitted, 0u);
  EXPECT_GT(counts.dropped, 0u);
  EXPECT_EQ(done.progress().keys_admitted(), counts.admitted);
  EXPECT_EQ(done.progress().keys_waiting(), counts.waiting);
  EXPECT_EQ(done.progress().lookups_dropped(), counts.dropped);
  ASSERT_GT(done.progress().eval_auc(), 0);
  const std::string evaluated = EvaluateExport(job, "admission-export");
  EXPECT_EQ(testing::JsonNumber(evaluated, "auc"), done.progress().eval_auc()) << evaluated;
  EXPECT_EQ(testing::JsonNumber(evaluated, "logloss"), done.progress().eval_logloss()) << evaluated;
}

// The rating (a regression label) first: the model regresses it with the
// squared error, and evaluations report its RMSE, during the job as
// heraldctl evaluate does from the export.
TEST_F(TrainingCluster, ARegressionLabelTrainsBySquaredErrorAndIsJudgedByRmse) {
  proto::JobSpec spec = ShopSpec(WriteShopCsv(dir_, 1200));
  spec.set_name("rating");
  spec.mutable_data()->mutable_schema()->mutable_columns()->SwapElements(0, 1);
  const proto::JobStatus done = RunEvaluated(&spec);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED);
  const std::string& job = done.job_id();
  proto::JobSpec resolved = spec;
  ASSERT_TRUE(scheduler::ResolveDataSchema(&resolved).ok());
  ExpectEqualsReference(resolved, job, done.progress().loss());
  ASSERT_EQ(done.progress().eval_labels_size(), 1);
  const proto::LabelMetrics& rating = done.progress().eval_labels(0);
  EXPECT_EQ(rating.label(), "rating");
  EXPECT_TRUE(rating.regression());
  EXPECT_GT(rating.rmse(), 0);
  EXPECT_EQ(done.progress().eval_auc(), 0);  // no binary label is predicted
  // The loss is the mean squared error: the ratings (0..4) are far from
  // what a logistic loss would give, and the RMSE is its held-out root.
  EXPECT_LT(rating.rmse(), 3.0);
  const std::string evaluated = EvaluateExport(job, "rating-export");
  EXPECT_EQ(testing::JsonNumber(evaluated, "rmse"), rating.rmse()) << evaluated;
  EXPECT_TRUE(absl::StrContains(evaluated, "\"label\":\"rating\",\"regression\":true"))
      << evaluated;
  // watch and the history name the figure.
  const std::string history = HistoryCsv(job);
  EXPECT_TRUE(absl::StrContains(history, "eval_rmse[rating]")) << history;
}

// A model graph of two heads over a shared DCN-v2 bottom (multi-task): a
// click head (cross-entropy) and a rating head (squared error, weight 0.5),
// with learning-rate schedules (the dense optimizer warms up then decays by
// a cosine, with weight decay; the tables warm up then step down: the
// PS's commits and the workers' owned rows both follow them). The job
// trains the reference model; each evaluation judges each head
// against its own label (AUC and log loss, RMSE), as heraldctl evaluate
// does from the export, and the history names both.
TEST_F(TrainingCluster, TwoHeadsTrainTheReferenceModelAndAreEachJudged) {
  proto::JobSpec spec = ShopSpec(WriteShopCsv(dir_, 1200));
  spec.set_name("two-heads");
  spec.mutable_data()->set_eval_fraction(0.1);
  spec.mutable_eval()->set_every_iterations(5);
  spec.mutable_eval()->set_batch_size(64);
  spec.mutable_model()->Clear();
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(R"pb(
                                                      graph {
                                                        nodes {
                                                          name: "dense"
                                                          dense {}
                                                        }
                                                        nodes {
                                                          name: "bags"
                                                          embeddings {}
                                                        }
                                                        nodes {
                                                          name: "x"
                                                          inputs: [ "dense", "bags" ]
                                                          concat {}
                                                        }
                                                        nodes {
                                                          name: "shared"
                                                          inputs: "x"
                                                          cross { kind: CROSS_V2 layers: 2 rank: 4 }
                                                        }
                                                        nodes {
                                                          name: "bottom"
                                                          inputs: "shared"
                                                          mlp {
                                                            widths: [ 8 ]
                                                            activate_last: true
                                                          }
                                                        }
                                                        nodes {
                                                          name: "click_out"
                                                          inputs: "bottom"
                                                          mlp { widths: [ 1 ] }
                                                        }
                                                        nodes {
                                                          name: "rating_out"
                                                          inputs: "bottom"
                                                          mlp { widths: [ 4, 1 ] }
                                                        }
                                                        nodes {
                                                          name: "click"
                                                          inputs: "click_out"
                                                          head { label: "click" }
                                                        }
                                                        nodes {
                                                          name: "rating"
                                                          inputs: "rating_out"
                                                          head { label: "rating" loss_weight: 0.5 }
                                                        }
                                                      }
                                                    )pb",
                                                    spec.mutable_model()));
  ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(
      R"pb(
        dense_optimizer {
          weight_decay: 0.01
          schedule { warmup_iterations: 3 decay: DECAY_COSINE decay_iterations: 5 min_factor: 0.2 }
        }
        sparse_optimizer {
          schedule { warmup_iterations: 2 decay: DECAY_STEP step_every: 3 step_factor: 0.5 }
        }
      )pb",
      &spec));
  const std::string job = Submit(spec);
  const proto::JobStatus done = Watch(job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << "\n" << Logs();
  proto::JobSpec resolved = spec;
  ASSERT_TRUE(scheduler::ResolveDataSchema(&resolved).ok());
  ExpectEqualsReference(resolved, job, done.progress().loss());

  ASSERT_EQ(done.progress().eval_labels_size(), 2);
  const proto::LabelMetrics& click = done.progress().eval_labels(0);
  const proto::LabelMetrics& rating = done.progress().eval_labels(1);
  EXPECT_EQ(click.label(), "click");
  EXPECT_FALSE(click.regression());
  EXPECT_GT(click.auc(), 0);
  EXPECT_EQ(done.progress().eval_auc(), click.auc());
  EXPECT_EQ(rating.label(), "rating");
  EXPECT_TRUE(rating.regression());
  EXPECT_GT(rating.rmse(), 0);

  const std::string evaluated = EvaluateExport(job, "two-heads-export");
  EXPECT_EQ(testing::JsonNumber(evaluated, "auc"), click.auc()) << evaluated;
  EXPECT_EQ(testing::JsonNumber(evaluated, "rmse"), rating.rmse()) << evaluated;
  EXPECT_TRUE(absl::StrContains(evaluated, "\"label\":\"rating\",\"regression\":true"))
      << evaluated;
  const std::string history = HistoryCsv(job);
  EXPECT_TRUE(absl::StrContains(history, "eval_rmse[rating]")) << history;
  EXPECT_TRUE(absl::StrContains(history, "eval_auc")) << history;

  // Under vanilla every row update is the PS's commit (herald's owners and
  // servers apply most of them on the workers).
  spec.mutable_scheduling()->set_policy(proto::POLICY_VANILLA);
  const std::string vanilla = Submit(spec);
  const proto::JobStatus vanilla_done = Watch(vanilla);
  ASSERT_EQ(vanilla_done.state(), proto::JOB_SUCCEEDED) << vanilla_done.reason() << Logs();
  ExpectEqualsReference(resolved, vanilla, vanilla_done.progress().loss());
}

// Two features looking up one table: the clicked item and the items last
// viewed (multi-hot, sqrt-n-pooled while the table sums), beside a string
// user id; the rows of `item` are shared by both features.
TEST_F(TrainingCluster, FeaturesSharingATableTrainTheReferenceModel) {
  const std::string path = dir_ + "/views.csv";
  {
    std::ofstream out(path);
    out << "user,item,viewed,price,click\n";
    TestNumbers next(11);
    for (int r = 0; r < 1000; ++r) {
      const uint64_t user = next(30), item = next(40);
      out << "u" << user << "," << item << ",";
      const uint64_t views = next(4);
      for (uint64_t v = 0; v < views; ++v) out << (v ? "|" : "") << (item + v * 7) % 40;
      out << "," << (item % 5) * 0.5 << "," << ((user + item) % 3 == 0 ? 1 : 0) << "\n";
    }
  }
  proto::JobSpec spec = TrainingSpec("views", proto::POLICY_HERALD, 10);
  spec.set_num_dense(0);
  spec.clear_tables();
  for (const char* name : {"item", "user"}) {
    auto* table = spec.add_tables();
    table->set_name(name);
    table->set_dim(4);
  }
  proto::DataSpec* data = spec.mutable_data();
  data->set_format(proto::DATA_FORMAT_CSV);
  data->add_paths(path);
  data->set_on_malformed(proto::MALFORMED_FAIL);
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        columns { name: "click" role: COLUMN_LABEL }
        columns { name: "price" role: COLUMN_DENSE }
        columns { name: "user" role: COLUMN_SPARSE ids: IDS_STRING }
        columns { name: "item" role: COLUMN_SPARSE ids: IDS_DECIMAL }
        columns {
          name: "viewed"
          role: COLUMN_SPARSE
          ids: IDS_DECIMAL
          multi_hot_separator: "|"
          table: "item"
          pooling: POOLING_SQRT_N
        }
      )pb",
      data->mutable_schema()));
  // Held-out samples: the workers score them during the job, heraldctl
  // evaluate from the export; both split the shared table's keys.
  data->set_eval_fraction(0.1);
  spec.mutable_eval()->set_every_iterations(5);
  spec.mutable_eval()->set_batch_size(32);
  proto::JobSpec resolved = spec;
  ASSERT_TRUE(scheduler::ResolveDataSchema(&resolved).ok());
  ASSERT_EQ(resolved.tables_size(), 2);
  EXPECT_EQ(resolved.tables(0).name(), "user");  // the order features first name them
  EXPECT_EQ(resolved.tables(1).name(), "item");
  for (proto::PolicyKind policy : {proto::POLICY_HERALD, proto::POLICY_VANILLA}) {
    SCOPED_TRACE(proto::PolicyKind_Name(policy));
    spec.mutable_scheduling()->set_policy(policy);
    spec.set_name(absl::StrCat("views-", proto::PolicyKind_Name(policy)));
    resolved.mutable_scheduling()->set_policy(policy);
    const std::string job = Submit(spec);
    const proto::JobStatus done = Watch(job);
    ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << "\n" << Logs();
    EXPECT_EQ(done.progress().iteration(), 10u);
    ExpectEqualsReference(resolved, job, done.progress().loss());
    const std::string exported = dir_ + "/views-export-" + proto::PolicyKind_Name(policy);
    ASSERT_TRUE(cluster_->Export(job, exported).ok());
    testing::CommandResult evaluated =
        testing::RunHeraldctl(dir_, {"evaluate", "--model=" + exported, "--batch=32", "--json"});
    ASSERT_EQ(evaluated.code, 0) << evaluated.output;
    EXPECT_GT(done.progress().eval_samples(), 0u);
    EXPECT_EQ(testing::JsonNumber(evaluated.output, "auc"), done.progress().eval_auc());
    EXPECT_EQ(testing::JsonNumber(evaluated.output, "logloss"), done.progress().eval_logloss());
  }
}

// Every batch of two streams, bit for bit.
void ExpectSameBatches(const proto::JobSpec& a, const proto::JobSpec& b) {
  auto sa =
      scheduler::BatchStream::Open(scheduler::StreamOptionsFromSpec(a, scheduler::Split::kTrain));
  auto sb =
      scheduler::BatchStream::Open(scheduler::StreamOptionsFromSpec(b, scheduler::Split::kTrain));
  ASSERT_TRUE(sa.ok()) << sa.status();
  ASSERT_TRUE(sb.ok()) << sb.status();
  data::KeyBatch x, y;
  for (int i = 0;; ++i) {
    auto more_a = (*sa)->Next(&x);
    auto more_b = (*sb)->Next(&y);
    ASSERT_TRUE(more_a.ok() && more_b.ok());
    ASSERT_EQ(*more_a, *more_b) << "batch " << i;
    if (!*more_a) break;
    ASSERT_EQ(x.labels, y.labels) << "batch " << i;
    ASSERT_EQ(x.dense, y.dense) << "batch " << i;
    ASSERT_EQ(x.tables.size(), y.tables.size());
    for (size_t t = 0; t < x.tables.size(); ++t) {
      ASSERT_EQ(x.tables[t].keys, y.tables[t].keys) << "batch " << i << " table " << t;
      ASSERT_EQ(x.tables[t].offsets, y.tables[t].offsets) << "batch " << i << " table " << t;
      ASSERT_EQ(x.tables[t].weights, y.tables[t].weights) << "batch " << i << " table " << t;
      ASSERT_EQ(x.tables[t].feature_lengths, y.tables[t].feature_lengths) << "batch " << i;
    }
  }
}

// heraldctl convert --schema turns the CSV into binary format version 2,
// which stores the schema: a job on it, naming no schema, reads the same
// batches bit for bit and trains the same model.
TEST_F(TrainingCluster, TheCsvConvertedToBinaryVersion2TrainsTheSameModel) {
  const std::string csv = WriteShopCsv(dir_, 1200);
  proto::JobSpec csv_spec = ShopSpec(csv);
  // Held-out samples, evaluated during the job and from its export.
  csv_spec.mutable_data()->set_eval_fraction(0.1);
  csv_spec.mutable_eval()->set_every_iterations(5);
  csv_spec.mutable_eval()->set_batch_size(64);
  const std::string schema_file = dir_ + "/shop.schema.txt";
  std::string schema_text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(csv_spec.data().schema(), &schema_text));
  std::ofstream(schema_file) << schema_text;
  const std::string bin = dir_ + "/shop.bin";
  testing::CommandResult converted =
      testing::RunHeraldctl(dir_, {"convert", csv, "--schema=" + schema_file, "--out=" + bin});
  ASSERT_EQ(converted.code, 0) << converted.output;
  EXPECT_TRUE(absl::StrContains(converted.output, "converted 1200 rows")) << converted.output;

  proto::JobSpec bin_spec = csv_spec;
  bin_spec.set_name("shop-bin");
  bin_spec.mutable_data()->set_format(proto::DATA_FORMAT_HERALD_BINARY);
  bin_spec.mutable_data()->clear_schema();
  bin_spec.mutable_data()->clear_paths();
  bin_spec.mutable_data()->add_paths(bin);
  proto::JobSpec csv_resolved = csv_spec, bin_resolved = bin_spec;
  ASSERT_TRUE(scheduler::ResolveDataSchema(&csv_resolved).ok());
  ASSERT_TRUE(scheduler::ResolveDataSchema(&bin_resolved).ok());
  EXPECT_EQ(bin_resolved.data().schema().columns_size(), 9);
  ExpectSameBatches(csv_resolved, bin_resolved);

  const std::string job = Submit(bin_spec);
  const proto::JobStatus done = Watch(job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << "\n" << Logs();
  EXPECT_EQ(done.progress().iteration(), 10u);
  ExpectEqualsReference(csv_resolved, job, done.progress().loss());

  // The export records the schema (in its spec): heraldctl evaluate reads
  // the held-out samples through it and scores what the job scored.
  const std::string exported = dir_ + "/shop-export";
  ASSERT_TRUE(cluster_->Export(job, exported).ok());
  testing::CommandResult evaluated =
      testing::RunHeraldctl(dir_, {"evaluate", "--model=" + exported, "--batch=64", "--json"});
  ASSERT_EQ(evaluated.code, 0) << evaluated.output;
  EXPECT_GT(done.progress().eval_samples(), 0u);
  EXPECT_EQ(testing::JsonNumber(evaluated.output, "samples"),
            static_cast<double>(done.progress().eval_samples()));
  EXPECT_EQ(testing::JsonNumber(evaluated.output, "auc"), done.progress().eval_auc());
  EXPECT_EQ(testing::JsonNumber(evaluated.output, "logloss"), done.progress().eval_logloss());

  // A schema given beside a version 2 file must be the stored one.
  proto::JobSpec other = bin_spec;
  *other.mutable_data()->mutable_schema() = csv_spec.data().schema();
  other.mutable_data()->mutable_schema()->mutable_columns(2)->set_shift(5);
  absl::StatusOr<std::string> refused = cluster_->Submit(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                "data.schema: differs from the schema stored in"))
      << refused.status();
}

TEST_F(TrainingCluster, RefusesCallsWithoutTheTokenAndBadSpecs) {
  grpc::ClientContext no_token;
  rpc::SetDeadline(&no_token, 10000);
  proto::SubmitJobRequest request;
  *request.mutable_spec() = TrainingSpec("x", proto::POLICY_HERALD, 4);
  proto::SubmitJobResponse response;
  EXPECT_EQ(jobs_->SubmitJob(&no_token, request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  grpc::ClientContext context;
  Authorize(&context);
  request.mutable_spec()->set_global_batch_size(0);
  grpc::Status bad = jobs_->SubmitJob(&context, request, &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("global_batch_size"), std::string::npos)
      << bad.error_message();

  grpc::ClientContext adaptive_context;
  Authorize(&adaptive_context);
  request.mutable_spec()->set_global_batch_size(64);
  request.mutable_spec()->mutable_scheduling()->set_policy(proto::POLICY_HERALD_ADAPTIVE);
  grpc::Status adaptive = jobs_->SubmitJob(&adaptive_context, request, &response);
  EXPECT_EQ(adaptive.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(adaptive.error_message().find("adaptive_top_k > 0 or adaptive_budget_ms > 0"),
            std::string::npos)
      << adaptive.error_message();

  grpc::ClientContext rows_context;
  Authorize(&rows_context);
  request.mutable_spec()->mutable_scheduling()->set_policy(proto::POLICY_HERALD);
  request.mutable_spec()->mutable_scheduling()->set_cache_rows_per_worker(uint64_t{1} << 28);
  grpc::Status rows = jobs_->SubmitJob(&rows_context, request, &response);
  EXPECT_EQ(rows.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(
      rows.error_message().find("scheduling.cache_rows_per_worker: 268435456, want < 268435456"),
      std::string::npos)
      << rows.error_message();

  grpc::ClientContext serve_context;
  Authorize(&serve_context);
  request.mutable_spec()->mutable_scheduling()->set_cache_rows_per_worker(0);
  request.mutable_spec()->mutable_scheduling()->set_policy(proto::POLICY_VANILLA);
  request.mutable_spec()->mutable_scheduling()->set_serve(true);
  grpc::Status serve = jobs_->SubmitJob(&serve_context, request, &response);
  EXPECT_EQ(serve.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(serve.error_message().find("scheduling.serve: policy vanilla owns no rows"),
            std::string::npos)
      << serve.error_message();

  grpc::ClientContext passes_context;
  Authorize(&passes_context);
  request.mutable_spec()->mutable_scheduling()->set_serve(false);
  request.mutable_spec()->mutable_scheduling()->set_allocation_passes(2);
  grpc::Status passes = jobs_->SubmitJob(&passes_context, request, &response);
  EXPECT_EQ(passes.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(passes.error_message().find(
                "scheduling.allocation_passes: 2 with policy vanilla, whose allocation is not "
                "location-aware"),
            std::string::npos)
      << passes.error_message();
}

TEST_F(TrainingCluster, AWorkerStoppedMidJobFailsItWithTheReasonAndCancelWorks) {
  const proto::JobSpec spec = TrainingSpec("long", proto::POLICY_HERALD, 100000);
  // Cancel a running job: it ends CANCELLED and the workers take the next job.
  const std::string cancelled = Submit(spec);
  Watch(cancelled, [](const proto::JobStatus& s) { return s.progress().iteration() >= 2; });
  {
    grpc::ClientContext context;
    Authorize(&context);
    proto::CancelJobRequest request;
    request.set_job_id(cancelled);
    proto::CancelJobResponse response;
    ASSERT_TRUE(jobs_->CancelJob(&context, request, &response).ok());
  }
  const proto::JobStatus c = Watch(cancelled);
  EXPECT_EQ(c.state(), proto::JOB_CANCELLED) << c.reason();

  // SIGTERM a worker mid-job: it finishes its step, abandons the job
  // explicitly and exits 0; the job fails naming it.
  const std::string job = Submit(spec);
  Watch(job, [](const proto::JobStatus& s) { return s.progress().iteration() >= 2; });
  ASSERT_TRUE(cluster_->worker(1).Signal(SIGTERM).ok());
  auto code = cluster_->worker(1).WaitForExit(60000);
  ASSERT_TRUE(code.ok()) << code.status() << "\n"
                         << cluster_->worker(1).LogTail() << "\n"
                         << cluster_->Logs();
  EXPECT_EQ(*code, 0) << cluster_->worker(1).LogTail();
  const proto::JobStatus failed = Watch(job);
  EXPECT_EQ(failed.state(), proto::JOB_FAILED);
  EXPECT_NE(failed.reason().find("shut down"), std::string::npos) << failed.reason();
}

TEST_F(TrainingCluster, AKilledWorkerFailsTheJobNamingIt) {
  const std::string job = Submit(TrainingSpec("killed", proto::POLICY_HERALD, 100000));
  Watch(job, [](const proto::JobStatus& s) { return s.progress().iteration() >= 2; });
  ASSERT_TRUE(cluster_->worker(0).Signal(SIGKILL).ok());
  auto code = cluster_->worker(0).WaitForExit(60000);
  ASSERT_TRUE(code.ok()) << code.status();
  // Its stream breaks (or its heartbeats stop): the job fails naming the node.
  const proto::JobStatus failed = Watch(job);
  EXPECT_EQ(failed.state(), proto::JOB_FAILED);
  EXPECT_NE(failed.reason().find("worker-"), std::string::npos) << failed.reason();
  // The job cannot be exported.
  auto exported = cluster_->Export(job, dir_ + "/never");
  EXPECT_EQ(exported.status().code(), absl::StatusCode::kFailedPrecondition);
}

// With periodic checkpoints the scheduler tries to recover, but the killed
// worker never comes back and no spare registers: after a liveness timeout
// and recovery.timeout_s the job fails, naming the node and why it was not
// recovered; nothing hangs.
TEST_F(TrainingCluster, AWorkerThatNeverComesBackFailsTheJobAfterTheRecoveryTimeout) {
  proto::JobSpec spec = TrainingSpec("lost", proto::POLICY_HERALD, 100000);
  spec.mutable_checkpoint()->set_dir(dir_ + "/lost-ckpt");
  spec.mutable_checkpoint()->set_every_iterations(2);
  spec.mutable_recovery()->set_timeout_s(2);
  const std::string job = Submit(spec);
  Watch(job, [](const proto::JobStatus& s) { return s.progress().checkpoints_written() >= 1; });
  ASSERT_TRUE(cluster_->worker(1).Signal(SIGKILL).ok());
  ASSERT_TRUE(cluster_->worker(1).WaitForExit(60000).ok());
  const absl::Time killed = absl::Now();
  const proto::JobStatus failed = Watch(job);
  EXPECT_EQ(failed.state(), proto::JOB_FAILED);
  EXPECT_NE(failed.reason().find("worker-"), std::string::npos) << failed.reason();
  EXPECT_NE(failed.reason().find("not enough live nodes within 2 s to recover"), std::string::npos)
      << failed.reason();
  EXPECT_EQ(failed.recoveries(), 0u);
  // Liveness timeout (3 s) + recovery timeout (2 s) + polls, well under a minute.
  EXPECT_LT(absl::Now() - killed, absl::Seconds(30));
}

TEST_F(TrainingCluster, HeraldctlSubmitsWatchesAndListsNodes) {
  auto run = [&](std::vector<std::string> args, bool with_token = true) {
    args.push_back("--scheduler=" + address_);
    if (with_token) args.push_back("--token-file=" + token_file_);
    return testing::RunHeraldctl(dir_, args);
  };
  const std::string spec_file = dir_ + "/job.txt";
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(
      TrainingSpec("ctl", proto::POLICY_HERALD, 6), &text));
  std::ofstream(spec_file) << text;

  testing::CommandResult nodes = run({"nodes", "--json"});
  EXPECT_EQ(nodes.code, 0) << nodes.output;
  size_t alive = 0;
  for (size_t at = 0; (at = nodes.output.find("\"alive\":true", at)) != std::string::npos; ++at) {
    ++alive;
  }
  EXPECT_EQ(alive, 4u) << nodes.output;

  testing::CommandResult refused = run({"submit", spec_file}, /*with_token=*/false);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.output.find("UNAUTHENTICATED"), std::string::npos) << refused.output;

  const std::string bad_file = dir_ + "/bad.txt";
  std::ofstream(bad_file) << text << "global_batch_size: 0\n";
  testing::CommandResult bad = run({"submit", bad_file});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("global_batch_size"), std::string::npos) << bad.output;
  std::ofstream(dir_ + "/garbled.txt") << "name: \"x\"\nno_such_field: 3\n";
  testing::CommandResult garbled = run({"submit", dir_ + "/garbled.txt"});
  EXPECT_EQ(garbled.code, 2);
  EXPECT_NE(garbled.output.find("line 2"), std::string::npos) << garbled.output;

  testing::CommandResult submitted = run({"submit", spec_file});
  ASSERT_EQ(submitted.code, 0) << submitted.output;
  const std::string job(absl::StripAsciiWhitespace(submitted.output));
  testing::CommandResult watched = run({"watch", job});
  EXPECT_EQ(watched.code, 0) << watched.output << Logs();
  EXPECT_NE(watched.output.find("JOB_SUCCEEDED"), std::string::npos) << watched.output;
  testing::CommandResult status = run({"status", job, "--json"});
  EXPECT_EQ(status.code, 0);
  EXPECT_NE(status.output.find("\"state\":\"JOB_SUCCEEDED\""), std::string::npos) << status.output;

  // The history: a row per iteration (6 < kJobHistoryPoints), the planned
  // rows of each adding up to the job's totals, every worker's phases.
  testing::CommandResult history = run({"status", job, "--history", "--csv"});
  ASSERT_EQ(history.code, 0) << history.output;
  std::vector<std::string> lines =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(history.output), '\n');
  ASSERT_EQ(lines.size(), 7u) << history.output;
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  ASSERT_EQ(header.size(), 14u + 2 * 11) << lines[0];  // 10 phases and the device per worker
  EXPECT_EQ(header[4], "rows_fetched");
  EXPECT_EQ(header[10], "eval_auc");
  EXPECT_EQ(header[12], "ps_disk_rows_critical");
  EXPECT_EQ(header[29], "w1_writeback_ms");
  EXPECT_EQ(header[30], "w1_step_wait_ms");
  EXPECT_EQ(header[31], "w1_device_ms");
  EXPECT_EQ(header[32], "w1_decode_ms");
  EXPECT_EQ(header[33], "w1_stage_ms");
  EXPECT_EQ(header[34], "w1_commit_ms");
  EXPECT_EQ(header[35], "w1_report_ms");
  uint64_t fetched = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(cells.size(), header.size()) << lines[i];
    EXPECT_EQ(cells[0], std::to_string(i - 1));
    uint64_t rows = 0;
    ASSERT_TRUE(absl::SimpleAtoi(cells[4], &rows));
    fetched += rows;
    double compute = 0;
    ASSERT_TRUE(absl::SimpleAtod(cells[15], &compute));  // w0_compute_ms
    EXPECT_GT(compute, 0) << lines[i];
    double step_wait = -1;
    ASSERT_TRUE(absl::SimpleAtod(cells[19], &step_wait));  // w0_step_wait_ms
    EXPECT_EQ(cells[12], "0") << lines[i];  // all rows in memory: none read from disk
    EXPECT_GE(step_wait, 0) << lines[i];
    double device = 0;
    ASSERT_TRUE(absl::SimpleAtod(cells[20], &device));  // w0_device_ms
    EXPECT_GT(device, 0) << lines[i];                   // the CPU device's training took time
    double stage = 0, commit = 0, report = -1;
    ASSERT_TRUE(absl::SimpleAtod(cells[22], &stage));   // w0_stage_ms
    ASSERT_TRUE(absl::SimpleAtod(cells[23], &commit));  // w0_commit_ms
    ASSERT_TRUE(absl::SimpleAtod(cells[24], &report));  // w0_report_ms
    EXPECT_GT(stage, 0) << lines[i];                    // every step is checked against the cache
    EXPECT_GT(commit, 0) << lines[i];                   // every step reports to the shards
    EXPECT_GE(report, 0) << lines[i];
    // The evaluation at the end (eval.at_end): on the last iteration only.
    double auc = 0;
    EXPECT_EQ(absl::SimpleAtod(cells[10], &auc), i + 1 == lines.size()) << lines[i];
  }
  EXPECT_NE(status.output.find(absl::StrCat("\"rows_fetched\":\"", fetched, "\"")),
            std::string::npos)
      << status.output;
  EXPECT_EQ(run({"status", "--history"}).code, 2);  // needs a job

  // Export and evaluate the model.
  testing::CommandResult exported = run({"export", job, "--out=" + dir_ + "/model"});
  EXPECT_EQ(exported.code, 0) << exported.output << Logs();
  EXPECT_NE(exported.output.find("embedding rows"), std::string::npos) << exported.output;
  testing::CommandResult again = run({"export", job, "--out=" + dir_ + "/model"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.output.find("exists"), std::string::npos) << again.output;
  testing::CommandResult eval =
      testing::RunHeraldctl(dir_, {"evaluate", "--model=" + dir_ + "/model", "--json"});
  EXPECT_EQ(eval.code, 0) << eval.output;
  EXPECT_NE(eval.output.find("\"auc\":"), std::string::npos) << eval.output;
  testing::CommandResult missing =
      testing::RunHeraldctl(dir_, {"evaluate", "--model=" + dir_ + "/nothing"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("nothing/MODEL"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace herald
