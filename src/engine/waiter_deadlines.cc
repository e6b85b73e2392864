#include "engine/waiter_deadlines.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/retry_policy.h"

namespace engine {

absl::Time LeaveLivePathAt(SourcePreference source, absl::Time deadline,
                           absl::Time now, absl::Duration margin) {
  if (source != SourcePreference::kLiveThenSnapshot ||
      deadline == absl::InfiniteFuture()) {
    return deadline;
  }
  return std::max(now, deadline - margin);
}

absl::Duration ItemTimeout(absl::Duration left) {
  if (left == absl::InfiniteDuration() || left <= absl::ZeroDuration()) {
    return left;
  }
  return left - std::min(kItemDeadlineMargin, left / 10);
}

Failure RetryWaitFailure(int attempts, const vpic::UpstreamError& last_error,
                         absl::Duration wait) {
  Failure failure{FailureReason::kUpstreamUnavailable, "", true, attempts};
  failure.retry_delay = wait;
  failure.last_error = last_error;
  failure.message = absl::StrCat(
      "vPIC is failing (", DescribeUpstreamError(last_error),
      "); its next attempt, in ", absl::FormatDuration(wait),
      ", falls after this call's deadline");
  return failure;
}

Failure GateWaitFailure(int attempts, absl::Duration wait,
                        const upstream::UpstreamBudget& budget,
                        absl::Time now) {
  Failure failure{FailureReason::kUpstreamUnavailable, "", true, attempts};
  failure.detail = domain::ErrorReason::kRateLimited;
  failure.retry_delay = std::max(absl::ZeroDuration(), wait);
  const double rate = budget.EffectiveRatePerMinute();
  const std::string why =
      budget.PausedUntil() > now
          ? absl::StrCat("vPIC asked this server to pause (HTTP 429) for ",
                         absl::FormatDuration(budget.PausedUntil() - now))
          : rate > 0 ? absl::StrFormat("this server sends vPIC at most %.0f "
                                       "requests per minute (--upstream_rate)",
                                       rate)
                     : std::string("upstream requests are at their "
                                   "concurrency limit");
  failure.message = absl::StrCat(
      "waiting for its turn to ask vPIC: ", why, "; its request would start in ",
      absl::FormatDuration(failure.retry_delay),
      ", after this call's deadline");
  return failure;
}

Failure DeadlinePassedFailure() {
  return {FailureReason::kDeadlineExceeded,
          "the deadline passed while vPIC was being asked", true};
}

Failure DeadlinePassedBeforeStartFailure() {
  return {FailureReason::kDeadlineExceeded,
          "the deadline passed before the decode started", true};
}

}  // namespace engine
