#include "upstream/retry_budget.h"

#include "gtest/gtest.h"

namespace upstream {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

int TakeAll(RetryBudget& b, absl::Time t) {
  int n = 0;
  while (b.TryRetry(t)) ++n;
  return n;
}

TEST(RetryBudget, FloorAllowsRetriesWithoutTraffic) {
  RetryBudget b(0.1, 1);  // floor: 1/s over the 10 s window = 10
  EXPECT_EQ(TakeAll(b, kT0), 10);
  EXPECT_EQ(TakeAll(b, kT0 + absl::Seconds(9)), 0) << "still in the window";
  EXPECT_EQ(TakeAll(b, kT0 + absl::Seconds(10)), 10) << "the window moved on";
}

TEST(RetryBudget, ATenthOfTheFirstAttemptsOfTheWindowPlusTheFloor) {
  RetryBudget b(0.1, 1);
  b.RecordFirstAttempts(kT0, 500);
  EXPECT_EQ(TakeAll(b, kT0 + absl::Seconds(1)), 50 + 10);
  b.RecordFirstAttempts(kT0 + absl::Seconds(2), 100);
  EXPECT_EQ(TakeAll(b, kT0 + absl::Seconds(3)), 10);
  // The first 500 leave the window at kT0 + 10 s: only the 100 count, and
  // the 70 retries made so far still do.
  EXPECT_EQ(TakeAll(b, kT0 + absl::Seconds(10) + absl::Milliseconds(100)), 0);
  // All of it has left by kT0 + 13 s.
  EXPECT_EQ(TakeAll(b, kT0 + absl::Seconds(13) + absl::Milliseconds(100)), 10);
}

TEST(RetryBudget, OutageLoadStaysWithinTheShareOfWhatWasAsked) {
  // 1,000 first attempts a second for a minute, every one failing and asking
  // for a retry: retries stay within 10%, plus the floor (1/s).
  RetryBudget b(0.1, 1);
  int64_t firsts = 0, retries = 0;
  for (int ms = 0; ms < 60000; ms += 10) {
    const absl::Time t = kT0 + absl::Milliseconds(ms);
    b.RecordFirstAttempts(t, 10);
    firsts += 10;
    for (int i = 0; i < 10; ++i) retries += b.TryRetry(t);
  }
  EXPECT_LE(retries, firsts / 10 + 60);
  EXPECT_GE(retries, firsts / 10 - 100) << "the share is used, not starved";
}

TEST(RetryBudget, NegativeRatioTurnsItOff) {
  RetryBudget b(-1, 0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(b.TryRetry(kT0));
}

}  // namespace
}  // namespace upstream
