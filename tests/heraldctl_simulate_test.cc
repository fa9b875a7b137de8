// heraldctl simulate, run as a user would, on generated data.

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

using testing::MakeTestDir;

using Result = testing::CommandResult;
using testing::JsonNumber;
using testing::JsonString;
using testing::RunHeraldctl;

// Every exact option off (each defaults to on with herald), and one more flag.
std::vector<std::string> OptionsOffAnd(const std::string& flag = "") {
  std::vector<std::string> flags = {"--nohandoff", "--noserve", "--noinit-on-worker",
                                    "--allocation-passes=1"};
  if (!flag.empty()) flags.push_back(flag);  // the last of a flag given twice wins
  return flags;
}

class HeraldctlSimulate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(MakeTestDir("simulate"));
    Result gen =
        RunHeraldctl(*dir_, {"gen-data", "--rows=12000", "--seed=9", "--out=" + *dir_ + "/d.bin",
                             "--format=bin", "--cardinality_scale=0.01"});
    ASSERT_EQ(gen.code, 0) << gen.output;
  }
  // `heraldctl simulate --json` on the test data: 4 workers × 64, the policy,
  // 30 iterations, and `flags`.
  static Result Simulate(const std::string& policy, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"simulate",
                                     "--data=" + *dir_ + "/d.bin",
                                     "--workers=4",
                                     "--batch-per-worker=64",
                                     "--policy=" + policy,
                                     "--iterations=30",
                                     "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    return RunHeraldctl(*dir_, args);
  }
  static std::string* dir_;
};
std::string* HeraldctlSimulate::dir_ = nullptr;

TEST_F(HeraldctlSimulate, JsonReportsEveryFieldAndHeraldMovesFewerRowsThanVanilla) {
  auto run = [&](const std::string& policy, const std::string& threads = "--threads=1") {
    return RunHeraldctl(*dir_, {"simulate", "--data=" + *dir_ + "/d.bin", "--workers", "4",
                                "--batch-per-worker", "64", "--cache-ratio", "0.1", "--policy",
                                policy, "--iterations=30", threads, "--json"});
  };
  const Result herald = run("herald");
  const Result vanilla = run("vanilla");
  // Tables planned on 3 threads: the same rows moved.
  const Result threaded = run("herald", "--threads=3");
  ASSERT_EQ(threaded.code, 0) << threaded.output;
  EXPECT_EQ(JsonNumber(threaded.output, "threads"), 3);
  EXPECT_EQ(JsonNumber(herald.output, "threads"), 1);
  for (const char* field : {"rows_fetched", "rows_pushed", "rows_written_back", "hit_rate"}) {
    EXPECT_EQ(JsonNumber(threaded.output, field), JsonNumber(herald.output, field)) << field;
  }
  // The same plans, bit for bit (the digest of every plan), and other
  // plans under another policy.
  const std::string digest = JsonString(herald.output, "plan_digest");
  EXPECT_EQ(digest.size(), 16u) << herald.output.substr(0, 400);
  EXPECT_EQ(JsonString(threaded.output, "plan_digest"), digest);
  EXPECT_NE(JsonString(vanilla.output, "plan_digest"), digest);
  ASSERT_EQ(herald.code, 0) << herald.output;
  ASSERT_EQ(vanilla.code, 0) << vanilla.output;
  for (const char* field :
       {"workers", "iterations", "cache_rows_per_worker", "rows_fetched", "rows_pushed",
        "rows_written_back", "hit_rate", "sched_ms_median", "sched_ms_p99"}) {
    EXPECT_GE(JsonNumber(herald.output, field), 0)
        << field << " in " << herald.output.substr(0, 400);
  }
  EXPECT_NE(herald.output.find("\"policy\":\"herald\""), std::string::npos);
  EXPECT_EQ(JsonNumber(herald.output, "iterations"), 30);
  EXPECT_EQ(JsonNumber(herald.output, "workers"), 4);
  auto moved = [](const std::string& json) {
    return JsonNumber(json, "rows_fetched") + JsonNumber(json, "rows_pushed") +
           JsonNumber(json, "rows_written_back");
  };
  EXPECT_GT(moved(vanilla.output), 0);
  EXPECT_LT(moved(herald.output), moved(vanilla.output));
  // Vanilla synchronises every trained row through the PS: it never writes back.
  EXPECT_EQ(JsonNumber(vanilla.output, "rows_written_back"), 0);
  EXPECT_EQ(JsonNumber(vanilla.output, "rows_pushed"), JsonNumber(vanilla.output, "rows_fetched"));
  // Hand-offs are a part of herald's write-backs (vanilla has none), and
  // reported with the checker on (it replays plans one at a time, so their
  // count is the planner's).
  EXPECT_GT(JsonNumber(herald.output, "rows_handed_off"), 0);
  EXPECT_LT(JsonNumber(herald.output, "rows_handed_off"),
            JsonNumber(herald.output, "rows_written_back"));
  EXPECT_EQ(JsonNumber(vanilla.output, "rows_handed_off"), 0);
}

