#include "jobs/job_store_sqlite.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace jobs {
namespace internal {
namespace {

using disk_cache::BindBytes;
using disk_cache::BindText;
using disk_cache::ColumnBytes;
using disk_cache::Exec;
using disk_cache::Prepare;
using disk_cache::ScopedReset;
using disk_cache::SqliteStatus;
using disk_cache::Statement;

// "VINj" in the header's application_id.
constexpr int32_t kApplicationId = 0x56494e6a;
constexpr int kSchemaVersion = 1;

// Times are Unix nanoseconds, 0 for "not yet" (absl::InfinitePast). An
// item's `answer` is a key of `answers` (kDone), its `failure` the
// failure's bytes (kFailed).
constexpr char kSchemaSql[] =
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL)"
    " WITHOUT ROWID;"
    "CREATE TABLE jobs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
    " tenant TEXT NOT NULL, idempotency_key TEXT NOT NULL,"
    " spec BLOB NOT NULL, state INTEGER NOT NULL, message TEXT NOT NULL,"
    " items_total INTEGER NOT NULL, items_done INTEGER NOT NULL,"
    " items_failed INTEGER NOT NULL, create_time INTEGER NOT NULL,"
    " start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,"
    " not_before INTEGER NOT NULL, off_peak INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL, notify INTEGER NOT NULL,"
    " columns BLOB NOT NULL);"
    "CREATE TABLE items (job INTEGER NOT NULL, idx INTEGER NOT NULL,"
    " request BLOB NOT NULL, outcome INTEGER NOT NULL DEFAULT 0,"
    " answer INTEGER NOT NULL DEFAULT 0, failure BLOB, extra BLOB,"
    " PRIMARY KEY (job, idx)) WITHOUT ROWID;"
    "CREATE TABLE answers (job INTEGER NOT NULL, key INTEGER NOT NULL,"
    " bytes BLOB NOT NULL, PRIMARY KEY (job, key)) WITHOUT ROWID;";

constexpr char kSchemaProbe[] =
    "SELECT j.seq, j.id, j.tenant, j.idempotency_key, j.spec, j.state,"
    " j.message, j.items_total, j.items_done, j.items_failed, j.create_time,"
    " j.start_time, j.end_time, j.not_before, j.off_peak, j.bytes, j.notify,"
    " j.columns, i.idx, i.request, i.outcome, i.answer, i.failure, i.extra,"
    " a.key, a.bytes,"
    " m.name, m.value FROM jobs j, items i, answers a, meta m LIMIT 0";

int64_t Nanos(absl::Time t) {
  return t == absl::InfinitePast() ? 0 : absl::ToUnixNanos(t);
}
absl::Time FromNanos(int64_t ns) {
  return ns == 0 ? absl::InfinitePast() : absl::FromUnixNanos(ns);
}

}  // namespace

const disk_cache::StoreFormat kJobFormat = {
    "job store", kApplicationId, kSchemaVersion, kSchemaVersion,
    kSchemaSql,  kSchemaProbe,   nullptr};

const char kJobColumns[] =
    "seq, id, tenant, idempotency_key, spec, state, message, items_total,"
    " items_done, items_failed, create_time, start_time, end_time,"
    " not_before, off_peak, bytes, notify, columns";

std::string Text(sqlite3_stmt* s, int col) {
  return std::string(ColumnBytes(s, col));
}

JobRecord RecordAt(sqlite3_stmt* s) {
  JobRecord j;
  j.seq = sqlite3_column_int64(s, 0);
  j.id = Text(s, 1);
  j.tenant = Text(s, 2);
  j.idempotency_key = Text(s, 3);
  j.spec = Text(s, 4);
  j.state = static_cast<JobState>(sqlite3_column_int(s, 5));
  j.message = Text(s, 6);
  j.items_total = sqlite3_column_int64(s, 7);
  j.items_done = sqlite3_column_int64(s, 8);
  j.items_failed = sqlite3_column_int64(s, 9);
  j.create_time = FromNanos(sqlite3_column_int64(s, 10));
  j.start_time = FromNanos(sqlite3_column_int64(s, 11));
  j.end_time = FromNanos(sqlite3_column_int64(s, 12));
  j.not_before = FromNanos(sqlite3_column_int64(s, 13));
  j.off_peak = sqlite3_column_int(s, 14) != 0;
  j.bytes = sqlite3_column_int64(s, 15);
  j.notify = static_cast<NotifyState>(sqlite3_column_int(s, 16));
  j.columns = Text(s, 17);
  return j;
}

