#include "worker/testing/bsp_test_planner.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace herald::worker::testing {
namespace {

constexpr int kPs = -1;

struct WorkerTable {
  std::vector<Key> slot_key;
  std::vector<bool> slot_used;
  std::vector<uint64_t> last_use;
  absl::flat_hash_map<Key, uint32_t> slot_of;
  absl::flat_hash_map<Key, uint64_t> copy_version;
};

struct GlobalTable {
  absl::flat_hash_map<Key, uint64_t> version;  // bumped whenever the row is trained
  absl::flat_hash_map<Key, int> holder;        // newest copy: kPs or a worker
  // 1 + the last iteration that changed the PS copy (pushed to or wrote it back).
  absl::flat_hash_map<Key, uint64_t> ps_changed;
};

// A fetch's early distance at iteration t (plan::FetchRows::early): the
// iterations just before t that left the PS copy unchanged, at most
// kMaxEarlyDistance.
uint8_t EarlyDistance(const GlobalTable& g, Key key, uint64_t t) {
  auto it = g.ps_changed.find(key);
  const uint64_t since = it == g.ps_changed.end() ? t : (it->second > t ? 0 : t - it->second);
  return static_cast<uint8_t>(std::min<uint64_t>(since, kMaxEarlyDistance));
}

int Holder(const GlobalTable& g, Key key) {
  auto it = g.holder.find(key);
  return it == g.holder.end() ? kPs : it->second;
}
uint64_t Version(const GlobalTable& g, Key key) {
  auto it = g.version.find(key);
  return it == g.version.end() ? 0 : it->second;
}

// Distinct keys of a worker's slice of table `t`, in first-use order.
std::vector<Key> DistinctKeys(const data::KeyBatch& slice, size_t t) {
  std::vector<Key> out;
  absl::flat_hash_set<Key> seen;
  for (Key k : slice.tables[t].keys) {
    if (seen.insert(k).second) out.push_back(k);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<plan::Step>>> PlanAll(
    const std::vector<data::KeyBatch>& batches, const TestPlannerOptions& options) {
  const uint32_t W = options.num_workers;
  const size_t T = batches.size();
  const size_t num_tables = batches.empty() ? 0 : batches[0].tables.size();
  // slices[t][w]
  std::vector<std::vector<data::KeyBatch>> slices(T);
  for (size_t t = 0; t < T; ++t) {
    const uint32_t n = batches[t].num_samples;
    for (uint32_t w = 0; w < W; ++w) {
      slices[t].push_back(batches[t].Slice(n * w / W, n * (w + 1) / W, options.num_dense));
    }
  }
  std::vector<std::vector<WorkerTable>> cache(W, std::vector<WorkerTable>(num_tables));
  for (auto& tables : cache) {
    for (auto& c : tables) {
      c.slot_key.assign(options.cache_slots, 0);
      c.slot_used.assign(options.cache_slots, false);
      c.last_use.assign(options.cache_slots, 0);
    }
  }
  std::vector<GlobalTable> global(num_tables);
  std::vector<std::vector<plan::Step>> steps(T, std::vector<plan::Step>(W));

  for (size_t t = 0; t < T; ++t) {
    for (size_t tb = 0; tb < num_tables; ++tb) {
      std::vector<std::vector<Key>> used(W);
      absl::flat_hash_map<Key, int> users;
      for (uint32_t w = 0; w < W; ++w) {
        used[w] = DistinctKeys(slices[t][w], tb);
        for (Key k : used[w]) ++users[k];
      }
      GlobalTable& g = global[tb];
      for (uint32_t w = 0; w < W; ++w) {
        WorkerTable& c = cache[w][tb];
        plan::TablePlan& plan = (steps[t][w].plan.resize(num_tables), steps[t][w].plan[tb]);
        const absl::flat_hash_set<Key> needed(used[w].begin(), used[w].end());
        // Keys to fetch: not resident, or resident but not the newest copy.
        std::vector<Key> missing, refresh;
        for (Key k : used[w]) {
          auto it = c.slot_of.find(k);
          const bool newest =
              Holder(g, k) == static_cast<int>(w) ||
              (Holder(g, k) == kPs && it != c.slot_of.end() && c.copy_version[k] == Version(g, k));
          if (it == c.slot_of.end()) {
            missing.push_back(k);
          } else if (!newest) {
            refresh.push_back(k);
          }
        }
        // Free slots, then LRU evictions of rows this worker does not need now.
        std::vector<uint32_t> free;
        for (uint32_t s = 0; s < options.cache_slots; ++s) {
          if (!c.slot_used[s]) free.push_back(s);
        }
        std::multimap<uint64_t, uint32_t> lru;
        for (uint32_t s = 0; s < options.cache_slots; ++s) {
          if (c.slot_used[s] && !needed.contains(c.slot_key[s])) lru.emplace(c.last_use[s], s);
        }
        auto victim = lru.begin();
        while (free.size() < missing.size()) {
          if (victim == lru.end()) {
            return absl::ResourceExhaustedError(
                absl::StrCat("worker ", w, " table ", tb, " iteration ", t, ": ", used[w].size(),
                             " keys do not fit ", options.cache_slots, " slots"));
          }
          const uint32_t s = victim++->second;
          const Key k = c.slot_key[s];
          plan.evict.slots.push_back(s);
          plan.evict.keys.push_back(k);
          if (Holder(g, k) == static_cast<int>(w)) {  // written back at t
            g.holder[k] = kPs;
            g.ps_changed[k] = t + 1;
          }
          c.slot_of.erase(k);
          c.slot_used[s] = false;
          free.push_back(s);
        }
        std::sort(free.begin(), free.end());
        size_t next_free = 0;
        for (Key k : missing) {
          const uint32_t s = free[next_free++];
          c.slot_key[s] = k;
          c.slot_used[s] = true;
          c.slot_of[k] = s;
          plan.fetch.keys.push_back(k);
          plan.fetch.slots.push_back(s);
          plan.fetch.early.push_back(EarlyDistance(g, k, t));
        }
        for (Key k : refresh) {
          plan.fetch.keys.push_back(k);
          plan.fetch.slots.push_back(c.slot_of[k]);
          plan.fetch.early.push_back(EarlyDistance(g, k, t));
        }
        for (Key k : used[w]) {
          const uint32_t s = c.slot_of[k];
          c.last_use[s] = t + 1;
          c.copy_version[k] = Version(g, k);
          if (users[k] == 1) {
            plan.owned_slots.push_back(s);
          } else {
            plan.push.slots.push_back(s);
            plan.push.keys.push_back(k);
          }
        }
        plan::TableSamples& samples =
            (steps[t][w].samples.resize(num_tables), steps[t][w].samples[tb]);
        samples.offsets = slices[t][w].tables[tb].offsets;
        for (Key k : slices[t][w].tables[tb].keys) samples.slots.push_back(c.slot_of[k]);
      }
      // Training at t: owned rows move to their worker, shared rows to the PS.
      for (auto& [k, count] : users) {
        ++g.version[k];
        if (count == 1) {
          for (uint32_t w = 0; w < W; ++w) {
            if (std::find(used[w].begin(), used[w].end(), k) != used[w].end()) {
              g.holder[k] = static_cast<int>(w);
              cache[w][tb].copy_version[k] = g.version[k];
            }
          }
        } else {
          g.holder[k] = kPs;
          g.ps_changed[k] = t + 1;  // pushed
        }
      }
      // Communication plan: a dirty row goes back to the PS after t when
      // another worker uses it at t + 1, and every dirty row at the end.
      absl::flat_hash_map<Key, absl::flat_hash_set<uint32_t>> next_users;
      if (t + 1 < T) {
        for (uint32_t w = 0; w < W; ++w) {
          for (Key k : DistinctKeys(slices[t + 1][w], tb)) next_users[k].insert(w);
        }
      }
      for (uint32_t w = 0; w < W; ++w) {
        WorkerTable& c = cache[w][tb];
        plan::TablePlan& plan = steps[t][w].plan[tb];
        for (uint32_t s = 0; s < options.cache_slots; ++s) {
          if (!c.slot_used[s]) continue;
          const Key k = c.slot_key[s];
          if (Holder(g, k) != static_cast<int>(w)) continue;
          auto it = next_users.find(k);
          const bool others_next =
              it != next_users.end() && (it->second.size() > 1 || !it->second.contains(w));
          if (t + 1 == T || others_next) {
            plan.writeback.slots.push_back(s);
            plan.writeback.keys.push_back(k);
            g.holder[k] = kPs;
            g.ps_changed[k] = t + 1;
          }
        }
      }
    }
    for (uint32_t w = 0; w < W; ++w) {
      plan::Step& step = steps[t][w];
      step.job_id = options.job_id;
      step.iteration = t;
      step.num_samples = slices[t][w].num_samples;
      step.global_batch_size = batches[t].num_samples;
      step.labels = slices[t][w].labels;
      step.dense = slices[t][w].dense;
    }
  }
  return steps;
}

}  // namespace herald::worker::testing
