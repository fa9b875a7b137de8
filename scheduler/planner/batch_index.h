#pragma once
// Dense batch-local ids for the distinct keys of one global batch, each
// resolved to its row-directory handle, so the planner looks each key up in
// its maps once per batch, not once per use. Ids of table t are
// [begin(t), begin(t + 1)), in first-use order.

#include <cstdint>
#include <vector>

#include "common/data/key_batch.h"
#include "common/ids.h"
#include "scheduler/planner/row_directory.h"
#include "scheduler/planner/table_runner.h"

namespace herald::scheduler {

class BatchIndex {
 public:
  // Rebuilds the index for `batch`, the batch of `iteration`, reusing this
  // object's buffers: adds a directory entry for every key that has none
  // and pins every entry until that iteration's plan is done. Tables are
  // indexed on `run`'s threads; the ids are the same whatever their number.
  // REQUIRES: directories->size() == batch.tables.size(), and `iteration`
  // greater than that of every earlier build on these directories.
  void Build(const data::KeyBatch& batch, uint64_t iteration,
             std::vector<RowDirectory>* directories, const TableRunner& run = TableRunner());

  // Build in steps, for callers that index the tables beside other work:
  // Start(batch), then IndexTable(t) for every table (each once, in any
  // order, on any threads: each touches table t's state only, `directory`
  // being table t's), then Finish. The same index as Build.
  void Start(const data::KeyBatch& batch);
  void IndexTable(const data::KeyBatch& batch, uint32_t t, uint64_t iteration,
                  RowDirectory* directory);
  void Finish(const TableRunner& run = TableRunner());

  uint32_t num_samples() const { return num_samples_; }
  uint32_t num_tables() const { return static_cast<uint32_t>(ids_.size()); }
  uint32_t num_ids() const { return static_cast<uint32_t>(keys_.size()); }
  uint32_t begin(uint32_t table) const { return begin_[table]; }
  Key key(uint32_t id) const { return keys_[id]; }
  // The id's handle in its table's directory.
  uint32_t row(uint32_t id) const { return rows_[id]; }
  // Uses of the key in the batch (a multi-hot sample may count twice).
  uint32_t uses(uint32_t id) const { return uses_[id]; }
  // Ids parallel to batch.tables[t].keys (use the batch's offsets per sample).
  const std::vector<uint32_t>& ids(uint32_t table) const { return ids_[table]; }
  const std::vector<uint32_t>& offsets(uint32_t table) const { return offsets_[table]; }

  // Writes the index of a finished build (Planner::SaveState). Load reads
  // one back, replacing this one; false (in->status() names the field) for
  // a stream that does not fit `directories`, the tables' directories.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in, const std::vector<RowDirectory>& directories);

 private:
  uint32_t num_samples_ = 0;
  std::vector<Key> keys_;
  std::vector<uint32_t> rows_;
  std::vector<uint32_t> uses_;
  std::vector<uint32_t> begin_;
  std::vector<std::vector<uint32_t>> ids_;
  std::vector<std::vector<uint32_t>> offsets_;
  // Handles of keys looked up in the current build, direct-mapped by a
  // hash of the key (a colliding key replaces the entry): at least as many
  // entries as the table has uses, up to 4096.
  class KeyMemo {
   public:
    struct Entry {
      Key key;
      uint32_t handle;  // RowDirectory::kNone: empty
    };
    void Reset(size_t uses) {
      bits_ = 4;
      while (bits_ < kMaxBits && (size_t{1} << bits_) < uses) ++bits_;
      entries_.assign(size_t{1} << bits_, Entry{0, RowDirectory::kNone});
    }
    Entry& At(Key key) { return entries_[(key * 0x9E3779B97F4A7C15ull) >> (64 - bits_)]; }
    bool Has(Key key) {
      const Entry& e = At(key);
      return e.handle != RowDirectory::kNone && e.key == key;
    }

   private:
    static constexpr uint32_t kMaxBits = 12;
    uint32_t bits_ = 4;
    std::vector<Entry> entries_;
  };
  // Scratch per table: handles per use, then the table's distinct keys
  // under local ids before they are numbered batch-wide.
  struct PerTable {
    KeyMemo memo;
    std::vector<uint32_t> handles;
    std::vector<Key> keys;
    std::vector<uint32_t> rows, uses;
  };
  std::vector<PerTable> tables_;
};

}  // namespace herald::scheduler
