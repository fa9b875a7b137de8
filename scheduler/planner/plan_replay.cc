#include "scheduler/planner/plan_replay.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "plan/table_plan.h"
#include "scheduler/planner/sample_reads.h"

namespace herald::scheduler {

PlanReplay::PlanReplay(uint32_t num_workers, std::vector<uint32_t> slots)
    : num_workers_(num_workers),
      caches_(num_workers, slots),
      truth_(slots.size()),
      trained_ever_(slots.size()),
      written_back_at_start_(slots.size()),
      fetched_(num_workers, std::vector<absl::flat_hash_set<Key>>(slots.size())),
      in_transit_(num_workers, std::vector<absl::flat_hash_map<Key, InTransit>>(slots.size())),
      served_landed_(num_workers, std::vector<std::vector<uint32_t>>(slots.size())),
      incoming_seen_(num_workers, std::vector<std::vector<size_t>>(
                                      slots.size(), std::vector<size_t>(num_workers, 0))),
      ps_changed_(slots.size()) {}

absl::Status PlanReplay::Violation(uint32_t w, uint32_t t, const std::string& what) const {
  return absl::FailedPreconditionError(absl::StrCat("plan check failed at iteration ", iteration_,
                                                    ", worker ", w, ", table ", t, ": ", what));
}

absl::Status PlanReplay::Drop(uint32_t w, uint32_t t, Key key) {
  auto it = truth_[t].find(key);
  if (it->second.copies > 0) return absl::OkStatus();
  if (it->second.ps_version != it->second.version) {
    return Violation(w, t,
                     absl::StrCat("key ", key, " left every cache while its newest version (",
                                  it->second.version, ") never reached the PS (",
                                  it->second.ps_version, "): an update is lost"));
  }
  truth_[t].erase(it);
  return absl::OkStatus();
}

absl::Status PlanReplay::Check(const data::KeyBatch& batch, const IterationPlan& plan,
                               std::vector<PlanCounts>* counts) {
  if (plan.workers.size() != num_workers_) {
    return Violation(
        0, 0, absl::StrCat(plan.workers.size(), " worker plans for ", num_workers_, " workers"));
  }
  counts->assign(num_workers_, PlanCounts());
  for (auto& tables : fetched_) {
    for (auto& keys : tables) keys.clear();
  }
  for (auto& keys : written_back_at_start_) keys.clear();
  for (auto& tables : served_landed_) {
    for (auto& slots : tables) slots.clear();
  }
  ps_changed_.NextIteration();
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (plan.workers[w].tables.size() != truth_.size()) {
      return Violation(w, 0,
                       absl::StrCat(plan.workers[w].tables.size(), " table plans for ",
                                    truth_.size(), " tables"));
    }
    for (uint32_t t = 0; t < truth_.size(); ++t) {
      if (auto s = plan::CheckShape(plan.workers[w].tables[t]); !s.ok()) {
        return Violation(w, t, std::string(s.message()));
      }
    }
  }
  if (auto s = Expiries(batch, plan); !s.ok()) return s;
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (auto s = Evictions(w, plan, counts); !s.ok()) return s;
  }
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (auto s = Fetches(w, plan, counts); !s.ok()) return s;
    if (auto s = Inits(w, plan, counts); !s.ok()) return s;
    if (auto s = Receives(w, plan); !s.ok()) return s;
  }
  for (uint32_t w = 0; w < num_workers_; ++w) {
    for (uint32_t t = 0; t < truth_.size(); ++t) {
      if (!in_transit_[w][t].empty()) {
        return Violation(w, t,
                         absl::StrCat("key ", in_transit_[w][t].begin()->first,
                                      " was handed off to the worker but not received"));
      }
    }
  }
  if (auto s = Training(batch, plan, counts); !s.ok()) return s;
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (auto s = WriteBacks(w, plan, counts); !s.ok()) return s;
  }
  for (auto& tables : incoming_seen_) {
    for (auto& from : tables) std::fill(from.begin(), from.end(), 0);
  }
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (auto s = Sends(w, plan, counts); !s.ok()) return s;
  }
  for (uint32_t w = 0; w < num_workers_; ++w) {
    if (auto s = Incoming(w, plan); !s.ok()) return s;
  }
  ++iteration_;
  return absl::OkStatus();
}

