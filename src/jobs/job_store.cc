#include "jobs/job_store.h"

#include <openssl/rand.h>
#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "disk_cache/sqlite_util.h"
#include "disk_cache/store_file.h"
#include "jobs/job_store_sqlite.h"

namespace jobs {

using disk_cache::BindBytes;
using disk_cache::BindText;
using disk_cache::ColumnBytes;
using disk_cache::Exec;
using disk_cache::Prepare;
using disk_cache::ScopedReset;
using disk_cache::SqliteStatus;
using disk_cache::Statement;

using internal::BindRecord;
using internal::kJobColumns;
using internal::kJobFormat;
using internal::RecordAt;
using internal::Text;

SqliteJobStore::SqliteJobStore(std::unique_ptr<Sqlite> db, std::string secret)
    : db_(std::move(db)), secret_(std::move(secret)) {}

SqliteJobStore::~SqliteJobStore() = default;

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(
    const std::string& path, const Warn& warn, absl::Time now) {
  absl::StatusOr<disk_cache::Connection> conn =
      disk_cache::OpenStoreFile(path, kJobFormat, warn, now);
  if (!conn.ok()) return conn.status();
  auto db = std::make_unique<Sqlite>();
  db->conn = std::move(*conn);
  auto failed = [&path](const absl::Status& s) {
    return absl::Status(s.code(),
                        absl::StrCat("job store ", path, ": ", s.message()));
  };
  // An acknowledged job, and a committed outcome, survive a crash of the
  // machine too.
  absl::Status s = Exec(db->db(), "PRAGMA synchronous=FULL");
  if (s.ok()) s = db->PrepareAll();
  // Uploads that never finished were never acknowledged.
  if (s.ok()) {
    s = db->Transaction([&db]() {
      return Exec(db->db(),
                  "DELETE FROM items WHERE job IN (SELECT seq FROM jobs WHERE"
                  " state = 0); DELETE FROM answers WHERE job IN (SELECT seq"
                  " FROM jobs WHERE state = 0); DELETE FROM jobs WHERE"
                  " state = 0;");
    });
  }
  if (!s.ok()) return failed(s);
  absl::StatusOr<std::string> secret =
      disk_cache::QueryText(db->db(),
                            "SELECT ifnull((SELECT value FROM meta WHERE"
                            " name = 'token_secret'), '')");
  if (!secret.ok()) return failed(secret.status());
  if (secret->size() != 32) {
    std::string fresh(32, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&fresh[0]), 32) != 1) {
      return absl::InternalError("job store: no random bytes for its secret");
    }
    absl::StatusOr<Statement> put =
        Prepare(db->db(),
                "INSERT OR REPLACE INTO meta (name, value) VALUES"
                " ('token_secret', ?1)");
    if (!put.ok()) return failed(put.status());
    BindBytes(put->get(), 1, fresh);
    s = db->Step(put->get(), "store the token secret");
    if (!s.ok()) return failed(s);
    *secret = std::move(fresh);
  }
  return std::unique_ptr<SqliteJobStore>(
      new SqliteJobStore(std::move(db), std::move(*secret)));
}

absl::StatusOr<std::vector<JobRecord>> SqliteJobStore::LoadJobs() {
  absl::MutexLock lock(&mu_);
  const std::string sql = absl::StrCat("SELECT ", kJobColumns,
                                       " FROM jobs WHERE state != 0"
                                       " ORDER BY seq");
  absl::StatusOr<Statement> stmt = Prepare(db_->db(), sql.c_str());
  if (!stmt.ok()) return stmt.status();
  std::vector<JobRecord> out;
  int rc;
  while ((rc = sqlite3_step(stmt->get())) == SQLITE_ROW) {
    out.push_back(RecordAt(stmt->get()));
  }
  if (rc != SQLITE_DONE) return SqliteStatus(db_->db(), rc, "read the jobs");
  return out;
}

absl::Status SqliteJobStore::SaveLocked(const JobRecord& job) {
  sqlite3_stmt* s = db_->save.get();
  ScopedReset reset(s);
  BindRecord(s, job);
  return db_->Step(s, "save a job");
}

absl::Status SqliteJobStore::BeginJob(JobRecord* job) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<int64_t> next = disk_cache::QueryInt(
      db_->db(), "SELECT ifnull(max(seq), 0) + 1 FROM jobs");
  if (!next.ok()) return next.status();
  job->seq = *next;
  job->state = JobState::kStaging;
  return SaveLocked(*job);
}

