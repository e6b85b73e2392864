#include "snapshot/sqlite_db.h"

namespace snapshot {

Db::~Db() {
  if (db_ != nullptr) sqlite3_close(db_);
}

absl::Status Db::Open(const std::string& path) {
  const int rc = sqlite3_open_v2(
      path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open snapshot ", path, ": ", sqlite3_errstr(rc)));
  }
  return absl::OkStatus();
}

bool Db::HasTable(absl::string_view name) {
  bool found = false;
  absl::Status s = Query(
      absl::StrCat("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                   "name='",
                   name, "'"),
      [&](sqlite3_stmt*) { found = true; });
  return s.ok() && found;
}

}  // namespace snapshot
