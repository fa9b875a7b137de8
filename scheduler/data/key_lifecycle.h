#pragma once
// Which keys have rows, decided batch by batch of the training stream:
// id admission and row expiry (tables[].admission, tables[].expiry;
// docs/configuration.md, "Id admission" and "Row expiry").
//
// Admission: a key of a table with min_count N is admitted in the batch in
// which its count of occurrences (every lookup, counted in data order, this
// batch's included) reaches N; from that batch on its lookups stay, before
// it they are dropped from their bags as if the id were absent.
//
// Expiry: a key of a table with after_iterations T that was last looked up
// (admitted or not) in batch u and is absent from batches u+1 … u+T is
// forgotten after batch u+T: its count is gone, and if it was admitted its
// row is deleted at the commit of iteration u+T (batch u+T lists it in
// KeyBatch::Table::expired). If it returns it is a new key: counted from
// zero, admitted again, its row created afresh from its initial value.
//
// Counting is exact: one hash-map entry per key seen and not forgotten
// (about 40 bytes each), plus, with expiry, one 8-byte record per key and
// batch it occurs in, kept T batches. With expiry the memory therefore
// follows the keys of the last T batches, not every key ever seen. The
// state travels with the stream's data cursor, so a resumed job continues
// where the checkpoint left off.
//
// Thread-safe: the training stream filters on its reader's thread while an
// evaluation asks which keys had rows after an earlier iteration.

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/data/key_batch.h"
#include "common/ids.h"
#include "common/state_io.h"
#include "proto/job.pb.h"

namespace herald::scheduler {

// One table's rule. min_count 0 or 1: every key admitted at once;
// expire_after 0: never forgotten.
struct KeyRule {
  uint32_t min_count = 0;
  uint64_t expire_after = 0;

  bool admits() const { return min_count > 1; }
  bool expires() const { return expire_after > 0; }
  bool active() const { return admits() || expires(); }
  bool operator==(const KeyRule& o) const {
    return min_count == o.min_count && expire_after == o.expire_after;
  }
};

class KeyLifecycle {
 public:
  // rules[t]: table t's rule.
  explicit KeyLifecycle(std::vector<KeyRule> rules);
  // The rules of a spec, table by table; empty when no table has one
  // (every key has a row for ever).
  static std::vector<KeyRule> RuleOf(const proto::JobSpec& spec);
  // Admission alone: min_counts[t] for table t, no expiry.
  static std::vector<KeyRule> MinCounts(const std::vector<uint32_t>& min_counts);

  // Training batch `index` (0, 1, … in stream order, each once): counts its
  // keys, drops the lookups of those not admitted, and lists in each
  // table's `expired` the keys whose rows go after it.
  void Filter(uint64_t index, data::KeyBatch* batch);
  // A batch scored after training batch `through`: drops the lookups of
  // keys that had no row then (not admitted yet, or expired). Exact for
  // `through` among the last kRecentBatches batches filtered, or later.
  void FilterAdmittedBy(uint64_t through, data::KeyBatch* batch) const;

  struct Counts {
    uint64_t admitted = 0;  // keys with rows now, over the tables
    uint64_t waiting = 0;   // keys seen, not yet admitted
    uint64_t dropped = 0;   // lookups dropped so far
    uint64_t expired = 0;   // rows deleted so far
  };
  // After the last batch filtered.
  Counts counts() const;
  // After training batch `index`, for one of the last kRecentBatches
  // batches filtered (the current counts for an older one, or after a Load).
  Counts CountsThrough(uint64_t index) const;
  static constexpr size_t kRecentBatches = 64;

  // The state as part of a data cursor, and back (into a KeyLifecycle of
  // the same rules). Load fails the reader (DataLoss naming the field) on a
  // state of other rules.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in);
  // Takes `other`'s state. REQUIRES: the same rules.
  void CopyFrom(const KeyLifecycle& other);

  const std::vector<KeyRule>& rules() const { return rules_; }

 private:
  static constexpr uint64_t kNotAdmitted = std::numeric_limits<uint64_t>::max();
  struct Entry {
    uint64_t count = 0;
    uint64_t admitted_at = kNotAdmitted;  // the batch that admitted it
    uint64_t last_seen = 0;               // the last batch that looked it up
  };
  // The keys first looked up in one batch (with expiry), to be checked T
  // batches later; a key seen since has a later last_seen and is skipped.
  struct SeenIn {
    uint64_t batch;
    std::vector<Key> keys;
  };
  // Rows deleted after batch `batch` (with the batch that admitted each),
  // for FilterAdmittedBy of an earlier batch.
  struct Deleted {
    uint64_t batch;
    std::vector<std::pair<Key, uint64_t>> rows;
  };
  struct Table {
    absl::flat_hash_map<Key, Entry> entries;
    std::deque<SeenIn> seen;
    std::deque<Deleted> deleted;
  };
  void Expire(uint64_t index, const KeyRule& rule, Table* table, std::vector<Key>* expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<KeyRule> rules_;
  mutable absl::Mutex mu_;
  std::vector<Table> tables_ ABSL_GUARDED_BY(mu_);
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<uint64_t, Counts>> recent_ ABSL_GUARDED_BY(mu_);  // by batch
};

}  // namespace herald::scheduler
