#include "upstream/token_bucket.h"

#include "gtest/gtest.h"

namespace upstream {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

TEST(TokenBucket, StartsFullThenRefillsAtTheRate) {
  TokenBucket b(/*per_second=*/2, /*burst=*/3, kT0);
  EXPECT_TRUE(b.TryTake(kT0));
  EXPECT_TRUE(b.TryTake(kT0));
  EXPECT_TRUE(b.TryTake(kT0));
  EXPECT_FALSE(b.TryTake(kT0)) << "the burst is spent";
  EXPECT_EQ(b.TimeOfToken(kT0, 1), kT0 + absl::Milliseconds(500));
  EXPECT_EQ(b.TimeOfToken(kT0, 3), kT0 + absl::Milliseconds(1500));
  EXPECT_FALSE(b.TryTake(kT0 + absl::Milliseconds(499)));
  EXPECT_TRUE(b.TryTake(kT0 + absl::Milliseconds(500)));
  EXPECT_FALSE(b.TryTake(kT0 + absl::Milliseconds(600)));
}

TEST(TokenBucket, NeverHoldsMoreThanTheBurst) {
  TokenBucket b(10, 2, kT0);
  const absl::Time later = kT0 + absl::Hours(1);
  int taken = 0;
  while (b.TryTake(later)) ++taken;
  EXPECT_EQ(taken, 2);
}

TEST(TokenBucket, RequestsOverAnySecondStayWithinRatePlusBurst) {
  // Take greedily every millisecond for 10 s: no 1 s window holds more than
  // rate + burst takes.
  TokenBucket b(10, 5, kT0);
  std::vector<absl::Time> takes;
  for (int ms = 0; ms < 10000; ++ms) {
    const absl::Time t = kT0 + absl::Milliseconds(ms);
    while (b.TryTake(t)) takes.push_back(t);
  }
  EXPECT_NEAR(static_cast<double>(takes.size()), 5 + 10 * 10, 1);
  size_t densest = 0;
  for (size_t i = 0, j = 0; i < takes.size(); ++i) {
    while (takes[i] - takes[j] >= absl::Seconds(1)) ++j;
    densest = std::max(densest, i - j + 1);
  }
  EXPECT_LE(densest, 15u);
}

TEST(TokenBucket, HoldEmptiesTheBucketAndDelaysTheRefill) {
  TokenBucket b(1, 10, kT0);
  b.HoldUntil(kT0 + absl::Seconds(2));
  EXPECT_FALSE(b.TryTake(kT0 + absl::Seconds(1)));
  EXPECT_FALSE(b.TryTake(kT0 + absl::Seconds(2)))
      << "no token saved up from before the hold";
  EXPECT_EQ(b.TimeOfToken(kT0, 1), kT0 + absl::Seconds(3));
  EXPECT_TRUE(b.TryTake(kT0 + absl::Seconds(3)));
  EXPECT_FALSE(b.TryTake(kT0 + absl::Seconds(3)));
}

TEST(TokenBucket, UnlimitedStillHonoursAHold) {
  TokenBucket b(0, 10, kT0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(b.TryTake(kT0));
  b.HoldUntil(kT0 + absl::Seconds(1));
  EXPECT_FALSE(b.TryTake(kT0 + absl::Milliseconds(999)));
  EXPECT_EQ(b.TimeOfToken(kT0, 50), kT0 + absl::Seconds(1));
  EXPECT_TRUE(b.TryTake(kT0 + absl::Seconds(1)));
}

TEST(TokenBucket, RateChangeKeepsWhatAccrued) {
  TokenBucket b(1, 1, kT0);
  ASSERT_TRUE(b.TryTake(kT0));
  b.SetRate(0.5, kT0 + absl::Milliseconds(500));  // half a token accrued
  EXPECT_EQ(b.TimeOfToken(kT0 + absl::Milliseconds(500), 1),
            kT0 + absl::Milliseconds(1500));
}

}  // namespace
}  // namespace upstream
