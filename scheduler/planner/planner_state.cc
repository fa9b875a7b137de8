// Planner::SaveState and Planner::LoadState: the planner's state between two
// plans as bytes, so a checkpoint can hold it and a restarted scheduler
// continue planning where the checkpoint's run stood, without replaying the
// iterations before it.
//
// Layout (state_io.h encodings, in this order): the header (magic, version,
// byte-order mark), the shaping options by name, the iteration planned
// next and the read-ahead flags, the directories (per table), the caches
// (per worker, per table), the read-ahead batch's index, allocation and
// users, the batch after it's index, the trained-row filters (per table)
// and herald-adaptive's profiler, and policy het's clocks (per table).

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/state_io.h"
#include "common/status.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {
namespace {

constexpr char kMagic[8] = {'H', 'R', 'L', 'D', 'P', 'L', 'A', 'N'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kByteOrderMark = 0x01020304;

// The options that shape a planner's state and plans, by name, as numbers
// (threads only change how fast it plans; warm keys only iteration 0,
// which a saved planner is past or at with them given again).
std::vector<std::pair<std::string, std::vector<uint64_t>>> ShapingOptions(const PlannerOptions& o) {
  auto widen = [](const auto& values) {
    return std::vector<uint64_t>(values.begin(), values.end());
  };
  uint64_t budget_bits;
  std::memcpy(&budget_bits, &o.adaptive.budget_ms, sizeof(budget_bits));
  uint64_t base_bits, score_bits;
  std::memcpy(&base_bits, &o.adaptive.base_ns_per_use, sizeof(base_bits));
  std::memcpy(&score_bits, &o.adaptive.score_ns_per_use, sizeof(score_bits));
  std::vector<std::pair<std::string, std::vector<uint64_t>>> shaping = {
      {"policy.allocation", {static_cast<uint64_t>(o.policy.allocation)}},
      {"policy.sync", {static_cast<uint64_t>(o.policy.sync)}},
      {"policy.keep_cache", {o.policy.keep_cache}},
      {"policy.adaptive_tables", {o.policy.adaptive_tables}},
      {"num_workers", {o.num_workers}},
      {"capacity", widen(o.capacity)},
      {"slots", widen(o.slots)},
      {"eviction", {static_cast<uint64_t>(o.eviction)}},
      {"seed", {o.seed}},
      {"adaptive",
       {o.adaptive.top_k, budget_bits, o.adaptive.profile_every, base_bits, score_bits,
        o.adaptive.sketch_width}},
      {"handoff", {o.handoff}},
      {"serve", {o.serve}},
      {"init_on_worker", {o.init_on_worker}},
      {"trained_filter_bits", {o.init_on_worker ? o.trained_filter_bits : 0}},
      {"allocation_passes", {o.allocation_passes}},
      {"flush_every", o.flush_every},
  };
  // Each only where it applies, so states saved before it existed still
  // load: staleness with policy het, flushes before new files with
  // eval.each_file.
  if (o.policy.sync == SyncMode::kStale) shaping.push_back({"staleness", {o.staleness}});
  if (o.flush_before_new_files) shaping.push_back({"flush_before_new_files", {1}});
  return shaping;
}

}  // namespace

absl::StatusOr<std::string> Planner::SaveState() const {
  if (!failed_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("a planner stopped by an error has no state to save: ", failed_.message()));
  }
  StateWriter out;
  out.Pod(kMagic);
  out.Pod(kVersion);
  out.Pod(kByteOrderMark);
  const auto shaping = ShapingOptions(options_);
  out.Pod<uint64_t>(shaping.size());
  for (const auto& [name, values] : shaping) out.Vec(values);
  out.Pod(iteration_);
  out.Pod<uint8_t>(have_next_);
  out.Pod<uint8_t>(have_after_);
  out.Pod<uint8_t>(next_users_ready_);
  for (const RowDirectory& dir : directory_) dir.Save(&out);
  for (const auto& tables : caches_) {
    for (const CacheLayout& cache : tables) cache.Save(&out);
  }
  if (have_next_) {
    next_.Save(&out);
    out.Vec(next_worker_of_);
  }
  if (next_users_ready_) {
    out.Vec(next_users_);
    out.Vec(next_sole_);
    for (const auto& tables : next_needed_) out.Vecs(tables);
  }
  if (have_after_) after_.Save(&out);
  for (const TrainedFilter& filter : trained_) filter.Save(&out);
  if (profiler_) profiler_->Save(&out);
  for (const StaleCopies& copies : stale_) copies.Save(&out);
  return out.Take();
}

