#pragma once
// The cache plan of one table for one worker and one iteration: which rows
// the worker evicts, fetches, initialises, receives, trains, pushes, writes
// back and sends, in terms of its cache slots. Made by the scheduler's
// planner, executed by the worker's StepExecutor (worker/cache/
// step_executor.h), checked by both sides (worker/cache/step_validator.h,
// scheduler/planner/plan_replay.h). Wire form: proto/plan.proto, codec:
// plan/plan_codec.h.
//
// A plan is a set of lists, one per kind of operation. Each list is a group
// of parallel columns; row i of a list is entry i of each column it has.
// Which columns each kind has is stated once, in ForEachList below, and
// checked by CheckShape.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/ids.h"

namespace herald::plan {

// Rows in cache slots: row i is keys[i] in slots[i].
struct SlotRows {
  std::vector<uint32_t> slots;
  std::vector<Key> keys;
};

// Rows fetched from the PS into slots. early: empty, or one distance per
// row, 0..kMaxEarlyDistance (common/ids.h): d >= 1 = no plan of iterations t - d .. t - 1
// changes the row's PS copy (for a fetch at iteration t), so its value for
// t is final once iteration t - d - 1 committed and the fetch may be
// issued that early, before the commits of t - d .. t - 1; 0 = the
// previous iteration changes it.
struct FetchRows {
  std::vector<uint32_t> slots;
  std::vector<Key> keys;
  std::vector<uint8_t> early;
};

// Rows, or their gradients, exchanged with another worker (peers[i]).
// served: empty, or one flag per row (1 = a served copy, 0 = a hand-off;
// docs/worker.md).
struct PeerRows {
  std::vector<uint32_t> slots;
  std::vector<Key> keys;
  std::vector<uint32_t> peers;
  std::vector<uint8_t> served;

  bool Served(size_t i) const { return !served.empty() && served[i] != 0; }
};

// Operations on one table's slot array, in execution order.
struct TablePlan {
  // Expired rows (row expiry; scheduler/data/key_lifecycle.h) freed before
  // anything else, clean or dirty, never written back: the PS deletes them
  // at this iteration's commit.
  SlotRows drop;
  // Dirty rows written back to the PS before anything lands.
  SlotRows evict;
  // Rows fetched from the PS; they land clean.
  FetchRows fetch;
  // Rows never trained (scheduling.init_on_worker): the worker writes their
  // initial values (math::InitialRow, as the PS would create them); clean,
  // version 0.
  SlotRows init;
  // Rows other workers sent after the previous step (peers unused), placed
  // as this worker's dirty copies; served copies land as SlotState::kServed.
  PeerRows receive;
  // Slots trained by this worker alone: it applies the optimizer itself.
  std::vector<uint32_t> owned_slots;
  // Stale writes (policy het): rows this worker trained on its own copy;
  // it applies the optimizer to the copy and adds the gradient to the
  // slot's held gradient, which reaches the PS later (a later push, flush
  // or eviction of the slot).
  SlotRows hold;
  // Rows trained by several workers whose gradients go to the PS (with the
  // slot's held gradient added, when it holds one).
  SlotRows push;
  // Held gradients sent to the PS after training (policy het: the copy is
  // invalidated or the model flushed); the copy is outdated afterwards.
  SlotRows flush;
  // Rows trained here whose gradients go to worker peers[i], their owner.
  PeerRows remote;
  // Owned rows taking a gradient from worker peers[i], in each sender's
  // remote order; the owner applies the rank-ordered sum of every
  // trainer's gradient, as the PS would.
  PeerRows gather;
  // Dirty rows written back after training.
  SlotRows writeback;
  // Rows sent to worker peers[i] after the write-backs.
  PeerRows send;
  // The rows other workers send this one after this step (no slots yet:
  // they land at the next step's receive), in each sender's order.
  PeerRows incoming;
  // Keys whose rows the PS deletes at this iteration's commit (row expiry),
  // sent with this worker's iteration-done report; each expired key is in
  // exactly one worker's list. Keys only (no slots, peers or flags).
  PeerRows expire;
};

// The columns a kind of list has besides `keys` (owned_slots: slots only).
enum Columns : uint8_t {
  kSlots = 1,  // slots, one per key
  kPeers = 2,  // peers, one per key
  kFlags = 4,  // early or served: empty or one per key
};

// Calls visit(name, list, columns) for every list of `plan` in execution
// order (owned_slots as its vector). The one place a new kind of operation
// is named in C++; the codec (plan_codec.cc) lists its wire field.
template <typename Plan, typename Visitor>
void ForEachList(Plan& plan, Visitor&& visit) {
  visit("drop", plan.drop, kSlots);
  visit("evict", plan.evict, kSlots);
  visit("fetch", plan.fetch, kSlots | kFlags);
  visit("init", plan.init, kSlots);
  visit("receive", plan.receive, kSlots | kFlags);
  visit("owned_slots", plan.owned_slots, kSlots);
  visit("hold", plan.hold, kSlots);
  visit("push", plan.push, kSlots);
  visit("flush", plan.flush, kSlots);
  visit("remote", plan.remote, kSlots | kPeers);
  visit("gather", plan.gather, kSlots | kPeers);
  visit("writeback", plan.writeback, kSlots);
  visit("send", plan.send, kSlots | kPeers | kFlags);
  visit("incoming", plan.incoming, kPeers | kFlags);
  visit("expire", plan.expire, 0);
}

// The structural check: every list has exactly the columns of its kind,
// each with one entry per key. Errors: InvalidArgument naming the list and
// column, e.g. "send.peers has 2 entries but send.keys has 3".
absl::Status CheckShape(const TablePlan& plan);

}  // namespace herald::plan