absl::Status PlanReplay::Expiries(const data::KeyBatch& batch, const IterationPlan& plan) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const std::vector<Key>& expired = batch.tables[t].expired;
    const absl::flat_hash_set<Key> expiring(expired.begin(), expired.end());
    absl::flat_hash_map<Key, uint32_t> listed;  // key -> the worker whose expire list has it
    for (uint32_t w = 0; w < num_workers_; ++w) {
      const plan::TablePlan& tp = plan.workers[w].tables[t];
      CacheTable& cache = caches_[w][t];
      for (size_t i = 0; i < tp.drop.slots.size(); ++i) {
        const uint32_t slot = tp.drop.slots[i];
        const Key key = tp.drop.keys[i];
        if (!expiring.contains(key)) {
          return Violation(w, t,
                           absl::StrCat("drops key ", key, " (slot ", slot,
                                        ") unwritten, but its row does not expire: an update "
                                        "would be lost"));
        }
        if (slot >= cache.slots.size() || cache.slots[slot].state == State::kEmpty ||
            cache.slots[slot].key != key) {
          return Violation(
              w, t,
              absl::StrCat("drops slot ", slot, " as key ", key, " but the slot does not hold it"));
        }
        cache.slots[slot].state = State::kEmpty;
        cache.slot_of.erase(key);
        --truth_[t][key].copies;
      }
      for (Key key : tp.expire.keys) {
        if (!expiring.contains(key)) {
          return Violation(w, t, absl::StrCat("expires key ", key, ", which the batch does not"));
        }
        if (auto [it, added] = listed.emplace(key, w); !added) {
          return Violation(w, t,
                           absl::StrCat("expires key ", key, ", as worker ", it->second,
                                        " does: the PS is told twice"));
        }
      }
    }
    for (Key key : expired) {
      if (!listed.contains(key)) {
        return Violation(0, t, absl::StrCat("expired key ", key, " is in no worker's expire list"));
      }
      auto it = truth_[t].find(key);
      if (it != truth_[t].end() && it->second.copies > 0) {
        return Violation(0, t, absl::StrCat("expired key ", key, " is still cached"));
      }
      for (uint32_t w = 0; w < num_workers_; ++w) {
        if (in_transit_[w][t].contains(key)) {
          return Violation(w, t, absl::StrCat("expired key ", key, " is in transit to the worker"));
        }
      }
      if (it != truth_[t].end()) truth_[t].erase(it);  // the PS's row goes: a new one follows
      ps_changed_.Changed(t, key);
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Evictions(uint32_t w, const IterationPlan& plan,
                                   std::vector<PlanCounts>* counts) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    CacheTable& cache = caches_[w][t];
    for (size_t i = 0; i < tp.evict.slots.size(); ++i) {
      const uint32_t slot = tp.evict.slots[i];
      const Key key = tp.evict.keys[i];
      if (slot >= cache.slots.size() || cache.slots[slot].state == State::kEmpty ||
          cache.slots[slot].key != key) {
        return Violation(
            w, t,
            absl::StrCat("evicts slot ", slot, " as key ", key, " but the slot does not hold it"));
      }
      Copy& copy = cache.slots[slot];
      Truth& truth = truth_[t][key];
      if (copy.state == State::kDirty) {
        if (copy.version != truth.version) {
          return Violation(w, t, absl::StrCat("dirty copy of key ", key, " is outdated"));
        }
        truth.ps_version = copy.version;
        written_back_at_start_[t][key] = w;
        ps_changed_.Changed(t, key);
        ++(*counts)[w].written_back;
      }
      copy.state = State::kEmpty;
      cache.slot_of.erase(key);
      --truth.copies;
      if (auto s = Drop(w, t, key); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Landing(uint32_t w, uint32_t t, const char* verb, uint32_t slot,
                                 Key key) const {
  const CacheTable& cache = caches_[w][t];
  if (slot >= cache.slots.size()) {
    return Violation(w, t, absl::StrCat(verb, " key ", key, " into slot ", slot, " out of range"));
  }
  const Copy& copy = cache.slots[slot];
  if (copy.state != State::kEmpty && copy.key != key) {
    return Violation(
        w, t, absl::StrCat(verb, " key ", key, " into slot ", slot, " which holds key ", copy.key));
  }
  if (copy.state == State::kDirty) {
    return Violation(w, t, absl::StrCat(verb, " key ", key, " over its dirty copy"));
  }
  auto held = cache.slot_of.find(key);
  if (held != cache.slot_of.end() && held->second != slot) {
    return Violation(w, t,
                     absl::StrCat(verb, " key ", key, " into slot ", slot, " while slot ",
                                  held->second, " holds it"));
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::LandClean(uint32_t w, uint32_t t, uint32_t slot, Key key) {
  if (!fetched_[w][t].insert(key).second) {
    return Violation(w, t, absl::StrCat("brings key ", key, " in twice"));
  }
  CacheTable& cache = caches_[w][t];
  Truth& truth = truth_[t][key];
  Copy& copy = cache.slots[slot];
  if (copy.state == State::kEmpty) {
    ++truth.copies;
    cache.slot_of[key] = slot;
  }
  copy = Copy{key, State::kClean, truth.ps_version};
  return absl::OkStatus();
}

absl::Status PlanReplay::Fetches(uint32_t w, const IterationPlan& plan,
                                 std::vector<PlanCounts>* counts) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    if (tp.fetch.early.size() != tp.fetch.keys.size()) {
      return Violation(w, t, "fetch.early: the planner gives one distance per fetch");
    }
    for (size_t i = 0; i < tp.fetch.slots.size(); ++i) {
      const uint32_t slot = tp.fetch.slots[i];
      const Key key = tp.fetch.keys[i];
      if (auto s = Landing(w, t, "fetches", slot, key); !s.ok()) return s;
      auto racing = written_back_at_start_[t].find(key);
      if (racing != written_back_at_start_[t].end()) {
        return Violation(w, t,
                         absl::StrCat("fetch of key ", key, " races the write-back of ",
                                      "its dirty copy evicted by worker ", racing->second));
      }
      if (std::string wrong = ps_changed_.CheckEarly(t, key, tp.fetch.early[i], iteration_);
          !wrong.empty()) {
        return Violation(w, t, absl::StrCat("fetch of key ", key, " ", wrong));
      }
      if (auto s = LandClean(w, t, slot, key); !s.ok()) return s;
      ++(*counts)[w].fetched;
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Inits(uint32_t w, const IterationPlan& plan,
                               std::vector<PlanCounts>* counts) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    for (size_t i = 0; i < tp.init.slots.size(); ++i) {
      const uint32_t slot = tp.init.slots[i];
      const Key key = tp.init.keys[i];
      if (auto s = Landing(w, t, "initialises", slot, key); !s.ok()) return s;
      if (trained_ever_[t].contains(key)) {
        return Violation(w, t,
                         absl::StrCat("initialises key ", key,
                                      ", which was trained before: its values are not the "
                                      "initial ones"));
      }
      if (auto s = LandClean(w, t, slot, key); !s.ok()) return s;
      ++(*counts)[w].initialized;
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Training(const data::KeyBatch& batch, const IterationPlan& plan,
                                  std::vector<PlanCounts>* counts) {
  // Every sample trained exactly once.
  if (absl::Status s = CheckSamplePartition(batch, plan); !s.ok()) {
    return Violation(0, 0, std::string(s.message()));
  }
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    enum class Kind : uint8_t { kOwned, kShared, kRemote };
    struct Trainer {
      uint32_t worker, slot;
      Kind kind;
      uint32_t owner;  // kRemote: the worker its gradient goes to
    };
    const char* kind_name[] = {"owned", "shared", "remote"};
    absl::flat_hash_map<Key, std::vector<Trainer>> trainers;
    std::vector<Key> order;  // keys in first-training order, for deterministic messages
    for (uint32_t w = 0; w < num_workers_; ++w) {
      const WorkerPlan& wp = plan.workers[w];
      const plan::TablePlan& tp = wp.tables[t];
      CacheTable& cache = caches_[w][t];
      absl::flat_hash_set<uint32_t> referenced;
      const absl::Status reads =
          ForEachSampleRead(batch, wp, t, [&](uint32_t s, Key key, uint32_t slot) {
            if (slot >= cache.slots.size() || cache.slots[slot].state == State::kEmpty ||
                cache.slots[slot].key != key) {
              return absl::InvalidArgumentError(absl::StrCat("sample ", s, " reads key ", key,
                                                             " from slot ", slot,
                                                             " which does not hold it"));
            }
            referenced.insert(slot);
            return absl::OkStatus();
          });
      if (!reads.ok()) return Violation(w, t, std::string(reads.message()));
      size_t listed = 0;
      auto list = [&](const std::vector<uint32_t>& slots, const std::vector<Key>* keys,
                      Kind kind) -> absl::Status {
        for (size_t i = 0; i < slots.size(); ++i) {
          const uint32_t slot = slots[i];
          if (!referenced.contains(slot)) {
            return Violation(
                w, t,
                absl::StrCat("slot ", slot, " listed as ", kind_name[static_cast<int>(kind)],
                             " but no sample of the worker uses it"));
          }
          if (keys != nullptr && (*keys)[i] != cache.slots[slot].key) {
            return Violation(w, t,
                             absl::StrCat(kind_name[static_cast<int>(kind)], "_keys[", i,
                                          "] does not match its slot"));
          }
          const Key key = cache.slots[slot].key;
          auto [it, inserted] = trainers.try_emplace(key);
          if (inserted) order.push_back(key);
          for (const Trainer& other : it->second) {
            if (other.worker == w) {
              return Violation(w, t, absl::StrCat("key ", key, " listed twice"));
            }
          }
          const uint32_t owner = kind == Kind::kRemote ? tp.remote.peers[i] : w;
          it->second.push_back(Trainer{w, slot, kind, owner});
          ++listed;
        }
        return absl::OkStatus();
      };
      if (auto s = list(tp.owned_slots, nullptr, Kind::kOwned); !s.ok()) return s;
      if (auto s = list(tp.push.slots, &tp.push.keys, Kind::kShared); !s.ok()) return s;
      if (auto s = list(tp.remote.slots, &tp.remote.keys, Kind::kRemote); !s.ok()) return s;
      if (listed != referenced.size()) {
        return Violation(w, t,
                         absl::StrCat(referenced.size() - listed,
                                      " used slots are neither owned, shared nor remote"));
      }
    }
    if (auto s = Gathers(t, plan); !s.ok()) return s;
    for (Key key : order) {
      const std::vector<Trainer>& list = trainers[key];
      Truth& truth = truth_[t][key];
      trained_ever_[t].insert(key);
      // Who applies the key's update: the PS (every trainer shared), the
      // one owner (every other trainer remote to it), else a violation.
      size_t owners = 0, remotes = 0;
      for (const Trainer& tr : list) {
        owners += tr.kind == Kind::kOwned;
        remotes += tr.kind == Kind::kRemote;
      }
      for (const Trainer& tr : list) {
        const Copy& copy = caches_[tr.worker][t].slots[tr.slot];
        if (copy.state == State::kStale || copy.version != truth.version) {
          return Violation(
              tr.worker, t,
              absl::StrCat("trains key ", key, " on an outdated copy (version ", copy.version,
                           ", newest ", truth.version, ", PS has ", truth.ps_version, ")"));
        }
        if (copy.state == State::kServed && tr.kind != Kind::kRemote) {
          return Violation(tr.worker, t,
                           absl::StrCat("trains the served copy of key ", key, " as ",
                                        kind_name[static_cast<int>(tr.kind)],
                                        "; its gradients must go to its owner"));
        }
        ++(*counts)[tr.worker].uses;
        if (!fetched_[tr.worker][t].contains(key)) ++(*counts)[tr.worker].hits;
        if (tr.kind == Kind::kOwned && list.size() > 1 &&
            (owners != 1 || owners + remotes != list.size())) {
          return Violation(tr.worker, t,
                           absl::StrCat("owns key ", key, " which ", list.size(),
                                        " workers train, not all sending it their gradients: "
                                        "updates would be lost"));
        }
        if (tr.kind == Kind::kRemote &&
            (owners != 1 || remotes + 1 != list.size() ||
             std::none_of(list.begin(), list.end(), [&](const Trainer& o) {
               return o.kind == Kind::kOwned && o.worker == tr.owner;
             }))) {
          return Violation(tr.worker, t,
                           absl::StrCat("sends its gradient of key ", key, " to worker ", tr.owner,
                                        ", which does not own it this iteration"));
        }
      }
      if (owners == 1) {
        // The owner applies every trainer's gradient; the others' copies
        // are outdated afterwards.
        for (const Trainer& tr : list) {
          Copy& copy = caches_[tr.worker][t].slots[tr.slot];
          if (tr.kind == Kind::kOwned) {
            copy.version = truth.version + 1;
            copy.state = State::kDirty;
          } else {
            copy.state = State::kStale;
            ++(*counts)[tr.worker].transferred;
            ++(*counts)[tr.worker].owner_gradients;
          }
        }
        ++truth.version;
        continue;
      }
      if (truth.ps_version != truth.version) {
        return Violation(list[0].worker, t,
                         absl::StrCat("gradients of key ", key, " go to the PS whose copy is ",
                                      "outdated (the newest is dirty in a cache)"));
      }
      truth.ps_version = ++truth.version;
      ps_changed_.Changed(t, key);
      for (const Trainer& tr : list) {
        caches_[tr.worker][t].slots[tr.slot].state = State::kStale;
        ++(*counts)[tr.worker].pushed;
      }
    }
    for (uint32_t w = 0; w < num_workers_; ++w) {
      for (uint32_t slot : served_landed_[w][t]) {
        if (caches_[w][t].slots[slot].state == State::kServed) {
          return Violation(w, t,
                           absl::StrCat("key ", caches_[w][t].slots[slot].key,
                                        " was served to the worker, which does not train it"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Gathers(uint32_t t, const IterationPlan& plan) const {
  for (uint32_t owner = 0; owner < num_workers_; ++owner) {
    const plan::TablePlan& tp = plan.workers[owner].tables[t];
    std::vector<size_t> at(num_workers_, 0);  // per sender: its remote entries matched so far
    for (size_t i = 0; i < tp.gather.slots.size(); ++i) {
      const uint32_t from = tp.gather.peers[i];
      const Key key = tp.gather.keys[i];
      if (from >= num_workers_ || from == owner) {
        return Violation(owner, t, absl::StrCat("gathers key ", key, " from worker ", from));
      }
      const plan::TablePlan& sender = plan.workers[from].tables[t];
      size_t& next = at[from];
      while (next < sender.remote.keys.size() && sender.remote.peers[next] != owner) ++next;
      if (next == sender.remote.keys.size() || sender.remote.keys[next] != key) {
        return Violation(owner, t,
                         absl::StrCat("gathers key ", key, " from worker ", from,
                                      " which does not send it next"));
      }
      ++next;
      const CacheTable& cache = caches_[owner][t];
      auto held = cache.slot_of.find(key);
      if (held == cache.slot_of.end() || held->second != tp.gather.slots[i]) {
        return Violation(owner, t,
                         absl::StrCat("gathers key ", key, " into slot ", tp.gather.slots[i],
                                      " which does not hold it"));
      }
    }
    for (uint32_t from = 0; from < num_workers_; ++from) {
      const plan::TablePlan& sender = plan.workers[from].tables[t];
      for (size_t j = at[from]; j < sender.remote.keys.size(); ++j) {
        if (sender.remote.peers[j] == owner) {
          return Violation(from, t,
                           absl::StrCat("sends its gradient of key ", sender.remote.keys[j],
                                        " to worker ", owner, ", which does not gather it"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::WriteBacks(uint32_t w, const IterationPlan& plan,
                                    std::vector<PlanCounts>* counts) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    CacheTable& cache = caches_[w][t];
    for (size_t i = 0; i < tp.writeback.slots.size(); ++i) {
      const uint32_t slot = tp.writeback.slots[i];
      const Key key = tp.writeback.keys[i];
      if (slot >= cache.slots.size() || cache.slots[slot].key != key ||
          cache.slots[slot].state != State::kDirty) {
        return Violation(w, t,
                         absl::StrCat("writes back key ", key, " from slot ", slot,
                                      " which does not hold it dirty"));
      }
      Copy& copy = cache.slots[slot];
      truth_[t][key].ps_version = copy.version;
      ps_changed_.Changed(t, key);
      copy.state = State::kClean;
      ++(*counts)[w].written_back;
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Sends(uint32_t w, const IterationPlan& plan,
                               std::vector<PlanCounts>* counts) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    CacheTable& cache = caches_[w][t];
    for (size_t i = 0; i < tp.send.slots.size(); ++i) {
      const uint32_t slot = tp.send.slots[i];
      const Key key = tp.send.keys[i];
      const uint32_t to = tp.send.peers[i];
      const bool served = tp.send.Served(i);
      if (slot >= cache.slots.size() || cache.slots[slot].key != key ||
          cache.slots[slot].state != State::kDirty) {
        return Violation(w, t,
                         absl::StrCat("hands off key ", key, " from slot ", slot,
                                      " which does not hold it dirty"));
      }
      if (to >= num_workers_ || to == w) {
        return Violation(w, t, absl::StrCat("hands off key ", key, " to worker ", to));
      }
      // The receiver must expect exactly this row next from this sender.
      const plan::TablePlan& receiver = plan.workers[to].tables[t];
      size_t& next = incoming_seen_[to][t][w];
      while (next < receiver.incoming.keys.size() && receiver.incoming.peers[next] != w) ++next;
      if (next == receiver.incoming.keys.size() || receiver.incoming.keys[next] != key ||
          receiver.incoming.Served(next) != served) {
        return Violation(w, t,
                         absl::StrCat(served ? "serves" : "hands off", " key ", key, " to worker ",
                                      to, " whose incoming list does not expect it next"));
      }
      ++next;
      Copy& copy = cache.slots[slot];
      Truth& truth = truth_[t][key];
      if (copy.version != truth.version) {
        return Violation(w, t, absl::StrCat("hands off an outdated copy of key ", key));
      }
      if (!in_transit_[to][t].emplace(key, InTransit{copy.version, served}).second) {
        return Violation(w, t, absl::StrCat("key ", key, " sent twice to worker ", to));
      }
      ++truth.copies;  // the copy in transit
      ++(*counts)[w].transferred;
      if (served) {
        ++(*counts)[w].served_copies;  // the sender keeps it dirty
      } else {
        copy.state = State::kClean;  // the receiver's to write back now
        ++(*counts)[w].handoffs;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Incoming(uint32_t w, const IterationPlan& plan) const {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    if (tp.incoming.keys.size() != in_transit_[w][t].size()) {
      return Violation(w, t,
                       absl::StrCat("expects ", tp.incoming.keys.size(), " incoming rows, ",
                                    in_transit_[w][t].size(), " are sent to it"));
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::Receives(uint32_t w, const IterationPlan& plan) {
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    const plan::TablePlan& tp = plan.workers[w].tables[t];
    CacheTable& cache = caches_[w][t];
    for (size_t i = 0; i < tp.receive.slots.size(); ++i) {
      const uint32_t slot = tp.receive.slots[i];
      const Key key = tp.receive.keys[i];
      auto sent = in_transit_[w][t].find(key);
      if (sent == in_transit_[w][t].end()) {
        return Violation(w, t, absl::StrCat("receives key ", key, " which no worker handed off"));
      }
      if (tp.receive.Served(i) != sent->second.served) {
        return Violation(w, t,
                         absl::StrCat("receives key ", key,
                                      sent->second.served ? " as handed off, but it was served"
                                                          : " as served, but it was handed off"));
      }
      if (auto s = Landing(w, t, "receives", slot, key); !s.ok()) return s;
      Copy& copy = cache.slots[slot];
      if (!fetched_[w][t].insert(key).second) {
        return Violation(w, t, absl::StrCat("key ", key, " both fetched and received"));
      }
      Truth& truth = truth_[t][key];
      if (copy.state == State::kEmpty) {
        cache.slot_of[key] = slot;  // the copy in transit lands: copies unchanged
      } else {
        --truth.copies;  // it replaces the outdated copy
      }
      copy = Copy{key, sent->second.served ? State::kServed : State::kDirty, sent->second.version};
      if (sent->second.served) served_landed_[w][t].push_back(slot);
      in_transit_[w][t].erase(sent);
    }
  }
  return absl::OkStatus();
}

absl::Status PlanReplay::CheckFinal() const {
  for (uint32_t w = 0; w < num_workers_; ++w) {
    for (uint32_t t = 0; t < truth_.size(); ++t) {
      if (!in_transit_[w][t].empty()) {
        return absl::FailedPreconditionError(absl::StrCat("after the last iteration, table ", t,
                                                          " key ", in_transit_[w][t].begin()->first,
                                                          " is still in transit to worker ", w));
      }
    }
  }
  for (uint32_t t = 0; t < truth_.size(); ++t) {
    for (const auto& [key, truth] : truth_[t]) {
      if (truth.ps_version != truth.version) {
        return absl::FailedPreconditionError(
            absl::StrCat("after the last iteration, table ", t, " key ", key,
                         " has its newest version only in a cache: it was never written back"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace herald::scheduler
