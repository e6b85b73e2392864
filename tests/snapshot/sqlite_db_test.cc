// The loader's connection (sqlite_db.h) on files of unknown origin: a query
// that would never end stops at the load's deadline or when it is
// cancelled; a name that looks like a URI is a file name.
#include "snapshot/sqlite_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "snapshot/load_limit.h"
#include "testing/raw_sqlite.h"

namespace snapshot {
namespace {

constexpr char kNeverEnding[] =
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT i FROM n";

// Creates `path` holding table `table`.
void CreateDb(const std::string& path, const std::string& table) {
  ASSERT_EQ(testing_util::RawExec(path, "CREATE TABLE " + table + " (x)"), "");
}

class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = absl::StrCat(::testing::TempDir(), "/db-", getpid(), ".db");
    CreateDb(path_, "T");
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

TEST_F(SqliteDbTest, ANeverEndingQueryStopsAtTheDeadline) {
  const LoadLimit limit(absl::Now() + absl::Milliseconds(100));
  Db db;
  ASSERT_TRUE(db.Open(path_, limit).ok());
  int64_t rows = 0;
  const absl::Status s = db.Query(kNeverEnding, [&](sqlite3_stmt*) { ++rows; });
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_GT(rows, 0);
  // Later queries do not start.
  EXPECT_EQ(db.Query("SELECT 1", [](sqlite3_stmt*) {}).code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST_F(SqliteDbTest, ANeverEndingQueryStopsWhenCancelled) {
  LoadLimit limit;  // no deadline
  Db db;
  ASSERT_TRUE(db.Open(path_, limit).ok());
  std::atomic<bool> running{false};
  std::thread canceller([&] {
    while (!running.load()) std::this_thread::yield();
    limit.Cancel();
  });
  const absl::Status s =
      db.Query(kNeverEnding, [&](sqlite3_stmt*) { running.store(true); });
  canceller.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
}

TEST_F(SqliteDbTest, ItCannotWrite) {
  const LoadLimit unlimited;
  Db db;
  ASSERT_TRUE(db.Open(path_, unlimited).ok());
  EXPECT_FALSE(db.Query("INSERT INTO T VALUES (1)", [](sqlite3_stmt*) {}).ok());
  EXPECT_FALSE(db.Query("ATTACH ':memory:' AS m", [](sqlite3_stmt*) {}).ok());
}

// Debian's SQLite reads a name that starts with "file:" as a URI: here
// "file:NAME?..." would open NAME (absent) instead of the file of that name.
// (A relative name: the test works in the temporary directory.)
TEST_F(SqliteDbTest, ANameLikeAUriIsAFileName) {
  struct InTempDir {
    InTempDir() : old(std::filesystem::current_path()) {
      std::filesystem::current_path(::testing::TempDir());
    }
    ~InTempDir() {
      std::remove(name.c_str());
      std::filesystem::current_path(old);
    }
    const std::filesystem::path old;
    const std::string name =
        absl::StrCat("file:uri-test-", getpid(), ".db?immutable=1");
  } dir;
  CreateDb(absl::StrCat("./", dir.name), "FromTheRightFile");
  const LoadLimit unlimited;
  Db db;
  ASSERT_TRUE(db.Open(dir.name, unlimited).ok());
  EXPECT_TRUE(db.HasTable("FromTheRightFile"));
}

TEST_F(SqliteDbTest, HasTableBindsTheName) {
  const LoadLimit unlimited;
  Db db;
  ASSERT_TRUE(db.Open(path_, unlimited).ok());
  EXPECT_TRUE(db.HasTable("T"));
  EXPECT_FALSE(db.HasTable("X' OR '1'='1"));
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
}

}  // namespace
}  // namespace snapshot
