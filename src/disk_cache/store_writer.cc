#include "disk_cache/store_writer.h"

#include "disk_cache/row_key.h"

namespace disk_cache {

void StoreWriter::Totals::Remove(int64_t row_bytes) {
  const uint64_t b = row_bytes > 0 ? static_cast<uint64_t>(row_bytes) : 0;
  bytes = bytes > b ? bytes - b : 0;
  if (entries > 0) --entries;
}

absl::StatusOr<std::unique_ptr<StoreWriter>> StoreWriter::Create(
    Connection db) {
  std::unique_ptr<StoreWriter> w(new StoreWriter(std::move(db)));
  sqlite3* d = w->db_.get();
  struct {
    Statement* stmt;
    const char* sql;
  } const statements[] = {
      {&w->begin_, "BEGIN IMMEDIATE"},
      {&w->commit_, "COMMIT"},
      {&w->find_,
       "SELECT key, model_year, decode_time, bytes FROM entries WHERE id = ?1"},
      {&w->upsert_,
       "INSERT OR REPLACE INTO entries (id, key, model_year, value, crc, "
       "decode_time, stored_at, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
       "?8)"},
      {&w->remove_, "DELETE FROM entries WHERE id = ?1 RETURNING bytes"},
      {&w->expire_,
       "DELETE FROM entries WHERE decode_time < ?1 RETURNING id, bytes"},
      {&w->evict_,
       "DELETE FROM entries WHERE id = (SELECT id FROM entries INDEXED BY "
       "entries_by_age ORDER BY decode_time LIMIT 1) RETURNING id, bytes"},
      {&w->scan_, "SELECT id, bytes FROM entries INDEXED BY entries_by_age"},
  };
  for (const auto& s : statements) {
    absl::StatusOr<Statement> prepared = Prepare(d, s.sql);
    if (!prepared.ok()) return prepared.status();
    *s.stmt = std::move(*prepared);
  }
  return w;
}

absl::Status StoreWriter::Run(sqlite3_stmt* stmt,
                              const std::function<void(sqlite3_stmt*)>& row) {
  ScopedReset reset(stmt);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (row) row(stmt);
  }
  if (rc != SQLITE_DONE) return SqliteStatus(db_.get(), rc, sqlite3_sql(stmt));
  return absl::OkStatus();
}

absl::Status StoreWriter::Scan(const std::function<void(int64_t)>& fn) {
  Totals totals;
  absl::Status s = Run(scan_.get(), [&](sqlite3_stmt* r) {
    fn(sqlite3_column_int64(r, 0));
    ++totals.entries;
    const int64_t b = sqlite3_column_int64(r, 1);
    totals.bytes += b > 0 ? static_cast<uint64_t>(b) : 0;
  });
  if (!s.ok()) return s;
  entries_ = totals.entries;
  bytes_ = totals.bytes;
  return absl::OkStatus();
}

absl::StatusOr<WriteChanges> StoreWriter::Apply(const std::vector<WriteOp>& ops,
                                                const WriteLimits& limits) {
  absl::Status s = Run(begin_.get());
  if (!s.ok()) return s;
  WriteChanges changes;
  Totals totals{entries_, bytes_};
  s = ApplyInTransaction(ops, limits, &changes, &totals);
  if (s.ok()) s = Run(commit_.get());
  if (!s.ok()) {
    // SQLite may have rolled back already (a full disk, an I/O error).
    if (sqlite3_get_autocommit(db_.get()) == 0) {
      sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    return s;
  }
  entries_ = totals.entries;
  bytes_ = totals.bytes;
  return changes;
}

absl::Status StoreWriter::ApplyInTransaction(const std::vector<WriteOp>& ops,
                                             const WriteLimits& limits,
                                             WriteChanges* changes,
                                             Totals* totals) {
  // A deleted row: counted by `count`, out of the totals and the id set.
  auto deleted = [changes, totals](uint64_t* count) {
    return [changes, totals, count](sqlite3_stmt* r) {
      const int64_t id = sqlite3_column_int64(r, 0);
      totals->Remove(sqlite3_column_int64(r, 1));
      changes->ids.emplace_back(id, false);
      ++*count;
    };
  };
  for (const WriteOp& op : ops) {
    absl::Status s;
    if (op.kind == WriteOp::kPut) {
      s = Put(op, limits, changes, totals);
    } else {
      sqlite3_bind_int64(remove_.get(), 1, op.id);
      s = Run(remove_.get(), [&](sqlite3_stmt* r) {
        totals->Remove(sqlite3_column_int64(r, 0));
        changes->ids.emplace_back(op.id, false);
        ++changes->corrupt;
      });
    }
    if (!s.ok()) return s;
  }
  if (limits.purge) {
    sqlite3_bind_int64(expire_.get(), 1, absl::ToUnixNanos(limits.keep_after));
    absl::Status s = Run(expire_.get(), deleted(&changes->expired));
    if (!s.ok()) return s;
  }
  while (totals->bytes > limits.max_bytes && totals->entries > 0) {
    const uint64_t before = changes->evicted;
    absl::Status s = Run(evict_.get(), deleted(&changes->evicted));
    if (!s.ok()) return s;
    if (changes->evicted == before) {  // an empty table: the totals drifted
      totals->entries = 0;
      totals->bytes = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status StoreWriter::Put(const WriteOp& op, const WriteLimits& limits,
                              WriteChanges* changes, Totals* totals) {
  const Row& row = op.row;
  if (row.decode_time < limits.keep_after) {
    ++changes->expired;
    return absl::OkStatus();
  }
  const uint64_t row_bytes = RowBytes(row.key, row.value);
  if (row_bytes > limits.max_bytes) {
    ++changes->dropped;
    return absl::OkStatus();
  }
  const int64_t decode_ns = absl::ToUnixNanos(row.decode_time);
  bool keep_stored = false;
  sqlite3_bind_int64(find_.get(), 1, op.id);
  absl::Status s = Run(find_.get(), [&](sqlite3_stmt* r) {
    const bool same_key = ColumnBytes(r, 0) == row.key &&
                          sqlite3_column_int(r, 1) == row.model_year;
    if (same_key && sqlite3_column_int64(r, 2) > decode_ns) {
      keep_stored = true;  // a later decode of this key is stored already
      return;
    }
    totals->Remove(sqlite3_column_int64(r, 3));
  });
  if (!s.ok()) return s;
  ++changes->committed;
  if (keep_stored) return absl::OkStatus();

  sqlite3_stmt* u = upsert_.get();
  sqlite3_bind_int64(u, 1, op.id);
  BindText(u, 2, row.key);
  sqlite3_bind_int(u, 3, row.model_year);
  BindBytes(u, 4, row.value);
  sqlite3_bind_int64(u, 5, Checksum(row.value));
  sqlite3_bind_int64(u, 6, decode_ns);
  sqlite3_bind_int64(u, 7, absl::ToUnixNanos(limits.now));
  sqlite3_bind_int64(u, 8, static_cast<int64_t>(row_bytes));
  s = Run(u);
  if (!s.ok()) return s;
  ++totals->entries;
  totals->bytes += row_bytes;
  changes->ids.emplace_back(op.id, true);
  return absl::OkStatus();
}

}  // namespace disk_cache
