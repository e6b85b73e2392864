// The cache file holds every VIN asked, with times: it and its -wal and
// -shm are created 0600 whatever the umask, in a directory created 0700;
// an older file is made private; a directory every user can write to, or
// that is not this user's, is refused; a group-writable one is warned about.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "disk_cache/disk_cache_fixture.h"

namespace disk_cache_test {
namespace {

// The permission bits of `path` (-1 when it is missing).
int ModeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// Sets the process umask for the scope (tests of one binary run one at a
// time; the cache's threads start inside the scope).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(umask(mask)) {}
  ~ScopedUmask() { umask(old_); }

 private:
  const mode_t old_;
};

using DiskCacheModesTest = DiskCacheTest;

TEST_F(DiskCacheModesTest, FilesAre0600AndNewDirectories0700WhateverTheUmask) {
  for (mode_t mask : {mode_t{022}, mode_t{000}, mode_t{0277}}) {
    SCOPED_TRACE(mask);
    const std::string top = absl::StrCat(dir_, "/umask", mask);
    Options o = BaseOptions();
    o.path = top + "/cache/cache.db";
    ScopedUmask scoped(mask);
    auto cache = OpenCache(o);
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 3, base_);  // committed: the -wal and -shm exist
    ASSERT_TRUE(Exists(o.path + "-wal"));
    ASSERT_TRUE(Exists(o.path + "-shm"));
    EXPECT_EQ(ModeOf(o.path), 0600);
    EXPECT_EQ(ModeOf(o.path + "-wal"), 0600);
    EXPECT_EQ(ModeOf(o.path + "-shm"), 0600);
    EXPECT_EQ(ModeOf(top), 0700);
    EXPECT_EQ(ModeOf(top + "/cache"), 0700);
  }
}

TEST_F(DiskCacheModesTest, AFileOfAnOlderVersionIsMadePrivate) {
  {
    auto cache = OpenCache();
    ASSERT_NE(cache, nullptr);
    PutRows(*cache, 3, base_);
  }
  // As an older version left it, readable by all.
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (Exists(path_ + suffix)) chmod((path_ + suffix).c_str(), 0644);
  }
  ASSERT_EQ(ModeOf(path_), 0644);
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  PutRows(*cache, 1, base_);
  EXPECT_EQ(ModeOf(path_), 0600);
  EXPECT_EQ(ModeOf(path_ + "-wal"), 0600);
  EXPECT_EQ(ModeOf(path_ + "-shm"), 0600);
  EXPECT_EQ(RawInt(path_, "SELECT count(*) FROM entries"), 3);
}

TEST_F(DiskCacheModesTest, ADirectoryEveryUserCanWriteIsRefused) {
  for (mode_t mode : {mode_t{01777}, mode_t{0757}}) {
    SCOPED_TRACE(mode);
    ASSERT_EQ(chmod(dir_.c_str(), mode), 0);
    auto cache = DiskCache::Open(BaseOptions(), warnings_.callback());
    ASSERT_FALSE(cache.ok());
    EXPECT_EQ(cache.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(cache.status().message(),
                                  "is writable by every user"))
        << cache.status();
    EXPECT_TRUE(absl::StrContains(cache.status().message(), path_))
        << cache.status();
    EXPECT_FALSE(Exists(path_));
  }
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  EXPECT_NE(OpenCache(), nullptr);
  EXPECT_TRUE(warnings_.lines().empty());
}

// Debian's user private groups with umask 002 make directories 0775 whose
// group is the user alone: a warning, not a refusal.
TEST_F(DiskCacheModesTest, AGroupWritableDirectoryIsWarnedAbout) {
  ASSERT_EQ(chmod(dir_.c_str(), 0770), 0);
  auto cache = OpenCache();
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(ModeOf(path_), 0600);
  const std::vector<std::string> warnings = warnings_.lines();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(
      absl::StrContains(warnings[0], "is writable by its group (mode 0770"))
      << warnings[0];
  EXPECT_TRUE(absl::StrContains(warnings[0], path_)) << warnings[0];
}

TEST_F(DiskCacheModesTest, ADirectoryOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  auto cache = DiskCache::Open(BaseOptions(), warnings_.callback());
  ASSERT_FALSE(cache.ok());
  EXPECT_TRUE(
      absl::StrContains(cache.status().message(), "belongs to uid 65534"))
      << cache.status();
  EXPECT_FALSE(Exists(path_));
  ASSERT_EQ(chown(dir_.c_str(), 0, 0), 0);
}

}  // namespace
}  // namespace disk_cache_test
