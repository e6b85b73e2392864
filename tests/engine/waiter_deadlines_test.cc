// The rule "a waiter leaves when its deadline comes before its flight's
// next start", its margins and what a leaving waiter is told: pure
// functions, no engine, no clock.
#include "engine/waiter_deadlines.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "upstream/local_budget.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

struct W {
  absl::Time deadline;
};

TEST(MustLeaveBefore, ExactlyTheWaitersWhoseDeadlineIsEarlier) {
  const std::map<coalesce::WaiterId, W> waiters = {
      {1, {kT0 + absl::Seconds(1)}},
      {2, {kT0 + absl::Seconds(3)}},
      {3, {absl::InfiniteFuture()}},
      {4, {kT0 + absl::Seconds(2)}},
  };
  EXPECT_THAT(MustLeaveBefore(waiters, kT0 + absl::Seconds(2)),
              ElementsAre(1));  // a deadline at the start itself stays
  EXPECT_THAT(MustLeaveBefore(waiters, kT0 + absl::Seconds(10)),
              ElementsAre(1, 2, 4));
  EXPECT_THAT(MustLeaveBefore(waiters, kT0), IsEmpty());
}

TEST(LeaveLivePathAt, OnlyLiveThenSnapshotLeavesAMarginEarly) {
  const absl::Duration m = kSnapshotFallbackMargin;
  const absl::Time d = kT0 + absl::Seconds(5);
  EXPECT_EQ(LeaveLivePathAt(SourcePreference::kLiveThenSnapshot, d, kT0, m),
            d - m);
  EXPECT_EQ(LeaveLivePathAt(SourcePreference::kLiveOnly, d, kT0, m), d);
  EXPECT_EQ(LeaveLivePathAt(SourcePreference::kLiveThenSnapshot,
                            absl::InfiniteFuture(), kT0, m),
            absl::InfiniteFuture());
  // Never before now: a deadline closer than the margin leaves at once.
  EXPECT_EQ(LeaveLivePathAt(SourcePreference::kLiveThenSnapshot,
                            kT0 + absl::Milliseconds(30), kT0, m),
            kT0);
}

TEST(ItemTimeout, AMarginOrATenthOfTheTimeLeft) {
  struct Case {
    absl::Duration left, want;
  };
  const Case cases[] = {
      {absl::InfiniteDuration(), absl::InfiniteDuration()},
      {absl::Seconds(10), absl::Seconds(10) - kItemDeadlineMargin},
      {absl::Seconds(1), absl::Milliseconds(900)},
      {absl::Milliseconds(500), absl::Milliseconds(450)},
      {absl::ZeroDuration(), absl::ZeroDuration()},
      {-absl::Seconds(1), -absl::Seconds(1)},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ItemTimeout(c.left), c.want) << c.left;
  }
}

TEST(LeavingFailures, NameWhatTheWaiterWaitedForAndSuggestTheWait) {
  const vpic::UpstreamError e{503, "http", "vPIC answered HTTP 503"};
  const Failure retry = RetryWaitFailure(2, e, absl::Milliseconds(750));
  EXPECT_EQ(retry.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(retry.retryable);
  EXPECT_EQ(retry.attempts, 2);
  EXPECT_EQ(retry.retry_delay, absl::Milliseconds(750));
  ASSERT_TRUE(retry.last_error.has_value());
  EXPECT_EQ(retry.last_error->http_status, 503);
  EXPECT_THAT(retry.message, HasSubstr("HTTP 503"));
  EXPECT_THAT(retry.message, HasSubstr("750ms"));

  upstream::BudgetOptions o;
  o.rate_per_minute = 60;
  o.burst = 1;
  upstream::LocalBudget budget(o, kT0);
  const Failure rate = GateWaitFailure(0, absl::Seconds(3), budget, kT0);
  EXPECT_TRUE(rate.retryable);
  EXPECT_EQ(rate.retry_delay, absl::Seconds(3));
  EXPECT_THAT(rate.message, HasSubstr("at most 60 requests per minute"));

  budget.OnPushback(kT0, absl::Seconds(4));
  const Failure paused = GateWaitFailure(0, absl::Seconds(4), budget, kT0);
  EXPECT_THAT(paused.message, HasSubstr("pause (HTTP 429) for 4s"));

  EXPECT_EQ(DeadlinePassedFailure().reason, FailureReason::kDeadlineExceeded);
  EXPECT_TRUE(DeadlinePassedFailure().retryable);
}

}  // namespace
}  // namespace engine