absl::Status SqliteJobStore::AddItems(int64_t seq, int64_t first_index,
                                      const std::vector<std::string>& requests,
                                      const std::vector<std::string>& extras) {
  absl::MutexLock lock(&mu_);
  return db_->Transaction([&]() -> absl::Status {
    sqlite3_stmt* s = db_->add_item.get();
    for (size_t i = 0; i < requests.size(); ++i) {
      ScopedReset reset(s);
      sqlite3_bind_int64(s, 1, seq);
      sqlite3_bind_int64(s, 2, first_index + static_cast<int64_t>(i));
      BindBytes(s, 3, requests[i]);
      if (i < extras.size()) {
        BindBytes(s, 4, extras[i]);
      } else {
        sqlite3_bind_null(s, 4);
      }
      absl::Status st = db_->Step(s, "store an item");
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  });
}

absl::Status SqliteJobStore::Publish(const JobRecord& job) {
  absl::MutexLock lock(&mu_);
  return SaveLocked(job);
}

absl::Status SqliteJobStore::SaveNotify(const JobRecord& job) {
  absl::MutexLock lock(&mu_);
  return SaveLocked(job);
}

absl::StatusOr<JobRecord> SqliteJobStore::LoadJob(const std::string& id) {
  // The manager has every job of its own file loaded: asked, it is gone.
  return absl::NotFoundError(absl::StrCat("no job ", id));
}

absl::Status SqliteJobStore::Drop(int64_t seq) {
  absl::MutexLock lock(&mu_);
  return db_->Transaction([&]() -> absl::Status {
    for (const char* sql : {"DELETE FROM items WHERE job = ?1",
                            "DELETE FROM answers WHERE job = ?1",
                            "DELETE FROM jobs WHERE seq = ?1"}) {
      absl::StatusOr<Statement> s = Prepare(db_->db(), sql);
      if (!s.ok()) return s.status();
      sqlite3_bind_int64(s->get(), 1, seq);
      absl::Status st = db_->Step(s->get(), "remove a job");
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<PendingItem>> SqliteJobStore::Pending(
    int64_t seq, int64_t from_index, int limit) {
  absl::MutexLock lock(&mu_);
  sqlite3_stmt* s = db_->pending.get();
  ScopedReset reset(s);
  sqlite3_bind_int64(s, 1, seq);
  sqlite3_bind_int64(s, 2, from_index);
  sqlite3_bind_int(s, 3, limit);
  std::vector<PendingItem> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    out.push_back(PendingItem{sqlite3_column_int64(s, 0), Text(s, 1)});
  }
  if (rc != SQLITE_DONE) return SqliteStatus(db_->db(), rc, "read items");
  return out;
}

absl::StatusOr<int64_t> SqliteJobStore::MaxAnswerKey(int64_t seq) {
  absl::MutexLock lock(&mu_);
  sqlite3_stmt* s = db_->max_answer.get();
  ScopedReset reset(s);
  sqlite3_bind_int64(s, 1, seq);
  const int rc = sqlite3_step(s);
  if (rc != SQLITE_ROW) return SqliteStatus(db_->db(), rc, "read answers");
  return sqlite3_column_int64(s, 0);
}

absl::Status SqliteJobStore::Commit(const std::vector<Finish>& finishes,
                                    const std::vector<JobRecord>& jobs,
                                    std::vector<int64_t>* /*lost: none*/) {
  absl::MutexLock lock(&mu_);
  return db_->Transaction([&]() -> absl::Status {
    for (const Finish& f : finishes) {
      if (f.outcome == Outcome::kDone && !f.answer.empty()) {
        sqlite3_stmt* a = db_->answer.get();
        ScopedReset reset(a);
        sqlite3_bind_int64(a, 1, f.seq);
        sqlite3_bind_int64(a, 2, f.answer_key);
        BindBytes(a, 3, f.answer);
        absl::Status st = db_->Step(a, "store an answer");
        if (!st.ok()) return st;
      }
      sqlite3_stmt* s = db_->finish.get();
      ScopedReset reset(s);
      sqlite3_bind_int64(s, 1, f.seq);
      sqlite3_bind_int64(s, 2, f.index);
      sqlite3_bind_int(s, 3, static_cast<int>(f.outcome));
      sqlite3_bind_int64(s, 4, f.answer_key);
      if (f.outcome == Outcome::kFailed) {
        BindBytes(s, 5, f.failure);
      } else {
        sqlite3_bind_null(s, 5);
      }
      absl::Status st = db_->Step(s, "store an outcome");
      if (!st.ok()) return st;
    }
    for (const JobRecord& j : jobs) {
      absl::Status st = SaveLocked(j);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> SqliteJobStore::FailPending(int64_t seq,
                                                    absl::string_view failure,
                                                    JobRecord* job) {
  absl::MutexLock lock(&mu_);
  int64_t failed = 0;
  absl::Status st = db_->Transaction([&]() -> absl::Status {
    sqlite3_stmt* s = db_->fail_pending.get();
    ScopedReset reset(s);
    sqlite3_bind_int64(s, 1, seq);
    BindBytes(s, 2, failure);
    absl::Status step = db_->Step(s, "fail the items left");
    if (!step.ok()) return step;
    failed = sqlite3_changes64(db_->db());
    job->items_failed += failed;
    job->bytes += failed * static_cast<int64_t>(failure.size());
    return SaveLocked(*job);
  });
  if (!st.ok()) return st;
  return failed;
}

absl::StatusOr<std::vector<StoredResult>> SqliteJobStore::Results(
    int64_t seq, int64_t from_index, int limit) {
  absl::MutexLock lock(&mu_);
  sqlite3_stmt* s = db_->results.get();
  ScopedReset reset(s);
  sqlite3_bind_int64(s, 1, seq);
  sqlite3_bind_int64(s, 2, from_index);
  sqlite3_bind_int(s, 3, limit);
  std::vector<StoredResult> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const auto outcome = static_cast<Outcome>(sqlite3_column_int(s, 2));
    if (outcome == Outcome::kPending) return out;
    out.push_back(StoredResult{sqlite3_column_int64(s, 0), Text(s, 1), outcome,
                               Text(s, 3), Text(s, 4)});
  }
  if (rc != SQLITE_DONE) return SqliteStatus(db_->db(), rc, "read results");
  return out;
}

int64_t SqliteJobStore::TotalBytes() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<int64_t> n =
      disk_cache::QueryInt(db_->db(), "SELECT ifnull(sum(bytes), 0) FROM jobs");
  return n.ok() ? *n : 0;
}

}  // namespace jobs
