// The disk cache's promises to its caller: what is put is there after a
// restart and after a crash, served whole, newest first for warming, and
// cheaply known absent.
#include "disk_cache/disk_cache.h"

#include <signal.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "disk_cache/disk_cache_fixture.h"
#include "testing/subprocess.h"

namespace disk_cache_test {
namespace {

TEST_F(DiskCacheTest, RowsSurviveAReopen) {
  constexpr int kRows = 500;
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    for (int i = 0; i < kRows; ++i) cache->Put(TestRow(i, base_));
    cache->Close();
    EXPECT_EQ(cache->stats().committed, uint64_t{kRows});
  }
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->stats().entries, uint64_t{kRows});
  for (int i = 0; i < kRows; ++i) {
    ASSERT_TRUE(cache->MayContain(TestVin(i), 0)) << i;
    absl::optional<Row> row = cache->Get(TestVin(i), 0);
    ASSERT_TRUE(row.has_value()) << i;
    EXPECT_EQ(row->value, TestValue(i));
    EXPECT_EQ(row->decode_time, base_ + absl::Milliseconds(i));
  }
  // Never stored: another VIN, or the same VIN with a model-year hint.
  for (int i = kRows; i < kRows + 1000; ++i) {
    EXPECT_FALSE(cache->MayContain(TestVin(i), 0)) << i;
    EXPECT_FALSE(cache->Get(TestVin(i), 0).has_value());
  }
  EXPECT_FALSE(cache->MayContain(TestVin(1), 2015));
  EXPECT_FALSE(cache->Get(TestVin(1), 2015).has_value());

  std::vector<int> order;
  cache->ForEachNewest(kRows + 10, [&](Row row) {
    EXPECT_EQ(row.value, TestValue(IndexOf(row.key)));
    order.push_back(IndexOf(row.key));
    return true;
  });
  std::vector<int> newest_first(kRows);
  for (int i = 0; i < kRows; ++i) newest_first[i] = kRows - 1 - i;
  EXPECT_EQ(order, newest_first);
  EXPECT_TRUE(warnings_.lines().empty());
}

TEST_F(DiskCacheTest, ForEachNewestStopsAtItsLimitOrWhenTold) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  PutRows(*cache, 50, base_);
  std::vector<int> seen;
  cache->ForEachNewest(5, [&](Row row) {
    seen.push_back(IndexOf(row.key));
    return true;
  });
  EXPECT_EQ(seen, (std::vector<int>{49, 48, 47, 46, 45}));
  seen.clear();
  cache->ForEachNewest(50, [&](Row row) {
    seen.push_back(IndexOf(row.key));
    return seen.size() < 3;
  });
  EXPECT_EQ(seen, (std::vector<int>{49, 48, 47}));
}

TEST_F(DiskCacheTest, ModelYearHintsAreKeysOfTheirOwn) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  cache->Put(Row{TestVin(1), 0, "no hint", base_});
  cache->Put(Row{TestVin(1), 2015, "hint 2015", base_});
  ASSERT_TRUE(WaitCommitted(*cache, 2));
  EXPECT_EQ(cache->Get(TestVin(1), 0)->value, "no hint");
  EXPECT_EQ(cache->Get(TestVin(1), 2015)->value, "hint 2015");
  EXPECT_FALSE(cache->Get(TestVin(1), 2016).has_value());
  EXPECT_EQ(cache->stats().entries, 2u);
}

TEST_F(DiskCacheTest, ALaterPutReplacesButNeverWithAnOlderDecode) {
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  cache->Put(Row{TestVin(1), 0, "first", base_});
  cache->Put(Row{TestVin(1), 0, "newer", base_ + absl::Minutes(1)});
  cache->Put(Row{TestVin(1), 0, "late but older", base_ + absl::Seconds(30)});
  ASSERT_TRUE(WaitCommitted(*cache, 3));
  absl::optional<Row> row = cache->Get(TestVin(1), 0);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->value, "newer");
  EXPECT_EQ(row->decode_time, base_ + absl::Minutes(1));
  const DiskCache::Stats s = cache->stats();
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, TestVin(1).size() + 5 + 64);
}

TEST_F(DiskCacheTest, AFullBatchCommitsWithoutWaitingForTheInterval) {
  Options o = BaseOptions();
  o.commit_interval = absl::Hours(1);
  o.batch_rows = 8;
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  for (int i = 0; i < 8; ++i) cache->Put(TestRow(i, base_));
  EXPECT_TRUE(WaitCommitted(*cache, 8));
  EXPECT_TRUE(cache->Get(TestVin(7), 0).has_value());
}