// --handoff: the rows the plain run writes back only to
// hand them to the one other worker training them next move once, worker to
// worker, with every plan checked; vanilla has nothing to hand off.
TEST_F(HeraldctlSimulate, HandOffsMoveEachHandedOffRowOnce) {
  auto run = [&](const std::string& policy, bool handoff) {
    return Simulate(policy, OptionsOffAnd(handoff ? "--handoff" : ""));
  };
  const Result plain = run("herald", false), handed = run("herald", true);
  ASSERT_EQ(plain.code, 0) << plain.output;
  ASSERT_EQ(handed.code, 0) << handed.output;
  EXPECT_NE(handed.output.find("\"handoff\":true"), std::string::npos);
  EXPECT_NE(handed.output.find("\"checked\":true"), std::string::npos);
  const double handoffs = JsonNumber(plain.output, "rows_handed_off");
  EXPECT_GT(handoffs, 0);
  EXPECT_EQ(JsonNumber(plain.output, "rows_transferred"), 0);
  EXPECT_EQ(JsonNumber(handed.output, "rows_transferred"), handoffs);
  EXPECT_EQ(JsonNumber(handed.output, "rows_written_back"),
            JsonNumber(plain.output, "rows_written_back") - handoffs);
  EXPECT_EQ(JsonNumber(handed.output, "rows_fetched"),
            JsonNumber(plain.output, "rows_fetched") - handoffs);
  const Result vanilla = run("vanilla", true);
  EXPECT_NE(vanilla.code, 0);
  EXPECT_NE(vanilla.output.find("handoff: policy vanilla owns no rows"), std::string::npos)
      << vanilla.output;
}

// --serve: rows several workers train get an owner that gathers their
// gradients, so no gradient goes to the PS; every plan checked; fewer rows
// move in all than in the plain run; vanilla has nothing to serve.
TEST_F(HeraldctlSimulate, ServingSendsNoGradientToThePs) {
  auto run = [&](const std::string& policy, bool serve) {
    return Simulate(policy, OptionsOffAnd(serve ? "--serve" : ""));
  };
  auto moved = [](const Result& r) {
    return JsonNumber(r.output, "rows_fetched") + JsonNumber(r.output, "rows_pushed") +
           JsonNumber(r.output, "rows_written_back") + JsonNumber(r.output, "rows_transferred");
  };
  const Result plain = run("herald", false), served = run("herald", true);
  ASSERT_EQ(plain.code, 0) << plain.output;
  ASSERT_EQ(served.code, 0) << served.output;
  EXPECT_NE(served.output.find("\"serve\":true"), std::string::npos);
  EXPECT_NE(served.output.find("\"checked\":true"), std::string::npos);
  EXPECT_GT(JsonNumber(plain.output, "rows_pushed"), 0);
  EXPECT_EQ(JsonNumber(served.output, "rows_pushed"), 0);
  const double copies = JsonNumber(served.output, "rows_served_copies");
  const double gradients = JsonNumber(served.output, "rows_owner_gradients");
  EXPECT_GT(copies, 0);
  EXPECT_GT(gradients, 0);
  EXPECT_EQ(JsonNumber(served.output, "rows_transferred"), copies + gradients);  // no --handoff
  EXPECT_LT(moved(served), moved(plain));
  const Result vanilla = run("vanilla", true);
  EXPECT_NE(vanilla.code, 0);
  EXPECT_NE(vanilla.output.find("serve: policy vanilla owns no rows"), std::string::npos)
      << vanilla.output;
}

