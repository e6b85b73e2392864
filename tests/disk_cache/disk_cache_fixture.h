// What the disk cache's tests share: a directory of the test's own, a
// thread-safe record of warnings, waiting on the writer's progress, and raw
// SQLite access to the file.
#ifndef VIN_TESTS_DISK_CACHE_DISK_CACHE_FIXTURE_H_
#define VIN_TESTS_DISK_CACHE_DISK_CACHE_FIXTURE_H_

#include <sqlite3.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "disk_cache/disk_cache.h"
#include "disk_cache/test_rows.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/raw_sqlite.h"

namespace disk_cache_test {

using disk_cache::DiskCache;
using disk_cache::Options;
using disk_cache::Row;

// Warnings, from any thread.
class WarnLog {
 public:
  DiskCache::Warn callback() {
    return [this](const std::string& w) {
      absl::MutexLock lock(&mu_);
      lines_.push_back(w);
    };
  }
  std::vector<std::string> lines() const {
    absl::MutexLock lock(&mu_);
    return lines_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// The writer's progress (stats()) can only be watched from outside.
inline bool WaitCommitted(DiskCache& cache, uint64_t n) {
  return testing_util::Eventually([&] { return cache.stats().committed >= n; });
}

inline bool Exists(const std::string& path) {
  return std::filesystem::exists(std::filesystem::symlink_status(path));
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

using testing_util::RawExec;

// The first column of the first row of `sql`, as an integer (-1: no row).
inline int64_t RawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  int64_t out = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    out = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// The first column of the first row of `sql`, as text ("" : no row).
inline std::string RawText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (text != nullptr) out = reinterpret_cast<const char*>(text);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// Each test gets a directory under $TMPDIR (or /tmp), removed afterwards,
// and a store path in it.
class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                          "/disk_cache_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/cache.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Options BaseOptions() const {
    Options o;
    o.path = path_;
    o.commit_interval = absl::Milliseconds(10);
    return o;
  }
  std::unique_ptr<DiskCache> OpenCache(Options o) {
    auto cache = DiskCache::Open(std::move(o), warnings_.callback());
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? std::move(*cache) : nullptr;
  }
  std::unique_ptr<DiskCache> OpenCache() { return OpenCache(BaseOptions()); }

  // Rows 0..n-1, put and committed.
  void PutRows(DiskCache& cache, int n, absl::Time base) {
    const uint64_t before = cache.stats().committed;
    for (int i = 0; i < n; ++i) cache.Put(TestRow(i, base));
    ASSERT_TRUE(WaitCommitted(cache, before + n));
  }

  const absl::Time base_ =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()) - 3600);
  std::string dir_;
  std::string path_;
  WarnLog warnings_;
};

}  // namespace disk_cache_test

#endif  // VIN_TESTS_DISK_CACHE_DISK_CACHE_FIXTURE_H_
