// The job store's SQLite side (internal to src/jobs): its file format,
// the record's columns, and the connection with its prepared statements.
#ifndef VIN_JOBS_JOB_STORE_SQLITE_H_
#define VIN_JOBS_JOB_STORE_SQLITE_H_

#include <sqlite3.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "disk_cache/sqlite_util.h"
#include "disk_cache/store_file.h"
#include "jobs/job_record.h"
#include "jobs/job_store.h"

namespace jobs {
namespace internal {

// The job store's file: application_id "VINj", its schema and probe.
extern const disk_cache::StoreFormat kJobFormat;
// The columns of `jobs`, in the order RecordAt reads and BindRecord binds.
extern const char kJobColumns[];

// Column `col` of the current row, as bytes.
std::string Text(sqlite3_stmt* s, int col);
// The record of the current row of a SELECT of kJobColumns.
JobRecord RecordAt(sqlite3_stmt* s);
// Binds `j` to the 18 parameters of kJobColumns' order.
void BindRecord(sqlite3_stmt* s, const JobRecord& j);

}  // namespace internal

// The connection and its prepared statements (job_store_sqlite.cc).
struct SqliteJobStore::Sqlite {
  disk_cache::Connection conn;
  disk_cache::Statement save, add_item, pending, results, finish, answer,
      fail_pending, max_answer;
  sqlite3* db() { return conn.get(); }

  absl::Status PrepareAll();
  // Runs `body` in a write transaction: all of it, or nothing.
  absl::Status Transaction(const std::function<absl::Status()>& body);
  // One step of `stmt`; an error names `what`.
  absl::Status Step(sqlite3_stmt* stmt, const char* what);
};

}  // namespace jobs

#endif  // VIN_JOBS_JOB_STORE_SQLITE_H_
