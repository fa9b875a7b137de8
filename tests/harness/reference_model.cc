#include "tests/harness/reference_model.h"

#include <cmath>

#include "gtest/gtest.h"
#include "scheduler/data/batch_stream.h"
#include "tools/model_reader.h"

namespace herald::testing {

ReferenceModel TrainReference(const proto::JobSpec& spec) {
  ReferenceModel r;
  auto trainer = worker::ReferenceTrainer::Create(spec, r.device.get());
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return r;
  r.trainer = std::move(*trainer);
  r.keys.resize(spec.tables_size());
  auto stream = scheduler::BatchStream::Open(
      scheduler::StreamOptionsFromSpec(spec, scheduler::Split::kTrain));
  EXPECT_TRUE(stream.ok()) << stream.status();
  if (!stream.ok()) return r;
  data::KeyBatch batch;
  for (;;) {
    auto more = (*stream)->Next(&batch);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    auto loss = r.trainer->Train(batch);
    EXPECT_TRUE(loss.ok());
    r.losses.push_back(*loss / spec.global_batch_size());
    for (size_t t = 0; t < r.keys.size(); ++t) {
      r.keys[t].insert(batch.tables[t].keys.begin(), batch.tables[t].keys.end());
      for (Key key : batch.tables[t].expired) r.keys[t].erase(key);
      r.expired += batch.tables[t].expired.size();
    }
  }
  return r;
}

double RelativeError(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

void ExpectExportEqualsReference(const std::string& dir, const ReferenceModel& ref,
                                 uint64_t iterations, bool warm_started, double relative) {
  auto model = tools::ReadModelExport(dir);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_NE(ref.trainer, nullptr);
  EXPECT_EQ(model->manifest.iterations(), iterations);
  const std::vector<float> ref_dense = ref.trainer->DenseValues();
  ASSERT_EQ(model->dense.size(), ref_dense.size());
  EXPECT_LE(RelativeError({model->dense.begin(), model->dense.end()},
                          {ref_dense.begin(), ref_dense.end()}),
            relative);
  ASSERT_EQ(model->tables.size(), ref.keys.size());
  for (size_t t = 0; t < model->tables.size(); ++t) {
    const tools::ExportedTable& table = model->tables[t];
    if (!warm_started) {
      EXPECT_EQ(table.keys.size(), ref.keys[t].size()) << "table " << t;
    }
    std::vector<double> got, want;
    size_t trained = 0;
    for (size_t i = 0; i < table.keys.size(); ++i) {
      trained += ref.keys[t].contains(table.keys[i]);
      if (!warm_started) {
        EXPECT_TRUE(ref.keys[t].contains(table.keys[i]))
            << "table " << t << " key " << table.keys[i];
      }
      const std::vector<float> row = ref.trainer->Row(static_cast<uint32_t>(t), table.keys[i]);
      ASSERT_EQ(row.size(), table.row_floats);
      want.insert(want.end(), row.begin(), row.end());
      got.insert(got.end(), table.rows.begin() + i * table.row_floats,
                 table.rows.begin() + (i + 1) * table.row_floats);
    }
    EXPECT_LE(RelativeError(got, want), relative) << "table " << t;
    EXPECT_EQ(trained, ref.keys[t].size()) << "table " << t << ": a trained row is missing";
  }
}

}  // namespace herald::testing