// --init-on-worker: the same plans, each first fetch of a row never trained
// turned into an initialisation by the worker; every plan checked.
TEST_F(HeraldctlSimulate, RowsNeverTrainedAreInitialisedNotFetched) {
  for (const std::string policy : {"vanilla", "herald"}) {
    SCOPED_TRACE(policy);
    const Result plain = Simulate(policy, OptionsOffAnd()),
                 init = Simulate(policy, OptionsOffAnd("--init-on-worker"));
    ASSERT_EQ(plain.code, 0) << plain.output;
    ASSERT_EQ(init.code, 0) << init.output;
    EXPECT_NE(init.output.find("\"init_on_worker\":true"), std::string::npos);
    EXPECT_NE(init.output.find("\"checked\":true"), std::string::npos);
    const double initialized = JsonNumber(init.output, "rows_initialized");
    EXPECT_GT(initialized, 0);
    EXPECT_EQ(JsonNumber(plain.output, "rows_initialized"), 0);
    EXPECT_EQ(JsonNumber(init.output, "rows_fetched") + initialized,
              JsonNumber(plain.output, "rows_fetched"));
    EXPECT_EQ(JsonNumber(init.output, "rows_pushed"), JsonNumber(plain.output, "rows_pushed"));
  }
}

// --allocation-passes: herald re-places every sample knowing where the
// others went; plans still checked, and the reach of the option is enforced.
TEST_F(HeraldctlSimulate, AllocationPassesRefineLocationAwareAllocationOnly) {
  const Result one = Simulate("herald", {"--allocation-passes=1"}),
               three = Simulate("herald", {"--allocation-passes=3"});
  ASSERT_EQ(one.code, 0) << one.output;
  ASSERT_EQ(three.code, 0) << three.output;
  EXPECT_NE(one.output.find("\"allocation_passes\":1"), std::string::npos);
  EXPECT_NE(three.output.find("\"allocation_passes\":3"), std::string::npos);
  EXPECT_NE(three.output.find("\"checked\":true"), std::string::npos);
  EXPECT_NE(JsonNumber(three.output, "rows_fetched"), JsonNumber(one.output, "rows_fetched"));
  // 0 means the policy's default (two passes for herald), as
  // scheduling.allocation_passes: 0 does in a job spec.
  const Result zero = Simulate("herald", {"--allocation-passes=0"}),
               two = Simulate("herald", {"--allocation-passes=2"});
  ASSERT_EQ(zero.code, 0) << zero.output;
  EXPECT_NE(zero.output.find("\"allocation_passes\":2"), std::string::npos);
  EXPECT_EQ(JsonString(zero.output, "plan_digest"), JsonString(two.output, "plan_digest"));
  const Result nine = Simulate("herald", {"--allocation-passes=9"});
  EXPECT_EQ(nine.code, 2);
  EXPECT_NE(nine.output.find("--allocation-passes: 9, want 0..8"), std::string::npos)
      << nine.output;
  const Result vanilla = Simulate("vanilla", {"--allocation-passes=2"});
  EXPECT_NE(vanilla.code, 0);
  EXPECT_NE(vanilla.output.find("--allocation-passes: 2 with policy vanilla"), std::string::npos)
      << vanilla.output;
}

