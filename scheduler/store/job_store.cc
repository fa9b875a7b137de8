#include "scheduler/store/job_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {
namespace {

// 1: no history column; 2: history (a JobHistoryRecord).
constexpr int kSchemaVersion = 2;

// Finalizes a statement on every path out of a scope.
struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() { sqlite3_finalize(stmt); }
};

absl::Status MakeDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0750) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("--state_dir ", dir, ": cannot create: ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& dir) {
  if (absl::Status s = MakeDir(dir); !s.ok()) return s;
  const std::string path = dir + "/scheduler.db";
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string error = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat(path, ": cannot open: ", error));
  }
  std::unique_ptr<JobStore> store(new JobStore(db, path));
  absl::MutexLock lock(&store->mu_);  // not shared yet; Exec's contract
  sqlite3_busy_timeout(db, 5000);
  for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                          "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER)",
                          "CREATE TABLE IF NOT EXISTS jobs (number INTEGER PRIMARY KEY, id TEXT "
                          "NOT NULL UNIQUE, spec BLOB NOT NULL, state INTEGER NOT NULL, reason "
                          "TEXT NOT NULL, progress BLOB NOT NULL, submitted_ms INTEGER NOT NULL, "
                          "finished_ms INTEGER NOT NULL, history BLOB NOT NULL DEFAULT x'')",
                          "INSERT OR IGNORE INTO meta VALUES ('schema', 2)"}) {
    if (absl::Status s = store->Exec(sql); !s.ok()) {
      return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
    }
  }
  Statement version;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema'", -1, &version.stmt,
                         nullptr) != SQLITE_OK ||
      sqlite3_step(version.stmt) != SQLITE_ROW) {
    return absl::DataLossError(absl::StrCat(path, ": no schema version: ", sqlite3_errmsg(db)));
  }
  int v = sqlite3_column_int(version.stmt, 0);
  if (v == 1) {  // written by an older scheduler: add the history column
    for (const char* sql :
         {"BEGIN", "ALTER TABLE jobs ADD COLUMN history BLOB NOT NULL DEFAULT x''",
          "UPDATE meta SET value = 2 WHERE key = 'schema'", "COMMIT"}) {
      if (absl::Status s = store->Exec(sql); !s.ok()) {
        return absl::DataLossError(absl::StrCat(path, ": upgrading schema 1 to 2: ", s.message()));
      }
    }
    v = 2;
  }
  if (v != kSchemaVersion) {
    return absl::DataLossError(
        absl::StrCat(path, ": schema version ", v, ", this scheduler reads ", kSchemaVersion));
  }
  return store;
}

JobStore::~JobStore() { sqlite3_close(db_); }

absl::Status JobStore::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status s = absl::DataLossError(error ? error : sqlite3_errmsg(db_));
    sqlite3_free(error);
    return s;
  }
  return absl::OkStatus();
}

absl::Status JobStore::Put(const StoredJob& job) {
  absl::MutexLock lock(&mu_);
  Statement put;
  if (sqlite3_prepare_v2(db_,
                         "INSERT OR REPLACE INTO jobs (number, id, spec, state, reason, progress, "
                         "submitted_ms, finished_ms, history) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         -1, &put.stmt, nullptr) != SQLITE_OK) {
    return absl::UnavailableError(absl::StrCat(path_, ": ", sqlite3_errmsg(db_)));
  }
  const std::string spec = job.spec.SerializeAsString();
  const std::string progress = job.progress.SerializeAsString();
  proto::JobHistoryRecord record;
  for (const proto::HistoryPoint& point : job.history) *record.add_points() = point;
  const std::string history = record.SerializeAsString();
  sqlite3_bind_int64(put.stmt, 1, static_cast<sqlite3_int64>(job.number));
  sqlite3_bind_text(put.stmt, 2, job.id.data(), static_cast<int>(job.id.size()), SQLITE_STATIC);
  sqlite3_bind_blob(put.stmt, 3, spec.data(), static_cast<int>(spec.size()), SQLITE_STATIC);
  sqlite3_bind_int(put.stmt, 4, job.state);
  sqlite3_bind_text(put.stmt, 5, job.reason.data(), static_cast<int>(job.reason.size()),
                    SQLITE_STATIC);
  sqlite3_bind_blob(put.stmt, 6, progress.data(), static_cast<int>(progress.size()), SQLITE_STATIC);
  sqlite3_bind_int64(put.stmt, 7, job.submitted_unix_ms);
  sqlite3_bind_int64(put.stmt, 8, job.finished_unix_ms);
  sqlite3_bind_blob(put.stmt, 9, history.data(), static_cast<int>(history.size()), SQLITE_STATIC);
  if (sqlite3_step(put.stmt) != SQLITE_DONE) {
    return absl::UnavailableError(
        absl::StrCat(path_, ": cannot record ", job.id, ": ", sqlite3_errmsg(db_)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredJob>> JobStore::Load() {
  absl::MutexLock lock(&mu_);
  Statement all;
  if (sqlite3_prepare_v2(db_,
                         "SELECT number, id, spec, state, reason, progress, submitted_ms, "
                         "finished_ms, history FROM jobs ORDER BY number",
                         -1, &all.stmt, nullptr) != SQLITE_OK) {
    return absl::DataLossError(absl::StrCat(path_, ": ", sqlite3_errmsg(db_)));
  }
  std::vector<StoredJob> jobs;
  int step;
  while ((step = sqlite3_step(all.stmt)) == SQLITE_ROW) {
    StoredJob j;
    j.number = static_cast<uint64_t>(sqlite3_column_int64(all.stmt, 0));
    j.id = reinterpret_cast<const char*>(sqlite3_column_text(all.stmt, 1));
    auto blob = [&](int column) {
      const void* data = sqlite3_column_blob(all.stmt, column);  // null when empty
      const int bytes = sqlite3_column_bytes(all.stmt, column);
      return data == nullptr
                 ? std::string()
                 : std::string(static_cast<const char*>(data), static_cast<size_t>(bytes));
    };
    const int state = sqlite3_column_int(all.stmt, 3);
    proto::JobHistoryRecord history;
    if (!j.spec.ParseFromString(blob(2)) || !j.progress.ParseFromString(blob(5)) ||
        !history.ParseFromString(blob(8)) || !proto::JobState_IsValid(state)) {
      return absl::DataLossError(absl::StrCat(path_, ": job ", j.id, " does not parse"));
    }
    j.state = static_cast<proto::JobState>(state);
    j.reason = reinterpret_cast<const char*>(sqlite3_column_text(all.stmt, 4));
    j.submitted_unix_ms = sqlite3_column_int64(all.stmt, 6);
    j.finished_unix_ms = sqlite3_column_int64(all.stmt, 7);
    j.history.assign(history.points().begin(), history.points().end());
    jobs.push_back(std::move(j));
  }
  if (step != SQLITE_DONE) {
    return absl::DataLossError(absl::StrCat(path_, ": ", sqlite3_errmsg(db_)));
  }
  return jobs;
}

}  // namespace herald::scheduler
