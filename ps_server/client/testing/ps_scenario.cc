#include "ps_server/client/testing/ps_scenario.h"

#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "common/rng.h"
#include "common/status.h"

namespace herald::ps::testing {
namespace {

float Unit(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  const uint64_t h = Mix64(Mix64(Mix64(a * 0x9E37u + b) + c) ^ d);
  return static_cast<float>(h >> 40) / static_cast<float>(1 << 24) - 0.5f;  // [-0.5, 0.5)
}

std::vector<Key> KeysOf(const ScenarioOptions& o, uint64_t t, uint32_t w, uint32_t table) {
  std::vector<Key> keys;
  for (uint32_t i = 0; i < o.keys_per_worker; ++i) {
    keys.push_back(Mix64(t * 1000003 + w * 7919 + i * 31 + table) % o.key_space);
  }
  return keys;  // may contain duplicates: the client handles them
}

}  // namespace

proto::JobSpec ScenarioSpec() {
  proto::JobSpec spec;
  spec.set_seed(2024);
  auto* a = spec.add_tables();
  a->set_dim(8);
  a->mutable_optimizer()->set_kind(proto::OPTIMIZER_ADAGRAD);
  a->mutable_optimizer()->set_learning_rate(0.05f);
  a->mutable_optimizer()->set_initial_accumulator(0.1f);
  auto* b = spec.add_tables();
  b->set_dim(4);
  b->mutable_optimizer()->set_kind(proto::OPTIMIZER_ADAM);
  b->mutable_optimizer()->set_learning_rate(0.01f);
  return spec;
}

absl::Status RunIterations(PsClient& client, const ScenarioOptions& o, uint64_t first,
                           uint64_t last) {
  const uint32_t dims[2] = {8, 4};
  for (uint64_t t = first; t <= last; ++t) {
    for (uint32_t w = 0; w < o.num_workers; ++w) {
      std::vector<TableKeys> want;
      std::vector<TableGrads> grads;
      for (uint32_t table = 0; table < 2; ++table) {
        std::vector<Key> keys = KeysOf(o, t, w, table);
        want.push_back({TableId(table), keys});
        TableGrads g{TableId(table), keys, dims[table], {}};
        for (size_t i = 0; i < keys.size(); ++i) {
          for (uint32_t d = 0; d < dims[table]; ++d) g.grads.push_back(Unit(t, w, keys[i], d));
        }
        grads.push_back(std::move(g));
      }
      HERALD_ASSIGN_OR_RETURN(std::vector<TableRows> rows,
                              client.Fetch(o.job_id, Iteration(t), want));
      for (const TableRows& r : rows) {
        if (r.keys.size() != o.keys_per_worker || r.rows.size() != r.keys.size() * r.row_floats) {
          return absl::InternalError(absl::StrCat("iteration ", t, ": short fetch"));
        }
      }
      // Every third iteration the last worker writes back, as their owner,
      // keys beyond the shared key space (nobody else touches them).
      if (w + 1 == o.num_workers && t % 3 == 2) {
        TableRows owned{TableId(0), {}, 16, {}, {}};
        for (Key k = 0; k < 20; ++k) {
          owned.keys.push_back(o.key_space + 100 + k);
          for (uint32_t f = 0; f < 16; ++f) owned.rows.push_back(Unit(t, 99, k, f));
          owned.versions.push_back(t + 1);
        }
        HERALD_RETURN_IF_ERROR(client.WriteBack(o.job_id, Iteration(t), WorkerRank(w), {owned}));
      }
      HERALD_RETURN_IF_ERROR(client.PushGradients(o.job_id, Iteration(t), WorkerRank(w), grads));
    }
    for (uint32_t w = 0; w < o.num_workers; ++w) {
      HERALD_ASSIGN_OR_RETURN(bool committed, client.IterationDone(o.job_id, Iteration(t),
                                                                   WorkerRank(w), o.num_workers));
      if (committed != (w + 1 == o.num_workers)) {
        return absl::InternalError(
            absl::StrCat("iteration ", t, " worker ", w, ": committed = ", committed));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TableRows>> FetchAll(PsClient& client, const ScenarioOptions& o,
                                                uint64_t iteration) {
  std::vector<TableKeys> want(2);
  for (uint32_t table = 0; table < 2; ++table) {
    want[table].table = TableId(table);
    for (Key k = 0; k < o.key_space + 200; ++k) want[table].keys.push_back(k);
  }
  return client.Fetch(o.job_id, Iteration(iteration), want);
}

absl::StatusOr<std::string> CheckpointScenario(PsClient& client, const ScenarioOptions& options,
                                               uint64_t iteration, const std::string& dir) {
  HERALD_ASSIGN_OR_RETURN(std::vector<proto::CheckpointShard> shards,
                          client.CheckpointShards(options.job_id, iteration, dir));
  checkpoint::ManifestParts parts;
  parts.job_id = options.job_id;
  parts.iteration = iteration;
  parts.spec = ScenarioSpec();
  parts.num_workers = options.num_workers;
  return checkpoint::WriteManifest(dir, checkpoint::AssembleManifest(parts, std::move(shards)));
}

}  // namespace herald::ps::testing
