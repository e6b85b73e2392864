// A file at the store's path that is not a store of ours is named, set
// aside (with its WAL) and replaced by an empty store that works; Open fails
// only when no store can be made at the path.
#include <sys/stat.h>

#include <random>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "disk_cache/disk_cache.h"
#include "disk_cache/disk_cache_fixture.h"
#include "disk_cache/row_key.h"
#include "disk_cache/store_file.h"

namespace disk_cache_test {
namespace {

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

class BrokenFileTest : public DiskCacheTest {
 protected:
  // Opens over a bad file: one warning naming the path, `problem` and the
  // file it was moved to, which exists and holds what `path_` held; then
  // the new store is empty and keeps what is put in it across a reopen.
  void ExpectSetAsideAndReplaced(const std::string& problem) {
    const std::string before =
        std::filesystem::is_directory(path_) ? "" : ReadAll(path_);
    {
      auto cache = OpenCache();
      ASSERT_NE(cache, nullptr);
      const std::vector<std::string> w = warnings_.lines();
      ASSERT_EQ(w.size(), 1u);
      EXPECT_TRUE(
          absl::StartsWith(w[0], absl::StrCat("disk cache ", path_, " ")))
          << w[0];
      EXPECT_TRUE(absl::StrContains(w[0], problem)) << w[0];
      const std::string marker = "; moved it to ";
      const size_t at = w[0].find(marker);
      ASSERT_NE(at, std::string::npos) << w[0];
      const size_t from = at + marker.size();
      aside_ = w[0].substr(from, w[0].find(' ', from) - from);
      EXPECT_TRUE(absl::StartsWith(aside_, path_ + ".broken-")) << aside_;
      EXPECT_TRUE(absl::EndsWith(w[0], " and started an empty store")) << w[0];
      ASSERT_TRUE(Exists(aside_));
      if (!before.empty()) {
        EXPECT_TRUE(ReadAll(aside_) == before);
      }

      EXPECT_EQ(cache->stats().entries, 0u);
      PutRows(*cache, 20, base_);
      EXPECT_EQ(cache->Get(TestVin(3), 0)->value, TestValue(3));
    }
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    EXPECT_EQ(warnings_.lines().size(), 1u);  // no second warning
    EXPECT_EQ(cache->stats().entries, 20u);
    EXPECT_EQ(cache->Get(TestVin(19), 0)->value, TestValue(19));
  }
  std::string aside_;
};

TEST_F(BrokenFileTest, RandomBytes) {
  WriteAll(path_, RandomBytes(64 * 1024, 1));
  ExpectSetAsideAndReplaced("is not a SQLite database");
}

TEST_F(BrokenFileTest, ATruncatedStore) {
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 300, base_);
  }  // closed: everything is in the main file, no WAL left
  ASSERT_FALSE(Exists(path_ + "-wal"));
  const std::string whole = ReadAll(path_);
  ASSERT_GT(whole.size(), 100u * 4096);
  WriteAll(path_, whole.substr(0, whole.size() / 2));
  ExpectSetAsideAndReplaced("is a damaged SQLite database");
}

TEST_F(BrokenFileTest, AStoreWithADamagedPage) {
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 300, base_);
  }
  std::string bytes = ReadAll(path_);
  // Garbage over the pages of the middle: the header and schema are intact.
  const std::string junk = RandomBytes(8 * 4096, 2);
  bytes.replace(bytes.size() / 2, junk.size(), junk);
  WriteAll(path_, bytes);
  ExpectSetAsideAndReplaced(
      "fails PRAGMA quick_check (*** in database main ***; Page ");
}

TEST_F(BrokenFileTest, AnotherProgramsDatabase) {
  ASSERT_EQ(RawExec(path_,
                    "CREATE TABLE customers (name TEXT); "
                    "INSERT INTO customers VALUES ('Ada');"),
            "");
  ExpectSetAsideAndReplaced(
      "is another program's SQLite database (application_id 0, tables: "
      "customers)");
}

TEST_F(BrokenFileTest, OurApplicationIdWithANewerSchema) {
  ASSERT_EQ(RawExec(path_, absl::StrCat("PRAGMA application_id = ",
                                        disk_cache::kApplicationId,
                                        "; PRAGMA user_version = 7; "
                                        "CREATE TABLE entries_v7 (x);")),
            "");
  ExpectSetAsideAndReplaced("has schema version 7, newer than this build's 2");
}

TEST_F(BrokenFileTest, OurHeaderWithoutOurTable) {
  ASSERT_EQ(RawExec(path_, absl::StrCat("PRAGMA application_id = ",
                                        disk_cache::kApplicationId,
                                        "; PRAGMA user_version = 2; "
                                        "CREATE TABLE other (x);")),
            "");
  ExpectSetAsideAndReplaced("lacks the table or index of schema version 2");
}

