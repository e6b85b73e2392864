// Owning handles for SQLite connections and statements, and the one place
// where SQLite's result codes become absl::Status codes. Internal to
// disk_cache.
//
// A connection is opened with SQLITE_OPEN_NOMUTEX: it must be used by one
// thread at a time (the writer's by the writer thread, a reader's by the
// thread that leased it from the pool).
#ifndef VIN_DISK_CACHE_SQLITE_UTIL_H_
#define VIN_DISK_CACHE_SQLITE_UTIL_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace disk_cache {

struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Connection = std::unique_ptr<sqlite3, ConnectionCloser>;

struct StatementFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// `rc` (a SQLite result code) as a status whose message is `what` and
// SQLite's explanation: UNAVAILABLE for BUSY/LOCKED (another connection
// holds the lock: try again), DATA_LOSS for CORRUPT/NOTADB,
// RESOURCE_EXHAUSTED for FULL, FAILED_PRECONDITION for CANTOPEN, PERM and
// READONLY, INTERNAL otherwise. `db` may be null.
absl::Status SqliteStatus(sqlite3* db, int rc, absl::string_view what);

// Opens `path` with `flags` (| SQLITE_OPEN_NOMUTEX) and a busy timeout.
absl::StatusOr<Connection> OpenConnection(const std::string& path, int flags,
                                          absl::Duration busy_timeout);

// Runs `sql` (one or more statements, no results read).
absl::Status Exec(sqlite3* db, const char* sql);

absl::StatusOr<Statement> Prepare(sqlite3* db, const char* sql);

// The first column of the first row of `sql` as an integer / as text.
absl::StatusOr<int64_t> QueryInt(sqlite3* db, const char* sql);
absl::StatusOr<std::string> QueryText(sqlite3* db, const char* sql);

// Resets `stmt` and clears its bindings when it goes out of scope, so that a
// prepared statement never holds a read snapshot between uses.
class ScopedReset {
 public:
  explicit ScopedReset(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ScopedReset(const ScopedReset&) = delete;
  ScopedReset& operator=(const ScopedReset&) = delete;
  ~ScopedReset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  sqlite3_stmt* const stmt_;
};

// Column `col` of the current row as bytes (empty for NULL).
inline absl::string_view ColumnBytes(sqlite3_stmt* s, int col) {
  const void* p = sqlite3_column_blob(s, col);
  if (p == nullptr) return absl::string_view();
  return absl::string_view(static_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(s, col)));
}

inline int BindBytes(sqlite3_stmt* s, int index, absl::string_view bytes) {
  // A non-null pointer even when empty: a zero-length BLOB, not NULL.
  return sqlite3_bind_blob64(s, index, bytes.empty() ? "" : bytes.data(),
                             bytes.size(), SQLITE_STATIC);
}
inline int BindText(sqlite3_stmt* s, int index, absl::string_view text) {
  return sqlite3_bind_text64(s, index, text.empty() ? "" : text.data(),
                             text.size(), SQLITE_STATIC, SQLITE_UTF8);
}

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_SQLITE_UTIL_H_
