#include "plan/step_codec.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"

namespace herald::plan {
namespace {

TEST(DecodeWorkerStep, OneSlotPerSampleTravelsWithoutOffsets) {
  Step step;
  step.job_id = "j";
  step.num_samples = 3;
  step.global_batch_size = 3;
  step.labels = {1, 0, 1};
  step.dense = {1, 2, 3};
  step.samples.resize(2);
  step.samples[0].offsets = {0, 1, 2, 3};  // one-hot: no offsets sent
  step.samples[0].slots = {4, 5, 6};
  step.samples[1].offsets = {0, 2, 2, 3};  // multi-hot and missing: sent
  step.samples[1].slots = {1, 2, 3};
  step.plan.resize(2);
  proto::WorkerStep wire = EncodeWorkerStep(step);
  EXPECT_TRUE(wire.samples().tables(0).offsets().empty());
  EXPECT_FALSE(wire.samples().tables(1).offsets().empty());
  auto back = DecodeWorkerStep(wire, 2, 1);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(back->samples[t].offsets, step.samples[t].offsets) << t;
    EXPECT_EQ(back->samples[t].slots, step.samples[t].slots) << t;
  }
  // Without offsets, the slots must be one per sample.
  proto::WorkerStep bad = wire;
  bad.mutable_samples()->mutable_tables(0)->mutable_slots()->resize(8);
  auto e = DecodeWorkerStep(bad, 2, 1);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("samples.tables[0].offsets: none (one slot per sample), "
                                      "but 2 slots for 3 samples"),
            std::string::npos)
      << e.status();
}

TEST(DecodeWorkerStep, FeatureLengthsOfASharedTableTravelAndMustSumToTheSamples) {
  Step step;
  step.job_id = "j";
  step.num_samples = 2;
  step.global_batch_size = 2;
  step.labels = {1, 0};
  step.samples.resize(1);
  step.samples[0].offsets = {0, 3, 4};
  step.samples[0].slots = {1, 2, 3, 4};
  step.samples[0].features = 2;
  step.samples[0].feature_lengths = {1, 2, 0, 1};
  step.plan.resize(1);
  proto::WorkerStep wire = EncodeWorkerStep(step);
  auto back = DecodeWorkerStep(wire, 1, 0);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->samples[0].features, 2u);
  EXPECT_EQ(back->samples[0].feature_lengths, step.samples[0].feature_lengths);
  // One table, one feature: nothing extra on the wire.
  step.samples[0].features = 1;
  step.samples[0].feature_lengths.clear();
  EXPECT_TRUE(EncodeWorkerStep(step).samples().tables(0).feature_lengths().empty());
  // Lengths that do not add up to a sample's slots are refused.
  step.samples[0].features = 2;
  step.samples[0].feature_lengths = {1, 1, 0, 1};
  auto bad = DecodeWorkerStep(EncodeWorkerStep(step), 1, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "samples.tables[0].feature_lengths: sample 0's sum to 2, it has 3 slots"),
            std::string::npos)
      << bad.status();
  // Labels: any finite number (a soft binary label, a regression label).
  step.samples[0].feature_lengths = {1, 2, 0, 1};
  step.labels = {0.5f, 4.25f};
  auto labels = DecodeWorkerStep(EncodeWorkerStep(step), 1, 0);
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->labels, step.labels);
  step.labels = {1, NAN};
  bad = DecodeWorkerStep(EncodeWorkerStep(step), 1, 0);
  EXPECT_NE(bad.status().message().find("samples.labels: nan is not a finite number"),
            std::string::npos)
      << bad.status();
  step.labels = {1, 0};
  // Per-id weights travel with the slots; a count that differs is refused.
  step.samples[0].feature_lengths = {1, 2, 0, 1};
  step.samples[0].weights = {0.5f, -1.0f, 2.0f, 0.25f};
  auto weighted = DecodeWorkerStep(EncodeWorkerStep(step), 1, 0);
  ASSERT_TRUE(weighted.ok()) << weighted.status();
  EXPECT_EQ(weighted->samples[0].weights, step.samples[0].weights);
  step.samples[0].weights.pop_back();
  bad = DecodeWorkerStep(EncodeWorkerStep(step), 1, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("samples.tables[0].weights: 3 weights for 4 slots"),
            std::string::npos)
      << bad.status();
}

