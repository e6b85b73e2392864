// The snapshot file's schema check (schema_check.h), through the loader's
// own connection (sqlite_db.h): a file of real tables passes; a view,
// trigger, virtual table or generated column anywhere, or a missing table,
// refuses it with the object's name.
#include "snapshot/schema_check.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "snapshot/load_limit.h"
#include "snapshot/sqlite_db.h"
#include "testing/raw_sqlite.h"

namespace snapshot {
namespace {

// A SQLite file holding every required table (Id, Name), then `sql`.
class SchemaFile {
 public:
  explicit SchemaFile(const std::string& sql)
      : path_(absl::StrCat(::testing::TempDir(), "/schema-", getpid(), ".db")) {
    std::remove(path_.c_str());
    std::string ddl;
    for (absl::string_view t : kRequiredTables) {
      absl::StrAppend(&ddl, "CREATE TABLE ", t, " (Id INTEGER, Name TEXT);");
    }
    error_ = testing_util::RawExec(path_, "BEGIN;" + ddl + sql + "COMMIT;");
  }
  ~SchemaFile() { std::remove(path_.c_str()); }

  const std::string& error() const { return error_; }

  // The check as the loader runs it.
  absl::Status Check() {
    const LoadLimit unlimited;
    Db db;
    absl::Status s = db.Open(path_, unlimited);
    if (!s.ok()) return s;
    absl::StatusOr<std::vector<SchemaObject>> objects = db.ReadSchema();
    if (!objects.ok()) return objects.status();
    return CheckSchema(*objects, kRequiredTables);
  }

 private:
  std::string path_;
  std::string error_;
};

struct Case {
  const char* name;
  const char* sql;    // after the required tables
  const char* error;  // "" when the file passes
};

TEST(SchemaCheck, RefusesWhatRunsSqlOfTheFilesChoosingAndNamesIt) {
  const Case cases[] = {
      {"real tables", "", ""},
      {"an index, as vPIC's Pattern has",
       "CREATE INDEX idx_pattern ON Pattern(Name, Id);", ""},
      {"a table the loader does not read", "CREATE TABLE Extra (x);", ""},
      {"table names in another case",
       "DROP TABLE Make; CREATE TABLE MAKE (Id);", ""},
      {"a never-ending view in a table's place",
       "DROP TABLE Manufacturer; CREATE VIEW Manufacturer AS "
       "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
       "SELECT i AS Id, 'X' AS Name FROM n;",
       "it holds view \"Manufacturer\""},
      {"a view beside the tables", "CREATE VIEW v AS SELECT 1;",
       "it holds view \"v\""},
      {"a trigger",
       "CREATE TRIGGER t AFTER INSERT ON Pattern BEGIN SELECT 1; END;",
       "it holds trigger \"t\" on \"Pattern\""},
      {"a virtual table in a table's place",
       "DROP TABLE Model; CREATE VIRTUAL TABLE Model USING fts5(Name);",
       "it holds virtual table \"Model\""},
      {"a generated column",
       "DROP TABLE Element; CREATE TABLE Element (Id INTEGER, Name TEXT, "
       "w AS (length(Name) * 2));",
       "its table \"Element\" has generated column \"w\""},
      {"a missing table", "DROP TABLE Wmi_Make;", "it has no Wmi_Make table"},
      {"a name that is not printable text",
       "CREATE VIEW \"bad\nname\" AS SELECT 1;",
       "it holds view \"bad\\nname\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SchemaFile file(c.sql);
    ASSERT_EQ(file.error(), "");
    const absl::Status s = file.Check();
    if (*c.error == '\0') {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
      EXPECT_TRUE(absl::StrContains(s.message(), c.error)) << s;
    }
  }
}

TEST(SchemaCheck, ALongNameIsCut) {
  SchemaObject view{"view", std::string(1000, 'v'), "", "", false, {}};
  const absl::Status s = CheckSchema({view}, {});
  EXPECT_TRUE(absl::StrContains(
      s.message(), absl::StrCat("\"", std::string(64, 'v'), "...\"")))
      << s;
  EXPECT_LT(s.message().size(), 200u);
}

}  // namespace
}  // namespace snapshot