absl::StatusOr<std::unique_ptr<Planner>> Planner::LoadState(PlannerOptions options,
                                                            std::string_view bytes) {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<Planner> p, Create(std::move(options)));
  StateReader in(bytes);
  char magic[sizeof(kMagic)];
  uint32_t version, byte_order;
  if (in.Pod("magic", &magic) && std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    in.Invalid("magic", "not a planner's state");
  }
  if (in.Pod("version", &version) && version != kVersion) {
    in.Invalid("version", absl::StrCat(version, ", this scheduler reads version ", kVersion));
  }
  if (in.Pod("byte_order", &byte_order) && byte_order != kByteOrderMark) {
    in.Invalid("byte_order", "saved on a machine of another byte order");
  }
  const auto shaping = ShapingOptions(p->options_);
  uint64_t num_shaping = 0;
  if (in.Pod("options", &num_shaping) && num_shaping != shaping.size()) {
    in.Invalid("options", absl::StrCat(num_shaping, " options, want ", shaping.size()));
  }
  for (const auto& [name, want] : shaping) {
    std::vector<uint64_t> saved;
    if (!in.Vec("options", &saved)) break;
    if (saved != want) {
      return absl::InvalidArgumentError(
          absl::StrCat("planner state saved with ", name, " = [", absl::StrJoin(saved, ", "),
                       "], this planner's is [", absl::StrJoin(want, ", "), "]"));
    }
  }
  uint64_t iteration = 0;
  if (in.Pod("iteration", &iteration) && iteration != p->options_.first_iteration) {
    return absl::InvalidArgumentError(absl::StrCat("planner state saved before iteration ",
                                                   iteration, ", the planner's first_iteration is ",
                                                   p->options_.first_iteration));
  }
  auto flag = [&](const char* field, bool* value) {
    uint8_t byte = 0;
    if (in.Pod(field, &byte) && byte > 1) in.Invalid(field, absl::StrCat(byte, " is not a flag"));
    *value = byte == 1;
  };
  flag("have_next", &p->have_next_);
  flag("have_after", &p->have_after_);
  flag("next_users_ready", &p->next_users_ready_);
  if (in.status().ok() && (p->have_after_ || p->next_users_ready_) && !p->have_next_) {
    in.Invalid("have_next", "state of a read-ahead batch without one");
  }
  for (RowDirectory& dir : p->directory_) {
    if (!dir.Load(&in)) break;
  }
  for (uint32_t w = 0; w < p->options_.num_workers && in.status().ok(); ++w) {
    for (uint32_t t = 0; t < p->num_tables_; ++t) {
      if (!p->caches_[w][t].Load(&in, p->directory_[t].num_handles())) break;
    }
  }
  if (p->have_next_ && p->next_.Load(&in, p->directory_) &&
      in.Vec("next_worker_of", &p->next_worker_of_)) {
    if (p->next_worker_of_.size() != p->next_.num_samples()) {
      in.Invalid("next_worker_of", "not one worker per sample of the read-ahead batch");
    }
    for (uint32_t w : p->next_worker_of_) {
      if (w >= p->options_.num_workers) in.Invalid("next_worker_of", "a worker out of range");
    }
  }
  if (p->next_users_ready_ && in.Vec("next_users", &p->next_users_) &&
      in.Vec("next_sole", &p->next_sole_)) {
    p->next_needed_.assign(p->options_.num_workers, {});
    for (auto& tables : p->next_needed_) {
      if (!in.Vecs("next_needed", &tables)) break;
      if (tables.size() != p->num_tables_) {
        in.Invalid("next_needed", "not one list per table");
        break;
      }
      for (const auto& ids : tables) {
        for (uint32_t id : ids) {
          if (id >= p->next_.num_ids()) in.Invalid("next_needed", "an id out of range");
        }
      }
    }
    if (p->next_users_.size() != p->next_.num_ids() || p->next_sole_.size() != p->next_.num_ids()) {
      in.Invalid("next_users", "not one entry per id of the read-ahead batch");
    }
  }
  if (p->have_after_) p->after_.Load(&in, p->directory_);
  for (TrainedFilter& filter : p->trained_) {
    if (!filter.Load(&in)) break;
  }
  if (p->profiler_) p->profiler_->Load(&in);
  for (StaleCopies& copies : p->stale_) {
    if (!copies.Load(&in)) break;
  }
  if (in.status().ok() && !in.AtEnd()) {
    in.Invalid("end", absl::StrCat(bytes.size() - in.offset(), " bytes after the state"));
  }
  if (!in.status().ok()) return in.status();
  return p;
}

}  // namespace herald::scheduler
