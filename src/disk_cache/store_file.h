// The store's file: recognise it as ours, or set it aside and create an
// empty one. Internal to disk_cache; called by DiskCache::Open only.
//
// The file is ours when its header's application_id is kApplicationId and
// its user_version is kSchemaVersion, it passes `PRAGMA quick_check`, and its
// table and index are there. A file with SQLite's header but no tables and
// no application_id (an empty database, or one whose creation never
// committed) is set up in place. A file of an older schema version this
// build can migrate (kMigrations) is migrated in place, in one transaction,
// after its quick_check. Anything else is set aside.
#ifndef VIN_DISK_CACHE_STORE_FILE_H_
#define VIN_DISK_CACHE_STORE_FILE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "disk_cache/sqlite_util.h"

namespace disk_cache {

// "VINc" in the header's application_id (offset 68), so that `file(1)` and
// this code tell the store from other SQLite databases.
inline constexpr int32_t kApplicationId = 0x56494e63;
inline constexpr int kSchemaVersion = 2;

// The schema of version 2. The row id is KeyId(key, model_year)
// (row_key.h); times are Unix nanoseconds; `bytes` is RowBytes. The age
// index serves eviction (oldest first), the keep_for purge, the newest-first
// warm-up, and, covering (decode_time, bytes, id), the scan at Open.
inline constexpr char kSchemaSql[] =
    "CREATE TABLE entries ("
    " id INTEGER PRIMARY KEY,"
    " key TEXT NOT NULL,"
    " model_year INTEGER NOT NULL,"
    " value BLOB NOT NULL,"
    " crc INTEGER NOT NULL,"
    " decode_time INTEGER NOT NULL,"
    " stored_at INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL);"
    "CREATE INDEX entries_by_age ON entries(decode_time, bytes);";

// Version 1 named the key column `vin`: every key was a VIN. Version 2
// keys vPIC's reference requests too (rule 18): the column is `key`, its
// rows unchanged (a VIN is its own key, so their row ids stay).
inline constexpr char kMigrationFrom1[] =
    "ALTER TABLE entries RENAME COLUMN vin TO key";

// A warning for the operator (DiskCache::Open's `warn`).
using Warn = std::function<void(const std::string&)>;

// What makes a SQLite file one of this program's stores: the disk cache's
// (kCacheFormat, below) or another module's built on this code (the job
// store of DESIGN rule 20, src/jobs). Every message starts with `what` and
// the path.
struct StoreFormat {
  const char* what;          // "disk cache", "job store"
  int32_t application_id;    // the header's application_id
  int schema_version;        // this build's
  int oldest_version;        // the oldest it can migrate (== schema_version:
                             // none)
  const char* schema_sql;    // creates the tables of schema_version
  const char* schema_probe;  // a query that prepares only on that schema
  // Brings a file of `from` (oldest_version..schema_version-1) to
  // schema_version, inside the caller's transaction; null when there is no
  // older version.
  absl::Status (*migrate)(sqlite3* db, int from);
};

// The disk cache's format (kApplicationId, kSchemaVersion, kSchemaSql,
// kMigrationFrom1).
extern const StoreFormat kCacheFormat;

// Opens the store at `path` for writing, in WAL mode with synchronous=NORMAL:
// creates the file with mode 0600 (its -wal and -shm follow), in a directory
// created 0700 when missing, and makes an existing file and its journals
// 0600; refuses a directory of another user or that every user may write
// to, and warns about a group-writable one (util::EnsurePrivateDirectory:
// the file holds every VIN asked). Sets aside
// a file that
// is not ours (see SetAside), naming it in one `warn`, and creates an empty
// store in its place. Fails only when no store can be had at `path`: the
// directory cannot be created or is not private, the file cannot be created,
// made private or moved, another
// connection holds it locked past the busy timeout, or an I/O error; the
// status names `path`. `now` names the file set aside.
absl::StatusOr<Connection> OpenStoreFile(const std::string& path,
                                         const Warn& warn, absl::Time now);
// The same for a store of `format`.
absl::StatusOr<Connection> OpenStoreFile(const std::string& path,
                                         const StoreFormat& format,
                                         const Warn& warn, absl::Time now);

// Moves `path` to `<path>.broken-<UTC time>` (`-2`, `-3`... when taken),
// with its `-wal` and `-journal` files beside it under the new name so that
// the copy stays readable, and deletes its `-shm`. Then warns: "disk cache
// <path> <problem>; moved it to <aside> and started an empty store".
// Returns the new name.
absl::StatusOr<std::string> SetAside(const std::string& path,
                                     const std::string& problem,
                                     const Warn& warn, absl::Time now);
// The same, the messages naming `what` ("job store") instead.
absl::StatusOr<std::string> SetAside(const char* what, const std::string& path,
                                     const std::string& problem,
                                     const Warn& warn, absl::Time now);

}  // namespace disk_cache

#endif  // VIN_DISK_CACHE_STORE_FILE_H_
