// A read-only SQLite connection for the snapshot loader: open the file as
// untrusted input, read its schema, run a query row by row within the
// load's LoadLimit; and the column readers its row callbacks use.
//
// One thread at a time (the loader's).
#ifndef VIN_SNAPSHOT_SQLITE_DB_H_
#define VIN_SNAPSHOT_SQLITE_DB_H_

#include <sqlite3.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "snapshot/load_limit.h"
#include "snapshot/schema_check.h"

namespace snapshot {

class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Opens `path` read-only as a file of unknown origin: never as a URI
  // (Debian's SQLite is built with SQLITE_USE_URI), with
  // SQLITE_DBCONFIG_DEFENSIVE, trusted_schema off, views, triggers and
  // extension loading off, no ATTACH, and values of at most 1 MiB. Every
  // query after this stops (SQLITE_INTERRUPT) once `limit` says so;
  // `limit` must outlive the Db. FAILED_PRECONDITION when SQLite cannot
  // open the file.
  absl::Status Open(const std::string& path, const LoadLimit& limit);

  // Every object of sqlite_master, tables with their generated columns.
  absl::StatusOr<std::vector<SchemaObject>> ReadSchema();

  // Whether `name` is an ordinary table (not a view, not virtual).
  bool HasTable(absl::string_view name);

  // Runs `sql` with `params` bound to ?1, ?2... as text and calls `row`
  // for every result row. Past the limit: its CANCELLED or
  // DEADLINE_EXCEEDED.
  absl::Status Query(const std::string& sql,
                     absl::FunctionRef<void(sqlite3_stmt*)> row,
                     std::initializer_list<absl::string_view> params = {});

 private:
  sqlite3* db_ = nullptr;
  const LoadLimit* limit_ = nullptr;
};

// `name` as an SQL identifier in double quotes (a '"' in it doubled).
std::string QuoteIdentifier(absl::string_view name);

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
