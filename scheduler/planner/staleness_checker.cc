#include "scheduler/planner/staleness_checker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "plan/table_plan.h"
#include "scheduler/planner/sample_reads.h"

namespace herald::scheduler {

StalenessChecker::StalenessChecker(uint32_t num_workers, std::vector<uint32_t> slots,
                                   uint32_t staleness)
    : num_workers_(num_workers),
      staleness_(staleness),
      caches_(num_workers, slots),
      global_(slots.size()),
      pending_(slots.size()),
      pushed_(slots.size()),
      trained_ever_(slots.size()),
      trained_now_(slots.size()) {}

absl::Status StalenessChecker::Violation(uint32_t w, uint32_t t, const std::string& what) const {
  return absl::FailedPreconditionError(absl::StrCat("staleness check failed at iteration ",
                                                    iteration_, ", worker ", w, ", table ", t, ": ",
                                                    what));
}

void StalenessChecker::Push(uint32_t t, Key key, uint64_t clock) {
  uint64_t& pending = pending_[t][key];
  pending = std::max(pending, clock);
}

absl::Status StalenessChecker::Land(uint32_t w, uint32_t t, const char* verb, uint32_t slot,
                                    Key key) {
  Cache& cache = caches_[w][t];
  if (slot >= cache.slots.size()) {
    return Violation(
        w, t, absl::StrCat(verb, " key ", key, " into slot ", slot, " of ", cache.slots.size()));
  }
  Copy& copy = cache.slots[slot];
  if (copy.state != State::kEmpty && copy.key != key) {
    return Violation(w, t,
                     absl::StrCat(verb, " key ", key, " into slot ", slot, " which holds key ",
                                  copy.key, " (not evicted)"));
  }
  if (copy.state == State::kHeld) {
    return Violation(w, t,
                     absl::StrCat(verb, " key ", key, " over its held copy in slot ", slot,
                                  ": the held gradients are lost"));
  }
  auto [it, inserted] = cache.slot_of.try_emplace(key, slot);
  if (!inserted && it->second != slot) {
    return Violation(w, t,
                     absl::StrCat(verb, " key ", key, " into slot ", slot, " while slot ",
                                  it->second, " holds it"));
  }
  const uint64_t clock = Global(t, key);
  copy = Copy{key, State::kClean, clock, clock};
  return absl::OkStatus();
}

absl::Status StalenessChecker::Check(const data::KeyBatch& batch, const IterationPlan& plan,
                                     std::vector<PlanCounts>* counts) {
  if (plan.workers.size() != num_workers_) {
    return Violation(
        0, 0, absl::StrCat(plan.workers.size(), " worker plans for ", num_workers_, " workers"));
  }
  counts->assign(num_workers_, PlanCounts());
  pushed_.NextIteration();
  // Every sample trained exactly once.
  if (absl::Status s = CheckSamplePartition(batch, plan); !s.ok()) {
    return Violation(0, 0, std::string(s.message()));
  }
  for (uint32_t t = 0; t < global_.size(); ++t) {
    for (uint32_t w = 0; w < num_workers_; ++w) {
      if (plan.workers[w].tables.size() != global_.size() ||
          plan.workers[w].slots.size() != global_.size()) {
        return Violation(w, t, "the plan does not have one entry per table");
      }
      if (auto s = Lists(w, t, batch, plan, &(*counts)[w]); !s.ok()) return s;
    }
  }
  // The commit: the PS's clocks move, and the next iteration's early
  // fetches must not read what this one pushed.
  for (uint32_t t = 0; t < global_.size(); ++t) {
    for (const auto& [key, clock] : pending_[t]) {
      uint64_t& global = global_[t][key];
      global = std::max(global, clock);
      pushed_.Changed(t, key);
    }
    pending_[t].clear();
    trained_ever_[t].insert(trained_now_[t].begin(), trained_now_[t].end());
    trained_now_[t].clear();
  }
  ++iteration_;
  return absl::OkStatus();
}

absl::Status StalenessChecker::Lists(uint32_t w, uint32_t t, const data::KeyBatch& batch,
                                     const IterationPlan& plan, PlanCounts* counts) {
  const plan::TablePlan& tp = plan.workers[w].tables[t];
  Cache& cache = caches_[w][t];
  // Lists policy het never uses.
  absl::Status unused;
  plan::ForEachList(tp, [&](const char* name, const auto& list, uint8_t) {
    using List = std::decay_t<decltype(list)>;
    bool empty;
    if constexpr (std::is_same_v<List, std::vector<uint32_t>>) {
      empty = list.empty();
    } else {
      empty = list.keys.empty();
    }
    const std::string n = name;
    const bool used =
        n == "evict" || n == "fetch" || n == "init" || n == "hold" || n == "push" || n == "flush";
    if (!used && !empty && unused.ok()) {
      unused = Violation(w, t, absl::StrCat("list ", name, " is not empty; policy het has none"));
    }
  });
  if (!unused.ok()) return unused;

  for (size_t i = 0; i < tp.evict.slots.size(); ++i) {
    const uint32_t slot = tp.evict.slots[i];
    const Key key = tp.evict.keys[i];
    if (slot >= cache.slots.size() || cache.slots[slot].state == State::kEmpty ||
        cache.slots[slot].key != key) {
      return Violation(
          w, t, absl::StrCat("evicts key ", key, " from slot ", slot, " which does not hold it"));
    }
    Copy& copy = cache.slots[slot];
    if (copy.state == State::kHeld) {
      Push(t, key, copy.current);  // its held gradients go to the PS
      ++counts->pushed;
    }
    cache.slot_of.erase(key);
    copy = Copy{};
  }
  absl::flat_hash_set<uint32_t> landed;
  for (size_t i = 0; i < tp.fetch.slots.size(); ++i) {
    const Key key = tp.fetch.keys[i];
    if (!tp.fetch.early.empty()) {
      if (std::string wrong = pushed_.CheckEarly(t, key, tp.fetch.early[i], iteration_);
          !wrong.empty()) {
        return Violation(w, t, absl::StrCat("fetch of key ", key, " ", wrong));
      }
    }
    if (auto s = Land(w, t, "fetches", tp.fetch.slots[i], key); !s.ok()) return s;
    landed.insert(tp.fetch.slots[i]);
    ++counts->fetched;
  }
  for (size_t i = 0; i < tp.init.slots.size(); ++i) {
    const Key key = tp.init.keys[i];
    if (trained_ever_[t].contains(key)) {
      return Violation(w, t,
                       absl::StrCat("initialises key ", key, " which an earlier plan trained"));
    }
    if (auto s = Land(w, t, "initialises", tp.init.slots[i], key); !s.ok()) return s;
    landed.insert(tp.init.slots[i]);
    ++counts->initialized;
  }
  if (auto s = Training(w, t, batch, plan, landed, counts); !s.ok()) return s;
  for (size_t i = 0; i < tp.flush.slots.size(); ++i) {
    const uint32_t slot = tp.flush.slots[i];
    const Key key = tp.flush.keys[i];
    if (slot >= cache.slots.size() || cache.slots[slot].key != key ||
        cache.slots[slot].state != State::kHeld) {
      return Violation(w, t,
                       absl::StrCat("flushes key ", key, " from slot ", slot,
                                    " which holds no held copy of it"));
    }
    Copy& copy = cache.slots[slot];
    Push(t, key, copy.current);
    copy.state = State::kOutdated;
    ++counts->pushed;
  }
  return absl::OkStatus();
}

absl::Status StalenessChecker::Training(uint32_t w, uint32_t t, const data::KeyBatch& batch,
                                        const IterationPlan& plan,
                                        const absl::flat_hash_set<uint32_t>& landed,
                                        PlanCounts* counts) {
  const WorkerPlan& wp = plan.workers[w];
  const plan::TablePlan& tp = wp.tables[t];
  Cache& cache = caches_[w][t];
  // Every read: the sample's key in a copy HET's CheckValid accepts.
  absl::flat_hash_set<uint32_t> referenced;
  const absl::Status reads =
      ForEachSampleRead(batch, wp, t, [&](uint32_t s, Key key, uint32_t slot) -> absl::Status {
        if (slot >= cache.slots.size() || cache.slots[slot].state == State::kEmpty ||
            cache.slots[slot].key != key) {
          return absl::InvalidArgumentError(absl::StrCat(
              "sample ", s, " reads key ", key, " from slot ", slot, " which does not hold it"));
        }
        if (!referenced.insert(slot).second) return absl::OkStatus();
        const Copy& copy = cache.slots[slot];
        if (copy.state == State::kOutdated) {
          return absl::InvalidArgumentError(
              absl::StrCat("sample ", s, " reads key ", key,
                           " from a copy whose gradients went to the PS (not fetched again)"));
        }
        const uint64_t global = Global(t, key);
        const uint64_t behind = global > copy.current ? global - copy.current : 0;
        max_behind_ = std::max(max_behind_, behind);
        if (copy.current > copy.start + staleness_ || behind > staleness_) {
          return absl::InvalidArgumentError(
              absl::StrCat("sample ", s, " reads key ", key, " whose copy is ",
                           copy.current - copy.start, " clocks past its fetch and ", behind,
                           " behind the global clock (staleness ", staleness_, ")"));
        }
        return absl::OkStatus();
      });
  if (!reads.ok()) return Violation(w, t, std::string(reads.message()));
  counts->uses += referenced.size();
  for (uint32_t slot : referenced) counts->hits += landed.contains(slot) ? 0 : 1;
  // Every trained row is either held or pushed, once.
  absl::flat_hash_set<uint32_t> written;
  auto writes = [&](const plan::SlotRows& list, bool hold) -> absl::Status {
    for (size_t i = 0; i < list.slots.size(); ++i) {
      const uint32_t slot = list.slots[i];
      const char* what = hold ? "hold" : "push";
      if (!referenced.contains(slot) || !written.insert(slot).second) {
        return Violation(
            w, t,
            absl::StrCat(what, " slot ", slot, " is not trained by the worker, or listed twice"));
      }
      Copy& copy = cache.slots[slot];
      if (copy.key != list.keys[i]) {
        return Violation(w, t, absl::StrCat(what, ".keys[", i, "] does not match its slot"));
      }
      ++copy.current;
      trained_now_[t].push_back(copy.key);
      if (!hold) {
        Push(t, copy.key, copy.current);
        copy.state = State::kOutdated;
        ++counts->pushed;
      } else if (copy.current > copy.start + staleness_) {
        return Violation(
            w, t,
            absl::StrCat("holds a write of key ", copy.key, " ", copy.current - copy.start,
                         " clocks past its fetch (staleness ", staleness_, "): it must be pushed"));
      } else {
        copy.state = State::kHeld;
      }
    }
    return absl::OkStatus();
  };
  if (auto s = writes(tp.hold, true); !s.ok()) return s;
  if (auto s = writes(tp.push, false); !s.ok()) return s;
  if (written.size() != referenced.size()) {
    return Violation(w, t,
                     absl::StrCat(referenced.size() - written.size(),
                                  " trained slots are neither held nor pushed"));
  }
  return absl::OkStatus();
}

absl::Status StalenessChecker::CheckFinal() const {
  for (uint32_t w = 0; w < num_workers_; ++w) {
    for (uint32_t t = 0; t < caches_[w].size(); ++t) {
      for (const Copy& copy : caches_[w][t].slots) {
        if (copy.state == State::kHeld) {
          return Violation(
              w, t, absl::StrCat("key ", copy.key, " still holds gradients the PS never received"));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace herald::scheduler
