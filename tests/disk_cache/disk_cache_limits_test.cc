// The bounds of the store: a full queue drops and counts, max_bytes evicts
// the oldest, keep_for neither serves nor keeps old rows, and a row the
// caller cannot parse (or that is not intact) is deleted and never served.
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clocks/clock.h"
#include "disk_cache/disk_cache.h"
#include "disk_cache/disk_cache_fixture.h"
#include "disk_cache/row_key.h"

namespace disk_cache_test {
namespace {

// Holds the store's write lock from a connection of the test's own, as
// another process would, until Release.
class WriteLock {
 public:
  explicit WriteLock(const std::string& path) {
    sqlite3_open(path.c_str(), &db_);
    ok_ = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) ==
          SQLITE_OK;
  }
  ~WriteLock() {
    Release();
    sqlite3_close(db_);
  }
  bool ok() const { return ok_; }
  void Release() {
    if (ok_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    ok_ = false;
  }

 private:
  sqlite3* db_ = nullptr;
  bool ok_ = false;
};

TEST_F(DiskCacheTest, AFullQueueDropsAndCountsWithoutBlockingPut) {
  Options o = BaseOptions();
  o.queue_capacity = 4;
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  cache->Put(TestRow(100, base_));
  ASSERT_TRUE(WaitCommitted(*cache, 1));

  WriteLock lock(path_);
  ASSERT_TRUE(lock.ok());
  cache->Put(TestRow(0, base_));
  // The writer took row 0 and waits for the lock.
  ASSERT_TRUE(
      testing_util::Eventually([&] { return cache->stats().queued == 0; }));
  for (int i = 1; i <= 4; ++i) cache->Put(TestRow(i, base_));  // fills it
  EXPECT_EQ(cache->stats().queued, 4u);
  EXPECT_EQ(cache->stats().dropped, 0u);
  for (int i = 5; i <= 7; ++i) cache->Put(TestRow(i, base_));  // over
  EXPECT_EQ(cache->stats().dropped, 3u);
  EXPECT_EQ(cache->stats().committed, 1u);
  // Readers are not held up by the writer's wait.
  EXPECT_EQ(cache->Get(TestVin(100), 0)->value, TestValue(100));
  // The writer's attempt outlasts its busy timeout and fails; it says so,
  // keeps its batch and tries again.
  ASSERT_TRUE(
      testing_util::Eventually([&] { return !warnings_.lines().empty(); }));
  EXPECT_EQ(cache->stats().committed, 1u);

  lock.Release();
  ASSERT_TRUE(WaitCommitted(*cache, 6));
  const DiskCache::Stats s = cache->stats();
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_EQ(s.entries, 6u);
  for (int i = 0; i <= 4; ++i) EXPECT_TRUE(cache->Get(TestVin(i), 0)) << i;
  for (int i = 5; i <= 7; ++i) {
    EXPECT_FALSE(cache->MayContain(TestVin(i), 0)) << i;
    EXPECT_FALSE(cache->Get(TestVin(i), 0)) << i;
  }
  const std::vector<std::string> w = warnings_.lines();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(absl::StrContains(w[0], "is locked by another connection"))
      << w[0];
}

TEST_F(DiskCacheTest, MaxBytesKeepsTheStoreBoundedAndEvictsTheOldest) {
  constexpr int kRows = 300;
  constexpr int kKept = 40;
  uint64_t newest_bytes = 0;
  for (int i = kRows - kKept; i < kRows; ++i) {
    newest_bytes += disk_cache::RowBytes(TestVin(i), TestValue(i));
  }
  Options o = BaseOptions();
  o.max_bytes = newest_bytes;  // exactly the 40 newest fit
  o.batch_rows = 16;
  // Put in a shuffled order: what goes is the oldest decode, not the
  // first put.
  std::vector<int> order(kRows);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  {
    auto cache = OpenCache(o);
    ASSERT_NE(cache, nullptr);
    for (int i : order) {
      cache->Put(TestRow(i, base_));
      ASSERT_LE(cache->stats().bytes, o.max_bytes);
    }
    ASSERT_TRUE(WaitCommitted(*cache, kRows));
    const DiskCache::Stats s = cache->stats();
    EXPECT_EQ(s.entries, uint64_t{kKept});
    EXPECT_EQ(s.bytes, newest_bytes);
    EXPECT_EQ(s.evicted, uint64_t{kRows - kKept});
    for (int i = 0; i < kRows; ++i) {
      EXPECT_EQ(cache->Get(TestVin(i), 0).has_value(), i >= kRows - kKept) << i;
      EXPECT_EQ(cache->MayContain(TestVin(i), 0), i >= kRows - kKept) << i;
    }
  }
  // The file: the rows' bytes and SQLite's own pages, not the 300 rows.
  EXPECT_LT(std::filesystem::file_size(path_), 4 * newest_bytes + 64 * 1024);
  // A lower bound at the next start evicts at Open.
  o.max_bytes = newest_bytes / 2;
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  EXPECT_LE(cache->stats().bytes, o.max_bytes);
  EXPECT_GT(cache->stats().evicted, 0u);
  EXPECT_TRUE(cache->Get(TestVin(kRows - 1), 0).has_value());
  EXPECT_FALSE(cache->Get(TestVin(kRows - kKept), 0).has_value());
}

TEST_F(DiskCacheTest, ARowLargerThanTheWholeStoreIsDropped) {
  Options o = BaseOptions();
  o.max_bytes = 1000;
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  cache->Put(Row{TestVin(1), 0, std::string(2000, 'x'), base_});
  cache->Put(Row{TestVin(2), 0, "small", base_});
  ASSERT_TRUE(WaitCommitted(*cache, 1));
  ASSERT_TRUE(
      testing_util::Eventually([&] { return cache->stats().dropped == 1; }));
  EXPECT_FALSE(cache->Get(TestVin(1), 0).has_value());
  EXPECT_TRUE(cache->Get(TestVin(2), 0).has_value());
}

TEST_F(DiskCacheTest, RowsPastKeepForAreNotServedAndAreDeleted) {
  clocks::FakeClock clock(absl::FromUnixSeconds(1700000000));
  const absl::Time t0 = clock.WallNow();
  Options o = BaseOptions();
  o.keep_for = absl::Hours(1);
  o.clock = &clock;
  {
    auto cache = OpenCache(o);
    ASSERT_NE(cache, nullptr);
    cache->Put(Row{TestVin(1), 0, "too old already", t0 - absl::Hours(2)});
    cache->Put(Row{TestVin(2), 0, "half an hour old", t0 - absl::Minutes(30)});
    cache->Put(Row{TestVin(3), 0, "fresh", t0});
    ASSERT_TRUE(testing_util::Eventually([&] {
      return cache->stats().committed == 2 && cache->stats().expired == 1;
    }));
    EXPECT_FALSE(cache->Get(TestVin(1), 0).has_value());
    EXPECT_TRUE(cache->Get(TestVin(2), 0).has_value());

    clock.Advance(absl::Minutes(45));  // row 2 is now 75 minutes old
    EXPECT_FALSE(cache->Get(TestVin(2), 0).has_value());
    EXPECT_TRUE(cache->Get(TestVin(3), 0).has_value());
    std::vector<int> warm;
    cache->ForEachNewest(10, [&](Row row) {
      warm.push_back(IndexOf(row.key));
      return true;
    });
    EXPECT_EQ(warm, std::vector<int>{3});

    // The writer's next purge (due: over a minute since the last) deletes it.
    cache->Put(Row{TestVin(4), 0, "another", clock.WallNow()});
    ASSERT_TRUE(
        testing_util::Eventually([&] { return cache->stats().expired == 2; }));
    EXPECT_EQ(cache->stats().entries, 2u);
    EXPECT_FALSE(cache->MayContain(TestVin(2), 0));
  }
  EXPECT_EQ(RawInt(path_, "SELECT count(*) FROM entries"), 2);
  // Open purges too.
  clock.Advance(absl::Hours(2));
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->stats().expired, 2u);
  EXPECT_EQ(cache->stats().entries, 0u);
  EXPECT_EQ(RawInt(path_, "SELECT count(*) FROM entries"), 0);
}

// A value the caller cannot parse (here bytes written behind the cache's
// back, with a matching checksum): after Discard it is gone and counted.
TEST_F(DiskCacheTest, ADiscardedRowIsDeletedCountedAndNeverServedAgain) {
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 5, base_);
  }
  const std::string garbage = "\x08\xff\xff\xff\xff\x0f garbage";
  ASSERT_EQ(
      RawExec(path_, absl::StrCat("UPDATE entries SET value = x'",
                                  "08ffffffff0f2067617262616765",
                                  "', crc = ", disk_cache::Checksum(garbage),
                                  " WHERE key = '", TestVin(2), "'")),
      "");
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    absl::optional<Row> row = cache->Get(TestVin(2), 0);
    ASSERT_TRUE(row.has_value());
    ASSERT_EQ(row->value, garbage);  // the cache cannot know; the caller can
    cache->Discard(TestVin(2), 0);
    EXPECT_FALSE(cache->MayContain(TestVin(2), 0));  // at once
    EXPECT_FALSE(cache->Get(TestVin(2), 0).has_value());
    ASSERT_TRUE(
        testing_util::Eventually([&] { return cache->stats().corrupt == 1; }));
    EXPECT_EQ(cache->stats().entries, 4u);
    EXPECT_TRUE(cache->Get(TestVin(3), 0).has_value());
  }
  EXPECT_EQ(
      RawInt(path_, absl::StrCat("SELECT count(*) FROM entries WHERE key = '",
                                 TestVin(2), "'")),
      0);
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_FALSE(cache->Get(TestVin(2), 0).has_value());
  EXPECT_EQ(cache->stats().entries, 4u);
}

// A row that is not as the writer left it (a value without its checksum, a
// column of the wrong type) is never served, and is deleted.
TEST_F(DiskCacheTest, ARowThatIsNotIntactIsNeverServed) {
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 5, base_);
  }
  ASSERT_EQ(
      RawExec(path_, absl::StrCat("UPDATE entries SET value = x'00ff' "
                                  "WHERE key = '",
                                  TestVin(1),
                                  "';"
                                  "UPDATE entries SET decode_time = 'soon' "
                                  "WHERE key = '",
                                  TestVin(3), "';")),
      "");
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_FALSE(cache->Get(TestVin(1), 0).has_value());
  std::vector<int> warm;
  cache->ForEachNewest(10, [&](Row row) {
    warm.push_back(IndexOf(row.key));
    return true;
  });
  EXPECT_EQ(warm, (std::vector<int>{4, 2, 0}));
  ASSERT_TRUE(
      testing_util::Eventually([&] { return cache->stats().corrupt == 2; }));
  EXPECT_FALSE(cache->Get(TestVin(3), 0).has_value());
  EXPECT_EQ(cache->stats().entries, 3u);
}

}  // namespace
}  // namespace disk_cache_test