void BindRecord(sqlite3_stmt* s, const JobRecord& j) {
  sqlite3_bind_int64(s, 1, j.seq);
  BindText(s, 2, j.id);
  BindText(s, 3, j.tenant);
  BindText(s, 4, j.idempotency_key);
  BindBytes(s, 5, j.spec);
  sqlite3_bind_int(s, 6, static_cast<int>(j.state));
  BindText(s, 7, j.message);
  sqlite3_bind_int64(s, 8, j.items_total);
  sqlite3_bind_int64(s, 9, j.items_done);
  sqlite3_bind_int64(s, 10, j.items_failed);
  sqlite3_bind_int64(s, 11, Nanos(j.create_time));
  sqlite3_bind_int64(s, 12, Nanos(j.start_time));
  sqlite3_bind_int64(s, 13, Nanos(j.end_time));
  sqlite3_bind_int64(s, 14, Nanos(j.not_before));
  sqlite3_bind_int(s, 15, j.off_peak ? 1 : 0);
  sqlite3_bind_int64(s, 16, j.bytes);
  sqlite3_bind_int(s, 17, static_cast<int>(j.notify));
  BindBytes(s, 18, j.columns);
}

}  // namespace internal

const char* StateName(JobState s) {
  switch (s) {
    case JobState::kStaging:
      return "staging";
    case JobState::kPending:
      return "pending";
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kCancelled:
      return "cancelled";
    case JobState::kFailed:
      return "failed";
  }
  return "unknown";
}

using disk_cache::Exec;
using disk_cache::Prepare;
using disk_cache::SqliteStatus;
using disk_cache::Statement;

absl::Status SqliteJobStore::Sqlite::PrepareAll() {
  struct {
    Statement* stmt;
    std::string sql;
  } all[] = {
      {&save,
       absl::StrCat("INSERT OR REPLACE INTO jobs (", internal::kJobColumns,
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
                    " ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)")},
      {&add_item,
       "INSERT INTO items (job, idx, request, extra) VALUES (?1, ?2, ?3, "
       "?4)"},
      {&pending,
       "SELECT idx, request FROM items WHERE job = ?1 AND idx >= ?2 AND"
       " outcome = 0 ORDER BY idx LIMIT ?3"},
      {&results,
       "SELECT i.idx, i.request, i.outcome, CASE i.outcome WHEN 1 THEN"
       " a.bytes ELSE i.failure END, i.extra FROM items i LEFT JOIN answers "
       "a ON"
       " a.job = i.job AND a.key = i.answer WHERE i.job = ?1 AND"
       " i.idx >= ?2 ORDER BY i.idx LIMIT ?3"},
      {&finish,
       "UPDATE items SET outcome = ?3, answer = ?4, failure = ?5 WHERE"
       " job = ?1 AND idx = ?2 AND outcome = 0"},
      {&answer,
       "INSERT OR IGNORE INTO answers (job, key, bytes) VALUES (?1, ?2, ?3)"},
      {&fail_pending,
       "UPDATE items SET outcome = 2, failure = ?2 WHERE job = ?1 AND"
       " outcome = 0"},
      {&max_answer, "SELECT ifnull(max(key), 0) FROM answers WHERE job = ?1"},
  };
  for (auto& p : all) {
    absl::StatusOr<Statement> s = Prepare(db(), p.sql.c_str());
    if (!s.ok()) return s.status();
    *p.stmt = std::move(*s);
  }
  return absl::OkStatus();
}

absl::Status SqliteJobStore::Sqlite::Transaction(
    const std::function<absl::Status()>& body) {
  absl::Status s = Exec(db(), "BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  s = body();
  if (s.ok()) s = Exec(db(), "COMMIT");
  if (!s.ok()) Exec(db(), "ROLLBACK").IgnoreError();
  return s;
}

absl::Status SqliteJobStore::Sqlite::Step(sqlite3_stmt* stmt,
                                          const char* what) {
  const int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    return SqliteStatus(db(), rc, what);
  }
  return absl::OkStatus();
}

}  // namespace jobs
