#include "ps_server/store/row_store.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "ps_server/store/rocksdb_logger.h"

namespace herald::ps {
namespace {

constexpr size_t kKeyBytes = 12;
// The owner record: longer than a row key, after every table's rows.
const char kOwnerKey[] = "\xff\xff\xff\xffowner";

void PutBigEndian(uint64_t v, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>(v >> (8 * (bytes - 1 - i)));
}
uint64_t GetBigEndian(const char* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}
void EncodeKey(uint32_t table, Key key, char* out) {
  PutBigEndian(table, 4, out);
  PutBigEndian(key, 8, out + 4);
}

rocksdb::Options StoreOptions(const std::string& path, uint64_t cache_bytes,
                              uint64_t memtable_bytes) {
  rocksdb::Options o;
  o.compression = rocksdb::kNoCompression;  // trained floats barely compress
  o.write_buffer_size = memtable_bytes;
  o.max_write_buffer_number = 2;
  o.max_open_files = 256;
  o.info_log_level = rocksdb::WARN_LEVEL;
  o.info_log = ProcessLogFor(path);  // no LOG file on the store's own disk
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(std::max<uint64_t>(cache_bytes, 1 << 20));
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return o;
}

absl::StatusCode CodeOf(const rocksdb::Status& s) {
  if (s.IsNoSpace()) return absl::StatusCode::kResourceExhausted;
  if (s.IsCorruption()) return absl::StatusCode::kDataLoss;
  return absl::StatusCode::kInternal;
}

}  // namespace

std::string RowStoreOwner::Describe() const {
  return absl::StrCat("job '", job_id, "' shard ", shard, " of ", num_shards);
}

RowStore::RowStore(std::string path, std::unique_ptr<rocksdb::DB> db)
    : path_(std::move(path)), db_(std::move(db)) {}

RowStore::~RowStore() = default;

absl::StatusOr<std::unique_ptr<RowStore>> RowStore::Open(const std::string& path,
                                                         const RowStoreOwner& owner,
                                                         uint64_t cache_bytes,
                                                         uint64_t memtable_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const rocksdb::Options options = StoreOptions(path, cache_bytes, memtable_bytes);
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("row store ", path, ": exists and is not a directory"));
    }
    if (!fs::is_empty(path, ec)) {
      if (!fs::exists(fs::path(path) / "CURRENT", ec)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "row store ", path, ": the directory holds files that are not a row store; refusing ",
            "to overwrite them (empty it or choose another --data_dir)"));
      }
      rocksdb::Options existing = options;
      existing.create_if_missing = false;
      rocksdb::DB* raw = nullptr;
      rocksdb::Status s = rocksdb::DB::Open(existing, path, &raw);
      if (!s.ok()) {
        return absl::DataLossError(absl::StrCat("row store ", path, " is damaged (", s.ToString(),
                                                "); remove the directory to start over"));
      }
      std::unique_ptr<rocksdb::DB> db(raw);
      std::string had;
      s = db->Get(rocksdb::ReadOptions(), rocksdb::Slice(kOwnerKey, sizeof(kOwnerKey) - 1), &had);
      if (!s.ok() || had != owner.Describe()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "row store ", path, " belongs to ",
            s.ok() ? had : std::string("no Herald job (a database without an owner record)"),
            ", not to ", owner.Describe(), "; refusing to touch it"));
      }
      db.reset();
      s = rocksdb::DestroyDB(path, options);
      if (!s.ok()) return absl::InternalError(absl::StrCat("row store ", path, ": ", s.ToString()));
      HLOG_INFO("row store {}: emptied what an earlier run of {} left", path, owner.Describe());
    }
  }
  fs::create_directories(path, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("row store ", path, ": cannot create: ", ec.message()));
  }
  rocksdb::Options fresh = options;
  fresh.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(fresh, path, &raw);
  if (!s.ok()) {
    return absl::Status(CodeOf(s), absl::StrCat("row store ", path, ": ", s.ToString()));
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions w;
  w.sync = true;
  s = db->Put(w, rocksdb::Slice(kOwnerKey, sizeof(kOwnerKey) - 1), owner.Describe());
  if (!s.ok()) {
    return absl::Status(CodeOf(s), absl::StrCat("row store ", path, ": ", s.ToString()));
  }
  return std::unique_ptr<RowStore>(new RowStore(path, std::move(db)));
}