TEST_F(HeraldctlSimulate, HeraldAdaptiveScoresTheTablesItIsGiven) {
  const Result r = RunHeraldctl(
      *dir_, {"simulate", "--data=" + *dir_ + "/d.bin", "--workers=4", "--batch-per-worker=64",
              "--policy=herald-adaptive", "--top-k=5", "--iterations=12", "--json"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\"policy\":\"herald-adaptive\""), std::string::npos);
  EXPECT_EQ(JsonNumber(r.output, "top_k"), 5);
  // Every table is scored until the profiler's first ranking, 5 after it.
  EXPECT_EQ(JsonNumber(r.output, "scored_tables"), 5) << r.output.substr(0, 600);
  EXPECT_EQ(r.output.find("\"scored_tables\":26"), std::string::npos)
      << "the first plan already allocates the read-ahead batch with the first ranking";
  const Result budget = RunHeraldctl(
      *dir_, {"simulate", "--data=" + *dir_ + "/d.bin", "--workers=4", "--batch-per-worker=64",
              "--policy=herald-adaptive", "--budget-ms=0.001", "--iterations=4", "--json"});
  ASSERT_EQ(budget.code, 0) << budget.output;
  EXPECT_EQ(JsonNumber(budget.output, "scored_tables"), 0) << "1 µs fits no table";
  // ... nor the planner's base cost: the output says the budget cannot be met.
  EXPECT_GT(JsonNumber(budget.output, "predicted_ms"), 0.001);
  EXPECT_NE(budget.output.find("\"budget_reachable\":false"), std::string::npos)
      << budget.output.substr(0, 800);
  EXPECT_NE(r.output.find("\"budget_reachable\":true"), std::string::npos)
      << "a top-k run has no budget to miss";
  const Result text = RunHeraldctl(
      *dir_, {"simulate", "--data=" + *dir_ + "/d.bin", "--workers=4", "--batch-per-worker=64",
              "--policy=herald-adaptive", "--budget-ms=0.001", "--iterations=4"});
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("budget 0.001 ms NOT reachable: the cost model predicts"),
            std::string::npos)
      << text.output;
  // A budget above the cost of scoring every table scores all 26.
  const Result roomy = RunHeraldctl(
      *dir_, {"simulate", "--data=" + *dir_ + "/d.bin", "--workers=4", "--batch-per-worker=64",
              "--policy=herald-adaptive", "--budget-ms=1000", "--iterations=4", "--json"});
  ASSERT_EQ(roomy.code, 0) << roomy.output;
  EXPECT_EQ(JsonNumber(roomy.output, "scored_tables"), 26);
  EXPECT_NE(roomy.output.find("\"budget_reachable\":true"), std::string::npos);
}

// Left out, the exact options take the policy's defaults, as in a job spec:
// every one on with herald (the fastest configuration measured), off with
// vanilla (the published baseline); a flag given turns one off.
TEST_F(HeraldctlSimulate, OptionsLeftOutTakeThePolicysDefaults) {
  auto flag = [](const Result& r, const std::string& name) {
    if (r.output.find("\"" + name + "\":true") != std::string::npos) return 1;
    if (r.output.find("\"" + name + "\":false") != std::string::npos) return 0;
    return -1;
  };
  const Result herald = Simulate("herald"), vanilla = Simulate("vanilla"),
               alloc_only = Simulate("herald-alloc-only"),
               no_serve = Simulate("herald", {"--noserve"});
  for (const Result* r : {&herald, &vanilla, &alloc_only, &no_serve}) {
    ASSERT_EQ(r->code, 0) << r->output;
  }
  for (const char* name : {"handoff", "serve", "init_on_worker"}) {
    EXPECT_EQ(flag(herald, name), 1) << name;
    EXPECT_EQ(flag(vanilla, name), 0) << name;
  }
  EXPECT_EQ(JsonNumber(herald.output, "allocation_passes"), 2);
  EXPECT_EQ(JsonNumber(vanilla.output, "allocation_passes"), 1);
  EXPECT_EQ(flag(alloc_only, "handoff"), 0);
  EXPECT_EQ(flag(alloc_only, "init_on_worker"), 1);
  EXPECT_EQ(JsonNumber(alloc_only.output, "allocation_passes"), 2);
  EXPECT_EQ(flag(no_serve, "serve"), 0);
  EXPECT_EQ(flag(no_serve, "handoff"), 1);
  EXPECT_GT(JsonNumber(herald.output, "rows_transferred"), 0);
}

