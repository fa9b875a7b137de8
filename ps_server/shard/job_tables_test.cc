#include "ps_server/shard/job_tables.h"

#include "gtest/gtest.h"

namespace herald::ps {
namespace {

proto::JobSpec Spec() {
  proto::JobSpec spec;
  spec.set_seed(11);
  spec.mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_ADAGRAD);
  spec.mutable_sparse_optimizer()->set_learning_rate(0.05f);
  for (int i = 0; i < 3; ++i) spec.add_tables()->set_dim(8 * (i + 1));
  return spec;
}

TEST(JobTables, UsesTheJobOptimizerUnlessTheTableHasItsOwn) {
  proto::JobSpec spec = Spec();
  spec.mutable_tables(1)->mutable_optimizer()->set_kind(proto::OPTIMIZER_ADAM);
  spec.mutable_tables(1)->mutable_optimizer()->set_learning_rate(0.001f);
  spec.mutable_tables(2)->set_max_rows(1001);
  auto tables = TableOptionsFromSpec(spec, 2);
  ASSERT_TRUE(tables.ok()) << tables.status();
  ASSERT_EQ(tables->size(), 3u);
  EXPECT_EQ((*tables)[0].optimizer.kind, math::SparseOptimizerKind::kAdagrad);
  EXPECT_EQ((*tables)[0].optimizer.learning_rate, 0.05f);
  EXPECT_EQ((*tables)[1].optimizer.kind, math::SparseOptimizerKind::kAdam);
  EXPECT_EQ((*tables)[1].optimizer.beta2, 0.999f);
  EXPECT_EQ((*tables)[2].dim, 24u);
  EXPECT_EQ((*tables)[2].id, TableId(2));
  EXPECT_EQ((*tables)[2].seed, 11u);
  EXPECT_EQ((*tables)[2].max_rows, 501u);  // ceil(1001 / 2) per shard
}

TEST(JobTables, NamesTheBadField) {
  proto::JobSpec spec = Spec();
  spec.mutable_tables(2)->set_dim(0);
  EXPECT_EQ(TableOptionsFromSpec(spec, 1).status().message(),
            "tables[2].dim: must be in [1, 4096], got 0");
  spec = Spec();
  spec.mutable_tables(0)->mutable_optimizer()->set_kind(proto::OPTIMIZER_SGD);
  EXPECT_EQ(TableOptionsFromSpec(spec, 1).status().message(),
            "tables[0].optimizer.learning_rate: must be a finite number > 0, got 0");
  spec = Spec();
  spec.clear_sparse_optimizer();
  EXPECT_NE(TableOptionsFromSpec(spec, 1).status().message().find("sparse_optimizer.kind"),
            std::string::npos);
  spec = Spec();
  spec.clear_tables();
  EXPECT_FALSE(TableOptionsFromSpec(spec, 1).ok());
}

}  // namespace
}  // namespace herald::ps