absl::StatusOr<bool> RowStore::Get(uint32_t table, Key key, uint32_t floats, float* row,
                                   uint64_t* version) const {
  char k[kKeyBytes];
  EncodeKey(table, key, k);
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(),
                               rocksdb::Slice(k, kKeyBytes), &value);
  if (s.IsNotFound()) return false;
  if (!s.ok())
    return absl::Status(CodeOf(s), absl::StrCat("row store ", path_, ": ", s.ToString()));
  const size_t want = sizeof(uint64_t) + size_t{floats} * sizeof(float);
  if (value.size() != want) {
    return absl::DataLossError(absl::StrCat("row store ", path_, ": key ", key, " of table ", table,
                                            " holds ", value.size(), " bytes, expected ", want,
                                            " (a damaged store)"));
  }
  std::memcpy(version, value.data(), sizeof(uint64_t));
  std::memcpy(row, value.data() + sizeof(uint64_t), size_t{floats} * sizeof(float));
  return true;
}

absl::Status RowStore::Put(const std::vector<StoredRow>& rows) {
  rocksdb::WriteBatch batch;
  std::string value;
  char k[kKeyBytes];
  for (const StoredRow& r : rows) {
    EncodeKey(r.table, r.key, k);
    value.resize(sizeof(uint64_t) + size_t{r.floats} * sizeof(float));
    std::memcpy(value.data(), &r.version, sizeof(uint64_t));
    std::memcpy(value.data() + sizeof(uint64_t), r.row, size_t{r.floats} * sizeof(float));
    batch.Put(rocksdb::Slice(k, kKeyBytes), value);
  }
  return Write(&batch, absl::StrCat("writing ", rows.size(), " rows"));
}

absl::Status RowStore::Write(rocksdb::WriteBatch* batch, const std::string& what) {
  rocksdb::WriteOptions w;
  w.disableWAL = true;  // nothing is recovered from the store after a crash
  rocksdb::Status s = db_->Write(w, batch);
  if (s.ok()) return absl::OkStatus();
  return absl::Status(CodeOf(s), absl::StrCat("row store ", path_, ": ", what, ": ", s.ToString()));
}

absl::Status RowStore::Delete(uint32_t table, const std::vector<Key>& keys) {
  rocksdb::WriteBatch batch;
  char k[kKeyBytes];
  for (Key key : keys) {
    EncodeKey(table, key, k);
    batch.Delete(rocksdb::Slice(k, kKeyBytes));
  }
  return Write(&batch, absl::StrCat("deleting ", keys.size(), " rows"));
}

RowStore::Cursor::Cursor(const RowStore* store, uint32_t table, uint32_t floats)
    : store_(store), snapshot_(store->db_->GetSnapshot()), table_(table), floats_(floats) {
  rocksdb::ReadOptions r;
  r.snapshot = snapshot_;
  r.fill_cache = false;  // a checkpoint's scan must not evict the hot blocks
  it_.reset(store->db_->NewIterator(r));
  char prefix[4];
  PutBigEndian(table, 4, prefix);
  it_->Seek(rocksdb::Slice(prefix, 4));
}

RowStore::Cursor::~Cursor() {
  it_.reset();
  store_->db_->ReleaseSnapshot(snapshot_);
}

absl::Status RowStore::Cursor::Load() {
  valid_ = false;
  if (!it_->Valid()) {
    if (!it_->status().ok()) {
      return absl::Status(CodeOf(it_->status()), absl::StrCat("row store ", store_->path_, ": ",
                                                              it_->status().ToString()));
    }
    return absl::OkStatus();
  }
  const rocksdb::Slice k = it_->key();
  if (k.size() != kKeyBytes || GetBigEndian(k.data(), 4) != table_) return absl::OkStatus();
  key_ = GetBigEndian(k.data() + 4, 8);
  const rocksdb::Slice v = it_->value();
  const size_t want = sizeof(uint64_t) + size_t{floats_} * sizeof(float);
  if (v.size() != want) {
    return absl::DataLossError(absl::StrCat("row store ", store_->path_, ": key ", key_,
                                            " of table ", table_, " holds ", v.size(),
                                            " bytes, expected ", want, " (a damaged store)"));
  }
  std::memcpy(&version_, v.data(), sizeof(uint64_t));
  row_.resize(floats_);
  std::memcpy(row_.data(), v.data() + sizeof(uint64_t), size_t{floats_} * sizeof(float));
  valid_ = true;
  return absl::OkStatus();
}

absl::Status RowStore::Cursor::Next() {
  it_->Next();
  return Load();
}

absl::StatusOr<std::unique_ptr<RowStore::Cursor>> RowStore::Rows(uint32_t table,
                                                                 uint32_t floats) const {
  std::unique_ptr<Cursor> cursor(new Cursor(this, table, floats));
  absl::Status s = cursor->Load();
  if (!s.ok()) return s;
  return cursor;
}

uint64_t RowStore::DiskBytes() const {
  uint64_t bytes = 0;
  db_->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &bytes);
  uint64_t memtable = 0;
  db_->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtable);
  return bytes + memtable;
}

}  // namespace herald::ps
