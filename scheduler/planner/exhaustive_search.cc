#include "scheduler/planner/exhaustive_search.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace herald::scheduler {

uint64_t Transmissions(const IterationPlan& plan) {
  uint64_t total = 0;
  for (const WorkerPlan& w : plan.workers) {
    total += w.counts.fetched + w.counts.pushed + w.counts.written_back;
  }
  return total;
}

namespace {

class Search {
 public:
  Search(const ExhaustiveOptions& options, const std::vector<data::KeyBatch>& batches)
      : options_(options), batches_(batches), chosen_(batches.size()) {
    ComputeRemainingBounds();
  }

  // Explores every allocation of batches [k, K) given `planner`, which has
  // planned batches [0, k − 1) and holds batch k − 1's allocation.
  absl::Status Explore(size_t k, std::unique_ptr<Planner> planner, uint64_t cost) {
    const size_t K = batches_.size();
    if (k == K) {  // the last batch: no read-ahead, every dirty row flushed
      auto plan = PlanOne(planner.get(), K - 1, nullptr);
      if (!plan.ok()) return plan.status();
      const uint64_t total = cost + *plan;
      if (total < best_) {
        best_ = total;
        best_allocation_ = chosen_;
      }
      return absl::OkStatus();
    }
    std::vector<uint32_t> worker_of(options_.planner.num_workers);
    std::iota(worker_of.begin(), worker_of.end(), 0);
    do {
      std::unique_ptr<Planner> child = planner->Clone();
      child->ForceAllocation(worker_of);
      chosen_[k] = worker_of;
      auto plan = PlanOne(child.get(), k - 1, &batches_[k]);
      if (!plan.ok()) return plan.status();
      const uint64_t so_far = cost + *plan;
      if (!options_.prune || so_far + remaining_bound_[k] < best_) {
        if (auto s = Explore(k + 1, std::move(child), so_far); !s.ok()) return s;
      }
    } while (std::next_permutation(worker_of.begin(), worker_of.end()));
    return absl::OkStatus();
  }

  void set_bound(uint64_t bound) { best_ = bound; }
  uint64_t best() const { return best_; }
  const std::vector<std::vector<uint32_t>>& best_allocation() const { return best_allocation_; }
  std::vector<std::vector<uint32_t>>* chosen() { return &chosen_; }
  uint64_t plans() const { return plans_; }

 private:
  // remaining_bound_[k]: transmissions batches [k, K) cost under any
  // allocation, at least: a row first used in batch b ≥ k is fetched in b,
  // and every row trained in [k, K) reaches the PS after its training
  // (pushed or written back), both counted at or after its batch.
  void ComputeRemainingBounds() {
    const size_t K = batches_.size();
    remaining_bound_.assign(K + 1, 0);
    absl::flat_hash_set<std::pair<size_t, Key>> seen_before;  // rows of batches < b
    std::vector<uint64_t> first_uses(K, 0);
    for (size_t b = 0; b < K; ++b) {
      for (size_t t = 0; t < batches_[b].tables.size(); ++t) {
        for (Key key : batches_[b].tables[t].keys) {
          if (seen_before.insert({t, key}).second) ++first_uses[b];
        }
      }
    }
    absl::flat_hash_set<std::pair<size_t, Key>> trained_after;  // rows of batches ≥ b
    uint64_t first_uses_after = 0;
    for (size_t b = K; b-- > 0;) {
      for (size_t t = 0; t < batches_[b].tables.size(); ++t) {
        for (Key key : batches_[b].tables[t].keys) trained_after.insert({t, key});
      }
      first_uses_after += first_uses[b];
      remaining_bound_[b] = trained_after.size() + first_uses_after;
    }
  }

  absl::StatusOr<uint64_t> PlanOne(Planner* planner, size_t b, const data::KeyBatch* next) {
    if (++plans_ > options_.max_plans) {
      return absl::ResourceExhaustedError(
          absl::StrCat("exhaustive search: more than ", options_.max_plans, " plans for ",
                       options_.planner.num_workers, " workers × ", batches_.size(), " batches"));
    }
    auto plan = planner->Plan(batches_[b], next);
    if (!plan.ok()) return plan.status();
    return Transmissions(*plan);
  }

  const ExhaustiveOptions& options_;
  const std::vector<data::KeyBatch>& batches_;
  std::vector<std::vector<uint32_t>> chosen_, best_allocation_;
  std::vector<uint64_t> remaining_bound_;
  uint64_t best_ = UINT64_MAX;
  uint64_t plans_ = 0;
};

}  // namespace

absl::StatusOr<uint64_t> PolicyTransmissions(const PlannerOptions& options,
                                             const std::vector<data::KeyBatch>& batches) {
  auto planner = Planner::Create(options);
  if (!planner.ok()) return planner.status();
  uint64_t total = 0;
  for (size_t b = 0; b < batches.size(); ++b) {
    auto plan = (*planner)->Plan(batches[b], b + 1 < batches.size() ? &batches[b + 1] : nullptr);
    if (!plan.ok()) return plan.status();
    total += Transmissions(*plan);
  }
  return total;
}

absl::StatusOr<ExhaustiveResult> SearchOptimalAllocation(
    const ExhaustiveOptions& options, const std::vector<data::KeyBatch>& batches) {
  const uint32_t W = options.planner.num_workers;
  if (batches.empty()) return absl::InvalidArgumentError("exhaustive search: no batches");
  if (W == 0 || W > kMaxExhaustiveWorkers) {
    return absl::InvalidArgumentError(
        absl::StrCat("exhaustive search: ", W, " workers, want 1..", kMaxExhaustiveWorkers));
  }
  for (size_t b = 0; b < batches.size(); ++b) {
    if (batches[b].num_samples != W) {
      return absl::InvalidArgumentError(absl::StrCat("exhaustive search: batch ", b, " has ",
                                                     batches[b].num_samples,
                                                     " samples, want one per worker (", W, ")"));
    }
  }
  ExhaustiveResult result;
  auto heuristic = PolicyTransmissions(options.planner, batches);
  if (!heuristic.ok()) return heuristic.status();
  result.heuristic = *heuristic;

  auto root = Planner::Create(options.planner);
  if (!root.ok()) return root.status();
  std::vector<uint32_t> identity(W);
  std::iota(identity.begin(), identity.end(), 0);
  (*root)->ForceAllocation(identity);
  Search search(options, batches);
  (*search.chosen())[0] = identity;
  // The bound: the heuristic's cost + 1 so that an equal optimum is found.
  if (options.prune) search.set_bound(result.heuristic + 1);
  if (auto s = search.Explore(1, std::move(*root), 0); !s.ok()) return s;
  if (search.best_allocation().empty()) {
    return absl::InternalError("exhaustive search found no allocation as good as the policy's");
  }
  result.optimum = search.best();
  result.allocation = search.best_allocation();
  result.plans = search.plans();
  return result;
}

}  // namespace herald::scheduler
