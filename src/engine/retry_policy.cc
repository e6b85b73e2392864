#include "engine/retry_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace engine {

std::string DescribeUpstreamError(const vpic::UpstreamError& e) {
  if (e.http_status != 0 && e.kind == "http") return e.message;
  return absl::StrCat(e.kind, ": ", e.message);
}

RetryDecision DecideRetry(const RetryInput& in,
                          absl::FunctionRef<bool()> take_budget) {
  using Kind = RetryDecision::Kind;
  if (in.retry_after && *in.retry_after > in.retry_after_max) {
    return {Kind::kRetryAfterTooLong, *in.retry_after};
  }
  const absl::Duration delay =
      in.retry_after ? std::max(in.jittered, *in.retry_after) : in.jittered;
  if (in.attempts >= in.max_attempts) return {Kind::kExhausted, delay};
  if (!take_budget()) return {Kind::kBudgetRefused, delay};
  return {Kind::kRetry, delay};
}

Failure RetryFailure(const RetryDecision& decision, const RetryInput& in,
                     const vpic::UpstreamError& error) {
  using Kind = RetryDecision::Kind;
  Failure f{FailureReason::kUpstreamUnavailable, "", true, in.attempts, error,
            decision.delay};
  const std::string what = DescribeUpstreamError(error);
  switch (decision.kind) {
    case Kind::kRetryAfterTooLong:
      f.detail = domain::ErrorReason::kRateLimited;
      f.message = absl::StrCat(
          "vPIC asked to retry after ", absl::FormatDuration(decision.delay),
          ", longer than this server waits (",
          absl::FormatDuration(in.retry_after_max), ")");
      break;
    case Kind::kExhausted:
      f.message = absl::StrCat("vPIC still failing after ", in.attempts,
                               " attempt", in.attempts == 1 ? "" : "s", " (",
                               what, ")");
      break;
    case Kind::kBudgetRefused:
      f.detail = domain::ErrorReason::kRetryBudgetExhausted;
      f.message = absl::StrCat(
          "vPIC is failing (", what, ") and this server's retry budget "
          "(--retry_budget) is spent, so this decode was not retried after "
          "attempt ",
          in.attempts, "; try again in ", absl::FormatDuration(decision.delay));
      break;
    case Kind::kRetry:
      f.message = "retrying";  // not a failure; callers do not ask
      break;
  }
  return f;
}

}  // namespace engine
