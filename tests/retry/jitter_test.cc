#include "retry/jitter.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace retry {
namespace {

constexpr absl::Duration kBase = absl::Milliseconds(100);
constexpr absl::Duration kCap = absl::Seconds(5);

TEST(DecorrelatedJitter, FollowsTheFormula) {
  struct Case {
    absl::Duration prev;
    double u;
    absl::Duration want;
  };
  const std::vector<Case> cases = {
      // First retry: prev = base, so [base, 3*base).
      {kBase, 0.0, kBase},
      {kBase, 0.5, absl::Milliseconds(200)},
      {kBase, 0.999, absl::Microseconds(299800)},
      // Later: base + u * (3 * prev - base).
      {absl::Milliseconds(250), 0.5, absl::Milliseconds(100 + 325)},
      // prev below base counts as base.
      {absl::Milliseconds(10), 0.5, absl::Milliseconds(200)},
      // Capped.
      {absl::Seconds(4), 0.9, kCap},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DecorrelatedJitter(kBase, kCap, c.prev, c.u), c.want)
        << "prev=" << c.prev << " u=" << c.u;
  }
}

TEST(Jitter, FirstRetryAlreadyRandomWithinBaseToThreeBase) {
  Jitter jitter(kBase, kCap);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const absl::Duration d = jitter.Next(kBase);
    ASSERT_GE(d, kBase);
    ASSERT_LT(d, 3 * kBase);
    seen.insert(absl::ToInt64Microseconds(d));
  }
  // Flights failing in the same instant must not wake in the same instant.
  EXPECT_GT(seen.size(), 900u);
}

TEST(Jitter, StaysWithinBaseAndCapOverLongChains) {
  Jitter jitter(kBase, kCap);
  for (int chain = 0; chain < 100; ++chain) {
    absl::Duration prev = kBase;
    for (int i = 0; i < 30; ++i) {
      const absl::Duration d = jitter.Next(prev);
      ASSERT_GE(d, kBase);
      ASSERT_LE(d, kCap);
      prev = d;
    }
  }
}

TEST(Jitter, TwoGeneratorsDoNotRepeatEachOther) {
  Jitter a(kBase, kCap), b(kBase, kCap);
  std::vector<absl::Duration> sa, sb;
  for (int i = 0; i < 8; ++i) {
    sa.push_back(a.Next(kBase));
    sb.push_back(b.Next(kBase));
  }
  EXPECT_NE(sa, sb) << "production jitter must not be a fixed sequence";
}

TEST(Jitter, StaggerIsWithinZeroToBase) {
  Jitter jitter(kBase, kCap);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const absl::Duration d = jitter.Stagger();
    ASSERT_GE(d, absl::ZeroDuration());
    ASSERT_LT(d, kBase);
    seen.insert(absl::ToInt64Microseconds(d));
  }
  EXPECT_GT(seen.size(), 900u);
}

TEST(Jitter, InjectedSourceIsUsed) {
  std::vector<double> draws = {0.0, 0.5};
  size_t next = 0;
  Jitter jitter(kBase, kCap, [&] { return draws[next++]; });
  EXPECT_EQ(jitter.Next(kBase), kBase);
  EXPECT_EQ(jitter.Next(kBase), absl::Milliseconds(200));
}

}  // namespace
}  // namespace retry
