// A read-only SQLite connection for the snapshot loader: open, ask whether a
// table exists, run a query row by row; and the column readers its row
// callbacks use.
#ifndef VIN_SNAPSHOT_SQLITE_DB_H_
#define VIN_SNAPSHOT_SQLITE_DB_H_

#include <sqlite3.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace snapshot {

class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Opens `path` read-only; FAILED_PRECONDITION when SQLite cannot.
  absl::Status Open(const std::string& path);
  bool HasTable(absl::string_view name);

  // Runs `sql` and calls `row` for every result row.
  template <typename F>
  absl::Status Query(const std::string& sql, F&& row) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) !=
        SQLITE_OK) {
      return absl::FailedPreconditionError(
          absl::StrCat("snapshot query failed (", sqlite3_errmsg(db_),
                       "): ", sql));
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
      return absl::InternalError(
          absl::StrCat("reading the snapshot failed: ", sqlite3_errstr(rc)));
    }
    return absl::OkStatus();
  }

 private:
  sqlite3* db_ = nullptr;
};

// Column `col` of the current row: as text ("" for NULL), NULL or not, as
// an int.
inline absl::string_view Text(sqlite3_stmt* s, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
  if (p == nullptr) return absl::string_view();
  return absl::string_view(p, sqlite3_column_bytes(s, col));
}
inline bool IsNull(sqlite3_stmt* s, int col) {
  return sqlite3_column_type(s, col) == SQLITE_NULL;
}
inline int Int(sqlite3_stmt* s, int col) { return sqlite3_column_int(s, col); }

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SQLITE_DB_H_
