#include "disk_cache/store_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "util/private_files.h"

namespace disk_cache {
namespace {

constexpr absl::Duration kBusyTimeout = absl::Seconds(2);

// The columns and index of kSchemaVersion, as the code reads them.
constexpr char kSchemaProbe[] =
    "SELECT id, key, model_year, value, crc, decode_time, stored_at, bytes "
    "FROM entries INDEXED BY entries_by_age LIMIT 0";

absl::Status MigrateCache(sqlite3* db, int from) {
  return from == 1 ? Exec(db, kMigrationFrom1) : absl::OkStatus();
}

struct Verdict {
  enum Kind { kNew, kOurs, kBroken };
  Kind kind;
  std::string problem;  // kBroken: what is wrong, after "disk cache <path>"
};

Verdict Broken(std::string problem) {
  return Verdict{Verdict::kBroken, std::move(problem)};
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Whether `path` starts with SQLite's 16-byte magic string (and is long
// enough to hold its 100-byte header).
bool HasSqliteHeader(const std::string& path) {
  static constexpr char kMagic[] = "SQLite format 3";  // and its NUL
  char header[100];
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return true;  // let SQLite say what is wrong
  const size_t n = fread(header, 1, sizeof(header), f);
  fclose(f);
  return n == sizeof(header) && memcmp(header, kMagic, sizeof(kMagic)) == 0;
}

// quick_check's answer (one message a line) as one short clause.
std::string OneLine(std::string text) {
  constexpr size_t kMax = 200;
  text = absl::StrReplaceAll(text, {{"\n", "; "}});
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

// A failed query on the file being inspected: the file is damaged or not a
// database (set it aside), or it cannot be read now (busy, I/O: fail, and
// leave it where it is).
absl::StatusOr<Verdict> QueryFailed(const StoreFormat& f, sqlite3* db,
                                    const std::string& path,
                                    const absl::Status& status) {
  const int code = sqlite3_errcode(db) & 0xff;
  if (code == SQLITE_NOTADB) {
    return Broken(
        absl::StrCat("is not a SQLite database (", sqlite3_errmsg(db), ")"));
  }
  if (code == SQLITE_CORRUPT) {
    return Broken(absl::StrCat("is a damaged SQLite database (",
                               sqlite3_errmsg(db), ")"));
  }
  return absl::Status(status.code(),
                      absl::StrCat(f.what, " ", path, ": ", status.message()));
}

// Brings a file of schema `version` to the format's, in one transaction:
// all of it, or nothing.
absl::Status Migrate(const StoreFormat& f, sqlite3* db, int version) {
  const std::string stamp =
      absl::StrCat("PRAGMA user_version=", f.schema_version);
  absl::Status s = Exec(db, "BEGIN IMMEDIATE");
  if (s.ok() && f.migrate != nullptr) s = f.migrate(db, version);
  if (s.ok()) s = Exec(db, stamp.c_str());
  if (s.ok()) s = Exec(db, "COMMIT");
  if (!s.ok()) Exec(db, "ROLLBACK").IgnoreError();
  return s;
}

absl::StatusOr<Verdict> Inspect(const StoreFormat& f, const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Verdict{Verdict::kNew, ""};
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot stat ", f.what, " ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return Broken("is not a regular file");
  // Not SQLite at all: said before SQLite opens it, since SQLite would
  // delete a -wal beside it on close, and that belongs with the evidence.
  if (st.st_size > 0 && !HasSqliteHeader(path)) {
    return Broken("is not a SQLite database (no SQLite header)");
  }

  absl::StatusOr<Connection> opened =
      OpenConnection(path, SQLITE_OPEN_READWRITE, kBusyTimeout);
  if (!opened.ok()) {
    if (!absl::IsDataLoss(opened.status()) &&
        !absl::IsFailedPrecondition(opened.status())) {
      return absl::Status(
          opened.status().code(),
          absl::StrCat(f.what, " ", path, ": ", opened.status().message()));
    }
    return Broken(
        absl::StrCat("cannot be opened (", opened.status().message(), ")"));
  }
  sqlite3* db = opened->get();
  if (sqlite3_db_readonly(db, "main") == 1) return Broken("is not writable");

  absl::StatusOr<int64_t> app = QueryInt(db, "PRAGMA application_id");
  if (!app.ok()) return QueryFailed(f, db, path, app.status());
  absl::StatusOr<int64_t> version = QueryInt(db, "PRAGMA user_version");
  if (!version.ok()) return QueryFailed(f, db, path, version.status());
  absl::StatusOr<std::string> tables = QueryText(
      db,
      "SELECT ifnull(group_concat(name, ', '), '') FROM sqlite_master "
      "WHERE type = 'table'");
  if (!tables.ok()) return QueryFailed(f, db, path, tables.status());

  if (*app == 0 && tables->empty()) return Verdict{Verdict::kNew, ""};
  if (*app != f.application_id) {
    return Broken(absl::StrCat(
        "is another program's SQLite database (application_id ", *app,
        ", tables: ", tables->empty() ? "none" : *tables, ")"));
  }
  if (*version > f.schema_version) {
    return Broken(absl::StrCat("has schema version ", *version,
                               ", newer than this build's ", f.schema_version));
  }
  if (*version < f.oldest_version) {
    return Broken(absl::StrCat("has schema version ", *version,
                               ", older than this build's ", f.schema_version,
                               ", which it cannot read"));
  }
  absl::StatusOr<std::string> check = QueryText(db, "PRAGMA quick_check");
  if (!check.ok()) return QueryFailed(f, db, path, check.status());
  if (*check != "ok") {
    return Broken(
        absl::StrCat("fails PRAGMA quick_check (", OneLine(*check), ")"));
  }
  if (*version < f.schema_version) {
    absl::Status migrated = Migrate(f, db, static_cast<int>(*version));
    if (!migrated.ok()) {
      return Broken(absl::StrCat("cannot be migrated from schema version ",
                                 *version, " (", migrated.message(), ")"));
    }
  }
  absl::StatusOr<Statement> probe = Prepare(db, f.schema_probe);
  if (!probe.ok()) {
    return Broken(absl::StrCat("lacks the table or index of schema version ",
                               f.schema_version, " (", sqlite3_errmsg(db),
                               ")"));
  }
  return Verdict{Verdict::kOurs, ""};
}

// Opens (creating) the file, turns WAL on and, in a new file, creates the
// schema and stamps the header, in one transaction.
absl::StatusOr<Connection> Create(const StoreFormat& f,
                                  const std::string& path) {
  absl::StatusOr<Connection> opened = OpenConnection(
      path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, kBusyTimeout);
  if (!opened.ok()) {
    return absl::Status(opened.status().code(),
                        absl::StrCat("cannot create ", f.what, " ", path, ": ",
                                     opened.status().message()));
  }
  sqlite3* db = opened->get();
  auto failed = [&f, &path](const absl::Status& s) {
    return absl::Status(s.code(),
                        absl::StrCat(f.what, " ", path, ": ", s.message()));
  };
  absl::StatusOr<std::string> mode = QueryText(db, "PRAGMA journal_mode=WAL");
  if (!mode.ok()) return failed(mode.status());
  if (*mode != "wal") {
    return absl::FailedPreconditionError(
        absl::StrCat(f.what, " ", path,
                     ": cannot use WAL mode (journal_mode is ", *mode, ")"));
  }
  // A WAL larger than 64 MiB is cut back to that after a checkpoint.
  absl::Status s =
      Exec(db, "PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=67108864");
  if (!s.ok()) return failed(s);
  absl::StatusOr<int64_t> app = QueryInt(db, "PRAGMA application_id");
  if (!app.ok()) return failed(app.status());
  if (*app == 0) {
    const std::string stamp =
        absl::StrCat("PRAGMA application_id=", f.application_id,
                     "; PRAGMA user_version=", f.schema_version);
    s = Exec(db, "BEGIN IMMEDIATE");
    if (s.ok()) s = Exec(db, f.schema_sql);
    if (s.ok()) s = Exec(db, stamp.c_str());
    if (s.ok()) s = Exec(db, "COMMIT");
    if (!s.ok()) {
      Exec(db, "ROLLBACK").IgnoreError();
      return failed(s);
    }
  }
  return std::move(*opened);
}

}  // namespace

const StoreFormat kCacheFormat = {
    "disk cache", kApplicationId, kSchemaVersion, 1,
    kSchemaSql,   kSchemaProbe,   &MigrateCache};

absl::StatusOr<std::string> SetAside(const std::string& path,
                                     const std::string& problem,
                                     const Warn& warn, absl::Time now) {
  return SetAside(kCacheFormat.what, path, problem, warn, now);
}

absl::StatusOr<std::string> SetAside(const char* what, const std::string& path,
                                     const std::string& problem,
                                     const Warn& warn, absl::Time now) {
  const std::string stem = absl::StrCat(
      path, ".broken-",
      absl::FormatTime("%Y%m%dT%H%M%SZ", now, absl::UTCTimeZone()));
  std::string aside = stem;
  for (int n = 2; Exists(aside); ++n) aside = absl::StrCat(stem, "-", n);
  if (rename(path.c_str(), aside.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", path, " ", problem, ", and moving it to ",
                     aside, " failed: ", std::strerror(errno)));
  }
  // A journal left beside the path must not be applied to the new store:
  // it goes with the file it belongs to, or away.
  for (const char* suffix : {"-wal", "-journal"}) {
    const std::string from = path + suffix;
    if (!Exists(from)) continue;
    if (rename(from.c_str(), (aside + suffix).c_str()) != 0 &&
        unlink(from.c_str()) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, " ", path, ": cannot move or delete ", from, ": ",
                       std::strerror(errno)));
    }
  }
  unlink((path + "-shm").c_str());
  if (warn) {
    warn(absl::StrCat(what, " ", path, " ", problem, "; moved it to ", aside,
                      " and started an empty store"));
  }
  return aside;
}

