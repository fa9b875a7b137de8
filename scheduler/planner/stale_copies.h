#pragma once
// HET's per-embedding clocks (../shared/papers/het-vldb-2022.txt, §3.1),
// as the planner keeps them for policy het (SyncMode::kStale), for one
// table: every row has a global clock c_g, every cached copy a start clock
// c_s (the global clock when it was fetched) and a current clock c_c (c_s
// plus the copy's own updates). A copy is valid while
//   c_c ≤ c_s + s   and   c_g ≤ c_c + s            (HET's CheckValid)
// for the staleness s. A worker trains its valid copy and holds the
// gradient (a stale write); the held gradients reach the PS when the copy
// is evicted or invalidated, and the PS's clock becomes max(c_g, c_c).
//
// Herald plans these rules iteration by iteration against a BSP parameter
// server, so each rule acts at a definite iteration:
//  * a write that would take c_c past c_s + s is pushed at once with what
//    the copy held (the copy is then outdated and fetched again when next
//    read): with s = 0 every write is, which is vanilla;
//  * a held copy its worker reads at t + 1 and that c_g would invalidate
//    then is flushed after training at t (the planner reads one batch
//    ahead), so the fetch at t + 1 sees its updates (read-my-updates);
//  * the global clocks move when an iteration commits (Commit): a fetch at
//    t starts from the clock of the rows the PS holds at t, which is what
//    the fetch returns.
//
// Not thread-safe; the planner keeps one per table, touched by that
// table's thread only. Memory: 12 bytes per cache slot of every worker,
// one map entry per row some cache holds.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "common/state_io.h"

namespace herald::scheduler {

// PlannerOptions::staleness is 0..kMaxStaleness.
constexpr uint32_t kMaxStaleness = 1000000;

class StaleCopies {
 public:
  enum class State : uint8_t {
    kNone,      // no copy in the slot
    kClean,     // fetched, not trained since
    kHeld,      // trained here: holds gradients the PS has not seen
    kOutdated,  // its gradients went to the PS: fetched again before use
  };
  // What a worker does with the gradient of its copy (Train).
  enum class Write : uint8_t {
    kHold,  // applied to the copy and held
    kPush,  // pushed with what the copy held; the copy is outdated
  };

  // slots: the slot array size of each of `num_workers` workers.
  StaleCopies(uint32_t num_workers, uint32_t slots, uint32_t staleness);

  State state(uint32_t w, uint32_t slot) const { return copies_[w][slot].state; }
  // The copy in worker w's `slot` passes HET's CheckValid against the
  // committed global clock of `key`.
  bool Valid(uint32_t w, uint32_t slot, Key key) const;
  // How many clocks the copy is behind the global clock (0 when not).
  uint32_t Behind(uint32_t w, uint32_t slot, Key key) const;

  // The row `key` landed in the slot from the PS (or was initialised):
  // clean, both clocks the committed global clock. in_place: the slot held
  // a copy of `key` already (not held).
  void Fetched(uint32_t w, uint32_t slot, Key key, bool in_place);
  // Worker w trains its copy once (a valid one).
  Write Train(uint32_t w, uint32_t slot, Key key);
  // The copy's held gradients go to the PS (a flush); it is outdated.
  void Flush(uint32_t w, uint32_t slot, Key key);
  // A clean copy becomes outdated (fetched again before it is read): at a
  // flush (checkpoint, evaluation, last iteration) every copy is flushed
  // or outdated, so after it no worker reads a copy older than the PS's
  // and a job resumed there (its caches refilled from the PS) plans and
  // trains what the uninterrupted job does.
  void Outdate(uint32_t w, uint32_t slot) {
    if (copies_[w][slot].state == State::kClean) copies_[w][slot].state = State::kOutdated;
  }
  // The copy leaves the cache; true when it held gradients (they go to the
  // PS with this iteration's pushes).
  bool Evict(uint32_t w, uint32_t slot, Key key);
  // The iteration commits: every clock the PS received moves its row's
  // global clock; rows no cache holds are forgotten (their clock matters
  // to no copy).
  void Commit();

  void Save(StateWriter* out) const;
  bool Load(StateReader* in);

 private:
  struct Copy {
    uint32_t start = 0;    // c_s
    uint32_t current = 0;  // c_c
    State state = State::kNone;
    uint8_t padding[3] = {};  // saved as bytes: no uninitialised ones
  };
  struct Row {
    uint32_t clock = 0;    // c_g, committed
    uint32_t pending = 0;  // the largest clock pushed this iteration
    uint32_t copies = 0;   // caches holding the row
  };
  uint32_t GlobalClock(Key key) const {
    auto it = rows_.find(key);
    return it == rows_.end() ? 0 : it->second.clock;
  }
  void Pushed(Key key, uint32_t clock);

  uint32_t staleness_;
  std::vector<std::vector<Copy>> copies_;  // [worker][slot]
  absl::flat_hash_map<Key, Row> rows_;
  std::vector<Key> pushed_;  // keys with a pending clock, unique
};

}  // namespace herald::scheduler
