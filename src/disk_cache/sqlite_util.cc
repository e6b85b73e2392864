#include "disk_cache/sqlite_util.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace disk_cache {

absl::Status SqliteStatus(sqlite3* db, int rc, absl::string_view what) {
  // The connection's message is more precise than the code's, when it is
  // about this code.
  const char* why =
      (db != nullptr && (sqlite3_errcode(db) & 0xff) == (rc & 0xff))
          ? sqlite3_errmsg(db)
          : sqlite3_errstr(rc);
  std::string message = absl::StrCat(what, ": ", why);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<Connection> OpenConnection(const std::string& path, int flags,
                                          absl::Duration busy_timeout) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Connection db(raw);  // closed on every path, also when open failed
  if (rc != SQLITE_OK) {
    return SqliteStatus(db.get(), rc, absl::StrCat("cannot open ", path));
  }
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(
      db.get(), static_cast<int>(absl::ToInt64Milliseconds(busy_timeout)));
  return db;
}

absl::Status Exec(sqlite3* db, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, sql);
  return absl::OkStatus();
}

absl::StatusOr<Statement> Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  Statement stmt(raw);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, sql);
  return stmt;
}

namespace {

// Steps `sql` once: SQLITE_ROW with the statement, or an error.
absl::StatusOr<Statement> FirstRow(sqlite3* db, const char* sql) {
  absl::StatusOr<Statement> stmt = Prepare(db, sql);
  if (!stmt.ok()) return stmt.status();
  const int rc = sqlite3_step(stmt->get());
  if (rc == SQLITE_ROW) return stmt;
  if (rc == SQLITE_DONE) {
    return absl::InternalError(absl::StrCat(sql, ": no row"));
  }
  return SqliteStatus(db, rc, sql);
}

}  // namespace

absl::StatusOr<int64_t> QueryInt(sqlite3* db, const char* sql) {
  absl::StatusOr<Statement> stmt = FirstRow(db, sql);
  if (!stmt.ok()) return stmt.status();
  return sqlite3_column_int64(stmt->get(), 0);
}

absl::StatusOr<std::string> QueryText(sqlite3* db, const char* sql) {
  absl::StatusOr<Statement> stmt = FirstRow(db, sql);
  if (!stmt.ok()) return stmt.status();
  return std::string(ColumnBytes(stmt->get(), 0));
}

}  // namespace disk_cache