absl::StatusOr<Connection> OpenStoreFile(const std::string& path,
                                         const Warn& warn, absl::Time now) {
  return OpenStoreFile(path, kCacheFormat, warn, now);
}

absl::StatusOr<Connection> OpenStoreFile(const std::string& path,
                                         const StoreFormat& format,
                                         const Warn& warn, absl::Time now) {
  const StoreFormat& f = format;
  // The file holds every VIN asked, with times: this user's alone (0600 in
  // a directory of its own), whatever the umask.
  auto refused = [&f, &path](const absl::Status& s) {
    return absl::Status(s.code(),
                        absl::StrCat(f.what, " ", path, ": ", s.message()));
  };
  const std::string parent = std::filesystem::path(path).parent_path();
  auto warn_about = [&f, &path, &warn](const std::string& w) {
    if (warn) warn(absl::StrCat(f.what, " ", path, ": ", w));
  };
  if (absl::Status s = util::EnsurePrivateDirectory(parent, warn_about);
      !s.ok()) {
    return refused(s);
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    if (absl::Status s = util::RestrictToOwner(path + suffix); !s.ok()) {
      return refused(s);
    }
  }
  absl::StatusOr<Verdict> verdict = Inspect(f, path);
  if (!verdict.ok()) return verdict.status();
  if (verdict->kind == Verdict::kBroken) {
    absl::StatusOr<std::string> aside =
        SetAside(f.what, path, verdict->problem, warn, now);
    if (!aside.ok()) return aside.status();
  }
  // SQLite creates a database 0644 less the umask, and its -wal and -shm
  // with the database's mode: an empty 0600 file first makes all three
  // private.
  if (absl::Status s = util::CreatePrivateFile(path); !s.ok()) {
    return refused(s);
  }
  return Create(f, path);
}

}  // namespace disk_cache
