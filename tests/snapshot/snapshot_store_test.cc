#include "snapshot/snapshot_store.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "test_snapshot.h"

namespace snapshot {
namespace {

using ::snapshot::testing::SharedSnapshot;
using ::snapshot::testing::SnapshotPath;

TEST(SnapshotStore, EmptyUntilLoaded) {
  SnapshotStore store;
  EXPECT_EQ(store.Current(), nullptr);
  EXPECT_EQ(store.Reload("/nonexistent/vpic.lite.db").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Current(), nullptr);
}

TEST(SnapshotStore, FailedReloadKeepsTheCurrentSnapshot) {
  SKIP_WITHOUT_SNAPSHOT();
  SnapshotStore store(SharedSnapshot());
  const auto before = store.Current();
  ASSERT_NE(before, nullptr);
  EXPECT_FALSE(store.Reload("/nonexistent/vpic.lite.db").ok());
  EXPECT_EQ(store.Current(), before);
}

// A decode that holds the old snapshot keeps it alive and working across a
// reload; new decodes get the new one.
TEST(SnapshotStore, ReloadSwapsWhileInFlightDecodesFinishOnTheOld) {
  SKIP_WITHOUT_SNAPSHOT();
  SnapshotStore store(SharedSnapshot());
  std::atomic<bool> stop{false};
  std::atomic<int> decodes{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        std::shared_ptr<const Snapshot> s = store.Current();
        ASSERT_NE(s, nullptr);
        auto d = s->Decode("1FTMW1T88MFA00001", 0, 2026);
        ASSERT_TRUE(d.ok());
        EXPECT_EQ(d->vehicle.model, "F-150");
        ++decodes;
      }
    });
  }
  const std::shared_ptr<const Snapshot> in_flight = store.Current();
  ASSERT_TRUE(store.Reload(SnapshotPath()).ok());
  const std::shared_ptr<const Snapshot> reloaded = store.Current();
  EXPECT_NE(reloaded, in_flight);
  EXPECT_EQ(reloaded->info().sha256, in_flight->info().sha256);
  // The old one still decodes.
  auto old = in_flight->Decode("1FTFW5L86RFB45612", 0, 2026);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->vehicle.model, "F-150");
  while (decodes.load() < 20) std::this_thread::yield();
  stop = true;
  for (auto& r : readers) r.join();
}

}  // namespace
}  // namespace snapshot
