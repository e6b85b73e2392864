#include "snapshot/sqlite_db.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace snapshot {
namespace {

// The progress handler runs every this many VM instructions: tens of
// microseconds of work, so that a query notices its limit at once.
constexpr int kProgressOps = 1000;
// No value of the snapshot comes near this; a bigger one is SQLITE_TOOBIG.
constexpr int kMaxValueBytes = 1 << 20;

int StopWhenLimited(void* limit) {
  return static_cast<const LoadLimit*>(limit)->Check().ok() ? 0 : 1;
}

}  // namespace

Db::~Db() {
  if (db_ != nullptr) sqlite3_close(db_);
}

absl::Status Db::Open(const std::string& path, const LoadLimit& limit) {
  limit_ = &limit;
  // With SQLITE_USE_URI a name that starts with "file:" is a URI whose
  // parameters (vfs=, immutable=, nolock=...) change how the file is read;
  // "./" in front makes any relative name a plain file name.
  const std::string name =
      !path.empty() && path[0] == '/' ? path : absl::StrCat("./", path);
  int rc = sqlite3_open_v2(name.c_str(), &db_,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  struct Setting {
    int op, value;
  };
  for (const Setting& s : {Setting{SQLITE_DBCONFIG_DEFENSIVE, 1},
                           Setting{SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
                           Setting{SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
                           Setting{SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},
                           Setting{SQLITE_DBCONFIG_ENABLE_VIEW, 0},
                           Setting{SQLITE_DBCONFIG_DQS_DML, 0}}) {
    if (rc == SQLITE_OK) rc = sqlite3_db_config(db_, s.op, s.value, nullptr);
  }
  if (rc != SQLITE_OK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open snapshot ", path, ": ", sqlite3_errstr(rc)));
  }
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_progress_handler(db_, kProgressOps, &StopWhenLimited,
                           const_cast<LoadLimit*>(&limit));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SchemaObject>> Db::ReadSchema() {
  std::vector<SchemaObject> objects;
  absl::Status s = Query(
      "SELECT type, name, tbl_name, coalesce(sql, ''), "
      "type = 'table' AND rootpage = 0 FROM sqlite_master",
      [&](sqlite3_stmt* st) {
        objects.push_back({std::string(Text(st, 0)),
                           std::string(Text(st, 1)),
                           std::string(Text(st, 2)),
                           std::string(Text(st, 3)),
                           Int(st, 4) != 0,
                           {}});
      });
  if (!s.ok()) return s;
  for (SchemaObject& o : objects) {
    if (o.type != "table" || o.virtual_table) continue;
    // hidden: 2 and 3 are VIRTUAL and STORED generated columns.
    s = Query("SELECT name FROM pragma_table_xinfo(?1) WHERE hidden IN (2, 3)",
              [&](sqlite3_stmt* st) {
                o.generated_columns.push_back(std::string(Text(st, 0)));
              },
              {o.name});
    if (!s.ok()) return s;
  }
  return objects;
}

bool Db::HasTable(absl::string_view name) {
  bool found = false;
  absl::Status s = Query(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND rootpage != 0 "
      "AND name = ?1",
      [&](sqlite3_stmt*) { found = true; }, {name});
  return s.ok() && found;
}

absl::Status Db::Query(const std::string& sql,
                       absl::FunctionRef<void(sqlite3_stmt*)> row,
                       std::initializer_list<absl::string_view> params) {
  if (absl::Status s = limit_->Check(); !s.ok()) return s;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "snapshot query failed (", sqlite3_errmsg(db_), "): ", sql));
  }
  int index = 0;
  for (absl::string_view p : params) {
    sqlite3_bind_text64(stmt, ++index, p.empty() ? "" : p.data(), p.size(),
                        SQLITE_TRANSIENT, SQLITE_UTF8);
  }
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
  sqlite3_finalize(stmt);
  if (rc == SQLITE_INTERRUPT) {
    if (absl::Status s = limit_->Check(); !s.ok()) return s;
  }
  if (rc != SQLITE_DONE) {
    return absl::InternalError(
        absl::StrCat("reading the snapshot failed: ", sqlite3_errstr(rc)));
  }
  return absl::OkStatus();
}

std::string QuoteIdentifier(absl::string_view name) {
  return absl::StrCat("\"", absl::StrReplaceAll(name, {{"\"", "\"\""}}), "\"");
}

}  // namespace snapshot