// --link-gbps: a predicted iteration from the bytes the plans move (the
// all-reduce partly beside the row transfers); herald,
// which moves fewer, is predicted faster than vanilla where bytes cost time,
// and a faster link shortens every prediction.
TEST_F(HeraldctlSimulate, LinkRatePredictsTheIterationTime) {
  const std::vector<std::string> model = {"--link-gbps=0.5", "--dim=64", "--dense-params=100000",
                                          "--compute-ms-per-sample=0.01"};
  auto with = [&](std::vector<std::string> flags, const std::string& more) {
    flags.push_back(more);
    return flags;
  };
  const Result vanilla = Simulate("vanilla", model), herald = Simulate("herald", model),
               fast = Simulate("vanilla", with(model, "--link-gbps=5"));
  for (const Result* r : {&vanilla, &herald, &fast}) ASSERT_EQ(r->code, 0) << r->output;
  const double v = JsonNumber(vanilla.output, "predicted_ms_per_iteration");
  double phases = 0;
  for (const char* phase : {"fetch", "compute", "allreduce", "push", "writeback", "exchange"}) {
    phases += JsonNumber(vanilla.output, std::string("predicted_") + phase + "_ms");
  }
  // The all-reduce runs beside the push, write-back and exchange: the part
  // hidden behind them is not in the iteration's time.
  const double hidden = JsonNumber(vanilla.output, "predicted_allreduce_overlapped_ms");
  EXPECT_GT(hidden, 0);
  EXPECT_LE(hidden, JsonNumber(vanilla.output, "predicted_allreduce_ms"));
  EXPECT_NEAR(phases - hidden, v, 1e-4 * v);  // each printed to 6 digits
  EXPECT_NEAR(JsonNumber(vanilla.output, "predicted_compute_ms"), 0.64, 1e-9);  // 64 × 0.01
  EXPECT_LT(JsonNumber(herald.output, "predicted_ms_per_iteration"), v);
  EXPECT_LT(JsonNumber(fast.output, "predicted_ms_per_iteration"), v);
  EXPECT_EQ(Simulate("vanilla").output.find("predicted_ms"), std::string::npos);
}

// --flush-every: periodic checkpoints' flushes write back more (every dirty
// row every N iterations); plans still checked, the model unchanged.
TEST_F(HeraldctlSimulate, FlushesForCheckpointsWriteBackMore) {
  const Result plain = Simulate("herald"), flushed = Simulate("herald", {"--flush-every=5"});
  ASSERT_EQ(plain.code, 0) << plain.output;
  ASSERT_EQ(flushed.code, 0) << flushed.output;
  EXPECT_EQ(JsonNumber(flushed.output, "flush_every"), 5);
  EXPECT_NE(flushed.output.find("\"checked\":true"), std::string::npos);
  EXPECT_GT(JsonNumber(flushed.output, "rows_written_back"),
            JsonNumber(plain.output, "rows_written_back"));
}

TEST_F(HeraldctlSimulate, WarmStartFetchesTheHottestKeysAtIterationZero) {
  auto run = [&](bool warm) {
    std::vector<std::string> args = {"simulate",        "--data=" + *dir_ + "/d.bin",
                                     "--workers=4",     "--batch-per-worker=64",
                                     "--policy=herald", "--iterations=6",
                                     "--json"};
    const std::vector<std::string> off = OptionsOffAnd(warm ? "--warm-start" : "");
    args.insert(args.end(), off.begin(), off.end());
    return RunHeraldctl(*dir_, args);
  };
  const Result cold = run(false), warm = run(true);
  ASSERT_EQ(cold.code, 0) << cold.output;
  ASSERT_EQ(warm.code, 0) << warm.output;
  EXPECT_NE(warm.output.find("\"warm_start\":true"), std::string::npos);
  // The first per-iteration "fetched" is iteration 0's: the warm start adds
  // the hottest rows each worker does not train then (its plans checked).
  EXPECT_GT(JsonNumber(warm.output, "fetched"), JsonNumber(cold.output, "fetched"));
  EXPECT_GT(JsonNumber(warm.output, "rows_fetched"), JsonNumber(cold.output, "rows_fetched"));
  EXPECT_NE(warm.output.find("\"checked\":true"), std::string::npos);
}

