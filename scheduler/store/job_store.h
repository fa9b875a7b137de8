#pragma once
// The scheduler's durable record of its jobs: one SQLite database,
// <state_dir>/scheduler.db, with a row per job (id, spec, state, reason,
// progress, history, times), each write one transaction (WAL journal, synchronous
// FULL: a write that returned survives a crash of the process or the
// machine). JobManager writes a job at submission and at every change of
// state, and reads them all back when the scheduler starts
// (JobManager::Restore). Thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"

struct sqlite3;

namespace herald::scheduler {

struct StoredJob {
  std::string id;       // "job-N"
  uint64_t number = 0;  // N: submission order
  proto::JobSpec spec;  // as run (defaults filled in)
  proto::JobState state = proto::JOB_STATE_UNSPECIFIED;
  std::string reason;
  proto::JobProgress progress;
  std::vector<proto::HistoryPoint> history;  // JobHistory's points
  int64_t submitted_unix_ms = 0;
  int64_t finished_unix_ms = 0;
};

class JobStore {
 public:
  // Opens `<dir>/scheduler.db`, creating the directory, the file and its
  // table as needed; a database of schema 1 (no history) gains the column.
  // Errors: Unavailable or DataLoss naming the file (not a database,
  // unreadable, a newer schema).
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& dir);
  ~JobStore();

  const std::string& path() const { return path_; }

  // Inserts or replaces the job's row.
  absl::Status Put(const StoredJob& job);
  // Every job, in submission order. Errors: DataLoss naming the job whose
  // stored spec or progress does not parse.
  absl::StatusOr<std::vector<StoredJob>> Load();

 private:
  JobStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status Exec(const char* sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  sqlite3* const db_ ABSL_GUARDED_BY(mu_);  // every use of the connection holds mu_
  const std::string path_;
};

}  // namespace herald::scheduler
