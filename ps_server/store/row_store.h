#pragma once
// The disk tier of one job shard: embedding rows (values, optimizer state,
// version) that do not fit the shard's memory budget, in a RocksDB database
// under the PS's --data_dir (docs/parameter-server.md, "Tables larger than
// memory").
//
// A store is scratch space for one run of one job shard: its rows are only
// meaningful together with the rows the shard holds in memory, so Open
// empties a store that an earlier run of the same job shard left behind
// (checkpoints, not this store, are what a recovery restores). It refuses a
// directory that holds anything else: another job's store, a damaged
// store, files that are not a store.
//
// Keys are (table, key) as 12 big-endian bytes, so one table's rows are
// contiguous and in ascending key order (Cursor). Writes skip RocksDB's
// write-ahead log: nothing is recovered from the store after a crash.
// Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"

namespace rocksdb {
class DB;
class Iterator;
class Snapshot;
class WriteBatch;
}  // namespace rocksdb

namespace herald::ps {

// Which job shard a store belongs to, written in the store and checked at open.
struct RowStoreOwner {
  std::string job_id;
  uint32_t shard = 0;
  uint32_t num_shards = 1;
  std::string Describe() const;
};

// One row to write: `floats` floats at `row`.
struct StoredRow {
  uint32_t table;
  Key key;
  uint64_t version;
  const float* row;
  uint32_t floats;
};

class RowStore {
 public:
  // Opens (creating or emptying, see above) the store at `path`. The block
  // cache is `cache_bytes`, each of its two memtables `memtable_bytes` (what
  // the shard's process holds for it besides its budget). Errors: FailedPrecondition naming the
  // path for another job's store or a directory that is not a store; DataLoss for a damaged store;
  // the file system's error otherwise.
  static absl::StatusOr<std::unique_ptr<RowStore>> Open(const std::string& path,
                                                        const RowStoreOwner& owner,
                                                        uint64_t cache_bytes,
                                                        uint64_t memtable_bytes = 16 << 20);
  ~RowStore();
  RowStore(const RowStore&) = delete;
  RowStore& operator=(const RowStore&) = delete;

  const std::string& path() const { return path_; }

  // Reads (table, key) into `row` (`floats` floats) and `version`. Returns
  // false if the store does not hold it. Errors: DataLoss naming the path
  // and key for a value of the wrong size; the store's error otherwise.
  absl::StatusOr<bool> Get(uint32_t table, Key key, uint32_t floats, float* row,
                           uint64_t* version) const;
  // Writes every row in one batch. Errors name the path
  // (ResourceExhausted for a full disk).
  absl::Status Put(const std::vector<StoredRow>& rows);
  // Deletes the rows of `keys` of `table` in one batch (keys it does not
  // hold are fine). Errors name the path.
  absl::Status Delete(uint32_t table, const std::vector<Key>& keys);

  // Rows of one table in ascending key order, as the store held them when
  // the cursor was made (a snapshot).
  class Cursor {
   public:
    ~Cursor();
    bool Valid() const { return valid_; }
    Key key() const { return key_; }
    uint64_t version() const { return version_; }
    const float* row() const { return row_.data(); }
    // Errors: DataLoss for a damaged value.
    absl::Status Next();

   private:
    friend class RowStore;
    Cursor(const RowStore* store, uint32_t table, uint32_t floats);
    absl::Status Load();
    const RowStore* store_;
    const rocksdb::Snapshot* snapshot_;
    std::unique_ptr<rocksdb::Iterator> it_;
    uint32_t table_, floats_;
    bool valid_ = false;
    Key key_ = 0;
    uint64_t version_ = 0;
    std::vector<float> row_;
  };
  // Errors: as Cursor::Next, for the first row.
  absl::StatusOr<std::unique_ptr<Cursor>> Rows(uint32_t table, uint32_t floats) const;

  // Bytes the store's files take on disk (RocksDB's estimate).
  uint64_t DiskBytes() const;

 private:
  RowStore(std::string path, std::unique_ptr<rocksdb::DB> db);
  // Applies `batch` (no write-ahead log). Errors name the path and `what`.
  absl::Status Write(rocksdb::WriteBatch* batch, const std::string& what);

  const std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace herald::ps
