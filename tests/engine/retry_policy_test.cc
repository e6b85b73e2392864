#include "engine/retry_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace engine {
namespace {

using testing::HasSubstr;
using Kind = RetryDecision::Kind;

TEST(DecideRetry, Table) {
  const absl::Duration ms = absl::Milliseconds(1);
  struct Case {
    const char* name;
    int attempts, max_attempts;
    absl::Duration jittered;
    absl::optional<absl::Duration> retry_after;
    bool budget;
    Kind want;
    absl::Duration want_delay;
    bool budget_asked;
  } cases[] = {
      {"first retry", 1, 4, 150 * ms, absl::nullopt, true, Kind::kRetry,
       150 * ms, true},
      {"Retry-After is a floor", 1, 4, 150 * ms, absl::Seconds(2), true,
       Kind::kRetry, absl::Seconds(2), true},
      {"shorter Retry-After", 1, 4, 150 * ms, 10 * ms, true, Kind::kRetry,
       150 * ms, true},
      {"Retry-After at the maximum", 1, 4, 150 * ms, absl::Seconds(60), true,
       Kind::kRetry, absl::Seconds(60), true},
      {"Retry-After too long", 1, 4, 150 * ms, absl::Seconds(61), true,
       Kind::kRetryAfterTooLong, absl::Seconds(61), false},
      {"attempts used up", 4, 4, 150 * ms, absl::nullopt, true,
       Kind::kExhausted, 150 * ms, false},
      {"one attempt only", 1, 1, 150 * ms, absl::Seconds(3), true,
       Kind::kExhausted, absl::Seconds(3), false},
      {"budget refuses", 2, 4, 300 * ms, absl::nullopt, false,
       Kind::kBudgetRefused, 300 * ms, true},
  };
  for (const Case& c : cases) {
    RetryInput in;
    in.attempts = c.attempts;
    in.max_attempts = c.max_attempts;
    in.jittered = c.jittered;
    in.retry_after = c.retry_after;
    in.retry_after_max = absl::Seconds(60);
    int asked = 0;
    const RetryDecision d = DecideRetry(in, [&] {
      ++asked;
      return c.budget;
    });
    EXPECT_EQ(d.kind, c.want) << c.name;
    EXPECT_EQ(d.delay, c.want_delay) << c.name;
    EXPECT_EQ(asked, c.budget_asked ? 1 : 0)
        << c.name << ": the budget is spent only on retries that happen";
  }
}

TEST(RetryFailure, NamesWhyAndSuggestsTheDelay) {
  RetryInput in;
  in.attempts = 2;
  in.max_attempts = 4;
  const vpic::UpstreamError e{503, "http", "vPIC answered HTTP 503"};
  Failure f = RetryFailure({Kind::kBudgetRefused, absl::Milliseconds(700)}, in, e);
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.attempts, 2);
  EXPECT_EQ(f.retry_delay, absl::Milliseconds(700));
  EXPECT_EQ(f.last_error->http_status, 503);
  EXPECT_THAT(f.message, HasSubstr("retry budget"));
  EXPECT_THAT(f.message, HasSubstr("HTTP 503"));
  f = RetryFailure({Kind::kExhausted, absl::Seconds(1)}, in, e);
  EXPECT_THAT(f.message, HasSubstr("after 2 attempts"));
  f = RetryFailure({Kind::kRetryAfterTooLong, absl::Seconds(90)}, in, e);
  EXPECT_THAT(f.message, HasSubstr("retry after 1m30s"));
}

}  // namespace
}  // namespace engine
