#include "upstream/pushback.h"

#include "gtest/gtest.h"
#include "upstream/local_budget.h"

namespace upstream {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

TEST(Pushback, PausesAndHalvesTheRate) {
  Pushback p(1000);
  EXPECT_TRUE(p.OnPushback(kT0, absl::Seconds(2)));
  EXPECT_EQ(p.paused_until(), kT0 + absl::Seconds(2));
  EXPECT_EQ(p.rate_per_minute(), 500);
  p.OnPushback(kT0 + absl::Seconds(1), absl::Seconds(0));
  EXPECT_EQ(p.paused_until(), kT0 + absl::Seconds(2)) << "a pause never shrinks";
  EXPECT_EQ(p.rate_per_minute(), 250);
}

TEST(Pushback, NeverBelowOnePerMinute) {
  Pushback p(8);
  for (int i = 0; i < 10; ++i) p.OnPushback(kT0, absl::Seconds(1));
  EXPECT_EQ(p.rate_per_minute(), 1);
  EXPECT_FALSE(p.OnPushback(kT0, absl::Seconds(1))) << "no change at the floor";
}

TEST(Pushback, SuccessesClimbBackAdditivelyOverAboutAMinute) {
  Pushback p(600);
  p.OnPushback(kT0, absl::Seconds(1));  // 300/min
  EXPECT_FALSE(p.OnSuccess(kT0 + absl::Milliseconds(500)))
      << "the climb starts when the pause ends";
  absl::Time t = kT0 + absl::Seconds(1);
  // Successes every second: +10/min each (600 per minute of elapsed time).
  for (int i = 1; i <= 10; ++i) {
    t += absl::Seconds(1);
    EXPECT_TRUE(p.OnSuccess(t));
    EXPECT_DOUBLE_EQ(p.rate_per_minute(), 300 + 10.0 * i);
  }
  t += absl::Seconds(40);
  p.OnSuccess(t);
  EXPECT_DOUBLE_EQ(p.rate_per_minute(), 600) << "capped at the configured rate";
  EXPECT_FALSE(p.OnSuccess(t + absl::Seconds(1)));
}

TEST(Pushback, UnlimitedRateOnlyPauses) {
  Pushback p(0);
  EXPECT_FALSE(p.OnPushback(kT0, absl::Seconds(3)));
  EXPECT_EQ(p.paused_until(), kT0 + absl::Seconds(3));
  EXPECT_EQ(p.rate_per_minute(), 0);
}

TEST(LocalBudget, PushbackHoldsEveryRequestThenResumesAtTheCutRate) {
  BudgetOptions o;
  o.rate_per_minute = 600;  // 10/s
  o.burst = 5;
  LocalBudget b(o, kT0);
  EXPECT_TRUE(b.TryAcquire(kT0));
  EXPECT_TRUE(b.OnPushback(kT0, absl::Seconds(2)));
  EXPECT_EQ(b.EffectiveRatePerMinute(), 300);
  EXPECT_FALSE(b.TryAcquire(kT0 + absl::Milliseconds(1999)))
      << "the 4 tokens left before the pause are gone";
  // Resuming goes through the bucket at 5/s: the first token 200 ms after
  // the pause, not a burst the moment it ends.
  EXPECT_EQ(b.StartOfRequest(kT0, 1), kT0 + absl::Milliseconds(2200));
  EXPECT_FALSE(b.TryAcquire(kT0 + absl::Seconds(2)));
  EXPECT_TRUE(b.TryAcquire(kT0 + absl::Milliseconds(2200)));
  EXPECT_FALSE(b.TryAcquire(kT0 + absl::Milliseconds(2300)));
}

}  // namespace
}  // namespace upstream
