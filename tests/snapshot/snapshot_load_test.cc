// Snapshot::Load within a LoadLimit, on files that would never finish
// loading: a FIFO, and a copy of the real snapshot grown (sparsely) to
// 1 TiB, whose hash alone would take many minutes.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "snapshot/load_limit.h"
#include "snapshot/snapshot.h"
#include "test_snapshot.h"

namespace snapshot {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name, "-", getpid());
}

// A copy of the real snapshot, 1 TiB long: SQLite reads its pages as
// before (the header says how many there are), the hash reads it all.
class HugeSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_SNAPSHOT();
    path_ = TempPath("huge.db");
    std::filesystem::copy_file(
        testing::SnapshotPath(), path_,
        std::filesystem::copy_options::overwrite_existing);
    ASSERT_EQ(truncate(path_.c_str(), int64_t{1} << 40), 0);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
  }
  std::string path_;
};

TEST_F(HugeSnapshotTest, TheLoadEndsAtItsDeadline) {
  const LoadLimit limit(absl::Now() + absl::Milliseconds(300));
  const auto loaded = Snapshot::Load(path_, limit);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDeadlineExceeded)
      << loaded.status();
}

TEST_F(HugeSnapshotTest, TheLoadEndsWhenCancelled) {
  // Shared with the loading thread, which is left behind if it never ends.
  struct Load {
    LoadLimit limit;
    absl::Notification ended;
    absl::Status status;
  };
  auto load = std::make_shared<Load>();
  std::thread([load, path = path_] {
    load->status = Snapshot::Load(path, load->limit).status();
    load->ended.Notify();
  }).detach();
  // Give it time to reach the hash, which never ends by itself.
  EXPECT_FALSE(load->ended.WaitForNotificationWithTimeout(absl::Seconds(2)));
  load->limit.Cancel();
  ASSERT_TRUE(load->ended.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "a cancelled load went on";
  EXPECT_EQ(load->status.code(), absl::StatusCode::kCancelled) << load->status;
}

TEST(SnapshotLoad, AFifoIsRefusedNotOpened) {
  const std::string fifo = TempPath("fifo.db");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::Notification loaded;
  absl::Status status;
  std::thread load([&] {
    status = Snapshot::Load(fifo).status();
    loaded.Notify();
  });
  if (!loaded.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    ADD_FAILURE() << "the load blocked opening a FIFO";
    // Unblock it: a writer arrives and goes.
    std::fclose(std::fopen(fifo.c_str(), "w"));
  }
  load.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "not a regular file"))
      << status;
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace snapshot