TEST_F(BrokenFileTest, AVersionOneHeaderWithoutItsTable) {
  ASSERT_EQ(RawExec(path_, absl::StrCat("PRAGMA application_id = ",
                                        disk_cache::kApplicationId,
                                        "; PRAGMA user_version = 1; "
                                        "CREATE TABLE other (x);")),
            "");
  ExpectSetAsideAndReplaced("cannot be migrated from schema version 1 (");
  EXPECT_TRUE(absl::StrContains(warnings_.lines()[0], "no such table: entries"))
      << warnings_.lines()[0];
}

// The store of version 0.31 and before (schema 1: a `vin` column) is
// migrated in place, never set aside: its rows answer as before, and new
// keys (vPIC's reference requests, rule 18) go in beside them.
TEST_F(DiskCacheTest, AVersionOneStoreIsMigratedWithItsRows) {
  const absl::Time decoded = base_ - absl::Hours(1);
  std::string sql = absl::StrCat(
      "PRAGMA application_id = ", disk_cache::kApplicationId,
      "; PRAGMA user_version = 1; PRAGMA journal_mode = WAL; "
      "CREATE TABLE entries (id INTEGER PRIMARY KEY, vin TEXT NOT NULL, "
      "model_year INTEGER NOT NULL, value BLOB NOT NULL, crc INTEGER NOT "
      "NULL, decode_time INTEGER NOT NULL, stored_at INTEGER NOT NULL, "
      "bytes INTEGER NOT NULL); "
      "CREATE INDEX entries_by_age ON entries(decode_time, bytes);");
  for (int i = 0; i < 3; ++i) {
    const int year = i == 2 ? 2011 : 0;
    absl::StrAppend(
        &sql, "INSERT INTO entries VALUES (",
        disk_cache::KeyId(TestVin(i), year), ", '", TestVin(i), "', ", year,
        ", X'", absl::BytesToHexString(TestValue(i)), "', ",
        disk_cache::Checksum(TestValue(i)), ", ",
        absl::ToUnixNanos(decoded), ", ", absl::ToUnixNanos(decoded), ", ",
        disk_cache::RowBytes(TestVin(i), TestValue(i)), ");");
  }
  ASSERT_EQ(RawExec(path_, sql), "");
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    EXPECT_TRUE(warnings_.lines().empty());  // nothing set aside
    EXPECT_EQ(cache->stats().entries, 3u);
    for (int i = 0; i < 3; ++i) {
      const int year = i == 2 ? 2011 : 0;
      auto row = cache->Get(TestVin(i), year);
      ASSERT_TRUE(row.has_value()) << i;
      EXPECT_EQ(row->value, TestValue(i));
      EXPECT_EQ(row->decode_time, decoded);
    }
    cache->Put({"GetModelsForMake/honda", 0, "{\"Count\":0}", base_});
  }
  EXPECT_EQ(RawInt(path_, "PRAGMA user_version"), 2);
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->Get(TestVin(1), 0)->value, TestValue(1));
  EXPECT_EQ(cache->Get("GetModelsForMake/honda", 0)->value, "{\"Count\":0}");
  EXPECT_TRUE(warnings_.lines().empty());
}

TEST_F(BrokenFileTest, ADirectory) {
  ASSERT_TRUE(std::filesystem::create_directory(path_));
  ExpectSetAsideAndReplaced("is not a regular file");
  EXPECT_TRUE(std::filesystem::is_directory(aside_));
}

// A WAL beside a bad file goes with it: never replayed into the new store.
TEST_F(BrokenFileTest, ItsWalGoesWithIt) {
  WriteAll(path_, RandomBytes(4096, 3));
  const std::string wal = RandomBytes(10000, 4);
  WriteAll(path_ + "-wal", wal);
  WriteAll(path_ + "-shm", RandomBytes(32768, 5));
  ExpectSetAsideAndReplaced("is not a SQLite database");
  EXPECT_TRUE(ReadAll(aside_ + "-wal") == wal);
}

TEST_F(DiskCacheTest, AnEmptyFileOrDatabaseIsTakenOverWithoutAWarning) {
  WriteAll(path_, "");
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 3, base_);
  }
  const std::string second = dir_ + "/empty.db";
  ASSERT_EQ(RawExec(second, "PRAGMA user_version = 0;"), "");  // creates it
  Options o = BaseOptions();
  o.path = second;
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(warnings_.lines().empty());
  EXPECT_EQ(RawInt(path_, "SELECT count(*) FROM entries"), 3);
}

TEST_F(DiskCacheTest, TheDirectoryIsCreated) {
  Options o = BaseOptions();
  o.path = dir_ + "/a/b/cache.db";
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(Exists(o.path));
}

TEST_F(DiskCacheTest, OpenFailsOnlyWhenNoStoreCanBeMade) {
  WriteAll(dir_ + "/plain-file", "x");
  Options o = BaseOptions();
  o.path = dir_ + "/plain-file/cache.db";  // its directory is a file
  auto cache = DiskCache::Open(o, warnings_.callback());
  ASSERT_FALSE(cache.ok());
  EXPECT_TRUE(absl::StrContains(cache.status().message(), o.path))
      << cache.status();
  EXPECT_TRUE(warnings_.lines().empty());
}

}  // namespace
}  // namespace disk_cache_test
