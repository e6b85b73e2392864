#include "disk_cache/reader_pool.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "disk_cache/row_key.h"

namespace disk_cache {
namespace {

// Readers never wait long: a busy store is a miss, not a stall.
constexpr absl::Duration kReadBusyTimeout = absl::Milliseconds(100);

constexpr char kColumns[] = "id, key, model_year, value, crc, decode_time";

StoredRow Decode(sqlite3_stmt* s) {
  StoredRow out;
  // Types first: reading a column as another type converts it.
  const bool typed = sqlite3_column_type(s, 1) == SQLITE_TEXT &&
                     sqlite3_column_type(s, 2) == SQLITE_INTEGER &&
                     sqlite3_column_type(s, 3) == SQLITE_BLOB &&
                     sqlite3_column_type(s, 4) == SQLITE_INTEGER &&
                     sqlite3_column_type(s, 5) == SQLITE_INTEGER;
  out.id = sqlite3_column_int64(s, 0);
  out.row.key = std::string(ColumnBytes(s, 1));
  out.row.model_year = sqlite3_column_int(s, 2);
  out.row.value = std::string(ColumnBytes(s, 3));
  const int64_t crc = sqlite3_column_int64(s, 4);
  out.row.decode_time = absl::FromUnixNanos(sqlite3_column_int64(s, 5));
  out.intact = typed && crc == static_cast<int64_t>(Checksum(out.row.value)) &&
               KeyId(out.row.key, out.row.model_year) == out.id;
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReaderPool::Reader>> ReaderPool::Lease() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Reader> r = std::move(idle_.back());
      idle_.pop_back();
      return r;
    }
  }
  absl::StatusOr<Connection> db =
      OpenConnection(path_, SQLITE_OPEN_READWRITE, kReadBusyTimeout);
  if (!db.ok()) return db.status();
  auto r = std::make_unique<Reader>();
  r->db = std::move(*db);
  absl::Status s = Exec(r->db.get(), "PRAGMA query_only=1");
  if (!s.ok()) return s;
  const std::string read =
      absl::StrCat("SELECT ", kColumns, " FROM entries WHERE id = ?1");
  const std::string newest = absl::StrCat(
      "SELECT ", kColumns,
      " FROM entries INDEXED BY entries_by_age WHERE decode_time >= ?1 "
      "ORDER BY decode_time DESC LIMIT ?2");
  absl::StatusOr<Statement> st = Prepare(r->db.get(), read.c_str());
  if (!st.ok()) return st.status();
  r->read = std::move(*st);
  st = Prepare(r->db.get(), newest.c_str());
  if (!st.ok()) return st.status();
  r->newest = std::move(*st);
  return r;
}

void ReaderPool::Return(std::unique_ptr<Reader> reader) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(reader));
}

absl::StatusOr<absl::optional<StoredRow>> ReaderPool::Read(int64_t id) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Lease();
  if (!r.ok()) return r.status();
  absl::optional<StoredRow> found;
  int rc;
  {
    sqlite3_stmt* s = (*r)->read.get();
    ScopedReset reset(s);
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) found = Decode(s);
  }
  absl::Status status = (rc == SQLITE_ROW || rc == SQLITE_DONE)
                            ? absl::OkStatus()
                            : SqliteStatus((*r)->db.get(), rc, "reading a row");
  Return(std::move(*r));
  if (!status.ok()) return status;
  return found;
}

absl::Status ReaderPool::ForEachNewest(
    size_t limit, absl::Time since, const std::function<bool(StoredRow)>& fn) {
  absl::StatusOr<std::unique_ptr<Reader>> r = Lease();
  if (!r.ok()) return r.status();
  int rc;
  {
    sqlite3_stmt* s = (*r)->newest.get();
    ScopedReset reset(s);
    sqlite3_bind_int64(s, 1, absl::ToUnixNanos(since));
    sqlite3_bind_int64(
        s, 2,
        static_cast<int64_t>(std::min<uint64_t>(limit, uint64_t{INT64_MAX})));
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      if (!fn(Decode(s))) {
        rc = SQLITE_DONE;
        break;
      }
    }
  }
  absl::Status status = rc == SQLITE_DONE
                            ? absl::OkStatus()
                            : SqliteStatus((*r)->db.get(), rc, "reading rows");
  Return(std::move(*r));
  return status;
}

}  // namespace disk_cache