TEST_F(HeraldctlSimulate, TextOutputStatesTheCacheRatioAndTheCheck) {
  const Result r = RunHeraldctl(
      *dir_, {"simulate", "--data=" + *dir_ + "/d.bin", "--workers=2", "--batch_per_worker=32",
              "--policy=herald-comm-only", "--iterations=3", "--eviction=lfu"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("fraction of the data's distinct keys"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("replayed by the plan checker"), std::string::npos);
  EXPECT_NE(r.output.find("median"), std::string::npos);
}

TEST_F(HeraldctlSimulate, BadOptionsNameTheFlagAndExitTwo) {
  const std::string data = "--data=" + *dir_ + "/d.bin";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"simulate", "--workers=2", "--batch-per-worker=8"}, "--data"},
      {{"simulate", data, "--workers=0", "--batch-per-worker=8"}, "--workers"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--cache-ratio=1.5"},
       "--cache-ratio"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--policy=fast"},
       "unknown policy 'fast'"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--eviction=mru"},
       "unknown eviction 'mru'"},
      {{"simulate", data, "--workers=4", "--batch-per-worker=4000"}, "fewer than one global batch"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--policy=herald-adaptive"},
       "herald-adaptive needs --top-k > 0 or --budget-ms > 0"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--policy=vanilla", "--top-k=3"},
       "--top-k / --budget-ms: set only with policy herald-adaptive (not vanilla)"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--policy=herald-adaptive",
        "--budget-ms=-1"},
       "--budget-ms: -1"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--policy=nocache",
        "--warm-start"},
       "keeps no cache to warm"},
      {{"simulate", data, "--workers=2", "--batch-per-worker=8", "--threads=65"},
       "--threads: 65, want 1..64"},
  };
  for (const Case& c : cases) {
    const Result r = RunHeraldctl(*dir_, c.args);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
  }
  const Result missing = RunHeraldctl(
      *dir_, {"simulate", "--data=/nonexistent/x.tsv", "--workers=2", "--batch-per-worker=8"});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.output.find("/nonexistent/x.tsv"), std::string::npos) << missing.output;
}

}  // namespace
// --admission N: the batches filtered as a job's training stream is. Fewer
// keys get rows (the tables' size), fewer rows move, and the keys admitted
// and waiting together are those seen.
TEST_F(HeraldctlSimulate, AdmissionShrinksTheTablesAndTheRowsMoved) {
  const Result all = Simulate("herald");
  const Result admitting = Simulate("herald", {"--admission=3"});
  ASSERT_EQ(all.code, 0) << all.output;
  ASSERT_EQ(admitting.code, 0) << admitting.output;
  EXPECT_EQ(JsonNumber(admitting.output, "admission_min_count"), 3);
  const double admitted = JsonNumber(admitting.output, "keys_admitted");
  const double waiting = JsonNumber(admitting.output, "keys_waiting");
  EXPECT_GT(admitted, 0);
  EXPECT_GT(waiting, admitted) << "most keys of the long tail are seen fewer than 3 times";
  EXPECT_GT(JsonNumber(admitting.output, "lookups_dropped"), waiting);
  EXPECT_LT(JsonNumber(admitting.output, "rows_fetched"), JsonNumber(all.output, "rows_fetched"));
  EXPECT_LT(JsonNumber(admitting.output, "rows_written_back"),
            JsonNumber(all.output, "rows_written_back"));
  EXPECT_EQ(all.output.find("keys_admitted"), std::string::npos);
}

// --expire-after T: rows whose keys are absent from T batches in a row are
// deleted (every plan still passes the plan checker): the tables hold far
// fewer rows at their fullest than when rows never go.
TEST_F(HeraldctlSimulate, ExpiryBoundsTheTablesAndEveryPlanIsChecked) {
  const Result kept = Simulate("herald", {"--expire-after=100000"});
  const Result expiring = Simulate("herald", {"--expire-after=2"});
  ASSERT_EQ(kept.code, 0) << kept.output;
  ASSERT_EQ(expiring.code, 0) << expiring.output;
  EXPECT_EQ(JsonNumber(kept.output, "rows_expired"), 0);
  EXPECT_GT(JsonNumber(expiring.output, "rows_expired"), 0);
  EXPECT_EQ(JsonNumber(expiring.output, "expire_after"), 2);
  EXPECT_LT(JsonNumber(expiring.output, "table_rows_max"),
            JsonNumber(kept.output, "table_rows_max") / 2);
  EXPECT_EQ(JsonNumber(kept.output, "table_rows"), JsonNumber(kept.output, "table_rows_max"));
  EXPECT_NE(expiring.output.find("\"checked\":true"), std::string::npos) << expiring.output;
}

}  // namespace herald