TEST_F(DiskCacheTest, CloseCommitsWhatIsQueuedThenDropsPuts) {
  Options o = BaseOptions();
  o.commit_interval = absl::Hours(1);
  o.batch_rows = 1000;
  {
    auto cache = OpenCache(o);
    ASSERT_NE(cache, nullptr);
    for (int i = 0; i < 10; ++i) cache->Put(TestRow(i, base_));
    cache->Close();
    EXPECT_EQ(cache->stats().committed, 10u);
    EXPECT_EQ(cache->stats().queued, 0u);
    cache->Put(TestRow(10, base_));
    EXPECT_EQ(cache->stats().dropped, 1u);
    EXPECT_TRUE(cache->Get(TestVin(9), 0).has_value());  // reads go on
    cache->Close();                                      // idempotent
  }
  auto cache = OpenCache(o);
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->stats().entries, 10u);
  EXPECT_FALSE(cache->Get(TestVin(10), 0).has_value());
}

// Writers and readers on several threads at once (for ThreadSanitizer too).
TEST_F(DiskCacheTest, ConcurrentPutsAndReads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const int i = t * kPerThread + k;
        cache->Put(TestRow(i, base_));
        const int earlier = t * kPerThread + k / 2;
        if (cache->MayContain(TestVin(earlier), 0)) {
          absl::optional<Row> row = cache->Get(TestVin(earlier), 0);
          if (row.has_value()) {
            EXPECT_EQ(row->value, TestValue(earlier));
          }
        }
        (void)cache->stats();
      }
    });
  }
  for (auto& t : threads) t.join();
  cache->Close();
  EXPECT_EQ(cache->stats().committed, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(cache->stats().dropped, 0u);
  for (int i = 0; i < kThreads * kPerThread; ++i) {
    ASSERT_EQ(cache->Get(TestVin(i), 0)->value, TestValue(i)) << i;
  }
}

// A process killed with SIGKILL while it puts rows: at the next Open the
// file is ours and whole, every row committed before the kill is there, and
// every row there is whole.
TEST_F(DiskCacheTest, ASigkillLosesNothingCommittedAndLeavesNoHalfRow) {
  constexpr int kFirst = 2000;
  testing_util::Subprocess child;
  ASSERT_TRUE(
      child.Start({DISK_CACHE_CRASH_WRITER, path_, std::to_string(kFirst)}));
  ASSERT_TRUE(child.WaitForLine("^ready ", absl::Seconds(60)).has_value());
  // Killed once it has committed more since: with Puts and commits going on.
  ASSERT_TRUE(child.WaitForLine("^more ", absl::Seconds(60)).has_value());
  child.Signal(SIGKILL);
  ASSERT_EQ(child.Wait(absl::Seconds(30)), -SIGKILL);
  uint64_t committed_before_kill = 0;
  for (const std::string& line : child.lines()) {
    uint64_t n;
    if (line.rfind("more ", 0) == 0 && absl::SimpleAtoi(line.substr(5), &n)) {
      committed_before_kill = std::max(committed_before_kill, n);
    }
  }
  ASSERT_GT(committed_before_kill, uint64_t{kFirst});
  ASSERT_TRUE(Exists(path_ + "-wal"));  // not closed: the WAL was left

  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(warnings_.lines().empty());
  const DiskCache::Stats s = cache->stats();
  EXPECT_GE(s.entries, committed_before_kill);
  for (int i = 0; i < kFirst; ++i) {
    absl::optional<Row> row = cache->Get(TestVin(i), 0);
    ASSERT_TRUE(row.has_value()) << i;
    ASSERT_EQ(row->value, TestValue(i)) << i;
  }
  uint64_t seen = 0;
  cache->ForEachNewest(s.entries + 1, [&](Row row) {
    const int i = IndexOf(row.key);
    EXPECT_GE(i, 0) << row.key;
    EXPECT_EQ(row.value, TestValue(i)) << i;
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, s.entries);
  EXPECT_EQ(cache->stats().corrupt, 0u);
  EXPECT_EQ(RawText(path_, "PRAGMA integrity_check"), "ok");
  // Still a working store.
  cache->Put(Row{"AFTERTHECRASH0001", 0, "x", absl::Now()});
  ASSERT_TRUE(WaitCommitted(*cache, 1));
  EXPECT_TRUE(cache->Get("AFTERTHECRASH0001", 0).has_value());
}

}  // namespace
}  // namespace disk_cache_test
