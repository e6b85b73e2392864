// The clock below the scheduler and the cache file: the real one's Now()
// never goes back, the fake one moves only when told, both readings
// together, and retry's names are the same types.
#include "clocks/clock.h"

#include <type_traits>

#include "gtest/gtest.h"
#include "retry/clock.h"

namespace clocks {
namespace {

TEST(Clock, TheRealClockIsOneAndItsNowNeverGoesBack) {
  const Clock* real = Clock::Real();
  EXPECT_EQ(real, Clock::Real());
  absl::Time last = real->Now();
  for (int i = 0; i < 1000; ++i) {
    const absl::Time now = real->Now();
    EXPECT_GE(now, last);
    last = now;
  }
  EXPECT_LT(absl::AbsDuration(real->WallNow() - absl::Now()), absl::Seconds(5));
}

TEST(Clock, AFakeClockMovesOnlyWhenAdvancedAndBothReadingsTogether) {
  FakeClock clock(absl::FromUnixSeconds(1700000000));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(1700000000));
  EXPECT_EQ(clock.Now(), clock.Now());
  clock.Advance(absl::Milliseconds(250));
  EXPECT_EQ(clock.Now(),
            absl::FromUnixSeconds(1700000000) + absl::Milliseconds(250));
  EXPECT_EQ(clock.WallNow(), clock.Now());
}

TEST(Clock, RetryNamesTheSameClock) {
  static_assert(std::is_same_v<retry::Clock, Clock>);
  static_assert(std::is_same_v<retry::FakeClock, FakeClock>);
}

}  // namespace
}  // namespace clocks
