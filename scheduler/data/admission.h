#pragma once
// Id admission (tables[].admission, docs/configuration.md "Id admission"):
// the rule that decides, batch by batch of the training stream, which keys
// have rows. A key of a table with min_count N is admitted in the batch in
// which its count of occurrences (every lookup, counted in data order,
// this batch's included) reaches N; from that batch on its lookups stay,
// before it they are dropped from their bags as if the id were absent.
//
// Counting is exact: one hash-map entry per distinct key seen of a table
// with admission (about 32 bytes each), kept for the job's life. The state
// travels with the stream's data cursor, so a resumed job continues the
// counts where the checkpoint left them.
//
// Thread-safe: the training stream filters on its reader's thread while an
// evaluation asks which keys were admitted by an earlier iteration.

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

class Admission {
 public:
  // min_counts[t]: table t's min_count (0 or 1: no admission).
  explicit Admission(std::vector<uint32_t> min_counts);
  // The rule of a spec, table by table; empty when no table has one
  // (every key admitted).
  static std::vector<uint32_t> RuleOf(const proto::JobSpec& spec);

  // Training batch `index` (0, 1, … in stream order, each once): counts its
  // keys and drops the lookups of those not admitted.
  void Filter(uint64_t index, data::KeyBatch* batch);
  // A batch scored after training batch `through`: drops the lookups of
  // keys not admitted by then (no counting).
  void FilterAdmittedBy(uint64_t through, data::KeyBatch* batch) const;

  struct Counts {
    uint64_t admitted = 0;  // keys admitted so far, over the tables
    uint64_t waiting = 0;   // keys seen, not yet admitted
    uint64_t dropped = 0;   // lookups dropped so far
  };
  // After the last batch filtered.
  Counts counts() const;
  // After training batch `index`, for one of the last 64 batches filtered
  // (the current counts for an older one, or after a Load).
  Counts CountsThrough(uint64_t index) const;

  // The state as part of a data cursor, and back (into an Admission of the
  // same rule). Load fails the reader (DataLoss naming the field) on a
  // state of another rule.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in);
  // Takes `other`'s counts. REQUIRES: the same rule.
  void CopyFrom(const Admission& other);

  const std::vector<uint32_t>& min_counts() const { return min_counts_; }

 private:
  static constexpr uint64_t kNotAdmitted = std::numeric_limits<uint64_t>::max();
  struct Entry {
    uint64_t count = 0;
    uint64_t admitted_at = kNotAdmitted;  // the batch that admitted it
  };

  const std::vector<uint32_t> min_counts_;
  mutable absl::Mutex mu_;
  std::vector<absl::flat_hash_map<Key, Entry>> tables_ ABSL_GUARDED_BY(mu_);
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<uint64_t, Counts>> recent_ ABSL_GUARDED_BY(mu_);  // by batch
};

}  // namespace herald::scheduler