TEST(DecodeWorkerStep, RoundTripsAndNamesBadFields) {
  Step step;
  step.job_id = "j";
  step.iteration = 3;
  step.num_samples = 2;
  step.global_batch_size = 4;
  step.labels = {1, 0};
  step.dense = {1, 2, 3, 4};
  step.sample_indices = {3, 1};
  step.samples.resize(1);
  step.samples[0].offsets = {0, 1, 3};
  step.samples[0].slots = {5, 6, 7};
  step.plan.resize(1);
  step.plan[0].fetch.keys = {Key(11), Key(12)};
  step.plan[0].fetch.slots = {6, 7};
  step.plan[0].owned_slots = {5, 6, 7};
  step.plan[0].gather.slots = {5};
  step.plan[0].gather.keys = {Key(10)};
  step.plan[0].gather.peers = {1};
  step.plan[0].send.slots = {5};
  step.plan[0].send.keys = {Key(10)};
  step.plan[0].send.peers = {1};
  step.plan[0].send.served = {1};
  step.plan[0].init.keys = {Key(13)};
  step.plan[0].init.slots = {8};
  proto::WorkerStep wire = EncodeWorkerStep(step);
  auto back = DecodeWorkerStep(wire, 1, 2);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->samples[0].slots, step.samples[0].slots);
  EXPECT_EQ(back->sample_indices, step.sample_indices);
  EXPECT_EQ(back->plan[0].fetch.keys, step.plan[0].fetch.keys);
  EXPECT_EQ(back->plan[0].gather.keys, step.plan[0].gather.keys);
  EXPECT_EQ(back->plan[0].gather.peers, step.plan[0].gather.peers);
  EXPECT_EQ(back->plan[0].send.served, step.plan[0].send.served);
  EXPECT_EQ(back->plan[0].init.keys, step.plan[0].init.keys);
  EXPECT_EQ(back->plan[0].init.slots, step.plan[0].init.slots);

  proto::WorkerStep bad = wire;
  bad.mutable_samples()->mutable_tables(0)->mutable_offsets()->resize(8);
  auto e = DecodeWorkerStep(bad, 1, 2);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("samples.tables[0].offsets"), std::string::npos);
  // A sample index past the global batch, or one index too few.
  for (const std::vector<uint32_t>& indices :
       {std::vector<uint32_t>{3, 4}, std::vector<uint32_t>{3}}) {
    Step wrong = step;
    wrong.sample_indices = indices;
    e = DecodeWorkerStep(EncodeWorkerStep(wrong), 1, 2);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.status().message().find("samples.sample_indices"), std::string::npos) << e.status();
  }
  bad = wire;
  bad.mutable_plan()->mutable_tables(0)->mutable_fetch()->mutable_slots()->resize(4);
  e = DecodeWorkerStep(bad, 1, 2);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(
      e.status().message().find("plan.tables[0].fetch.slots has 1 entries but fetch.keys has 2"),
      std::string::npos)
      << e.status();
  bad = wire;
  bad.mutable_plan()->mutable_tables(0)->mutable_send()->set_served(std::string(3, '\1'));
  e = DecodeWorkerStep(bad, 1, 2);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("plan.tables[0].send.served has 3 entries but"),
            std::string::npos)
      << e.status();
  bad = wire;
  bad.mutable_samples()->mutable_dense()->resize(12);
  e = DecodeWorkerStep(bad, 1, 2);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("samples.dense"), std::string::npos);
  e = DecodeWorkerStep(wire, 2, 2);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("table 1 is missing"), std::string::npos);
}

}  // namespace
}  // namespace herald::plan
