// The retry decision (DESIGN rules 3 and 11, and the Retry-After details):
// after a failed attempt that may be retried, wait how long, or give up why.
// A pure function, table-tested; the engine draws the jitter, asks the
// budget and schedules the wake-up.
#ifndef VIN_ENGINE_RETRY_POLICY_H_
#define VIN_ENGINE_RETRY_POLICY_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine_api/types.h"
#include "vpic/classify.h"

namespace engine {

struct RetryInput {
  int attempts = 0;      // attempts made, the failed one included
  int max_attempts = 1;  // every attempt, the first included
  // This retry's decorrelated-jitter delay, drawn from the delay waited
  // before the failed attempt.
  absl::Duration jittered;
  // Upstream's Retry-After, a floor on the delay.
  absl::optional<absl::Duration> retry_after;
  // A longer Retry-After is not waited out.
  absl::Duration retry_after_max = absl::Seconds(60);
};

struct RetryDecision {
  enum class Kind {
    kRetry,               // wait `delay`, then try again
    kExhausted,           // max_attempts reached
    kRetryAfterTooLong,   // upstream asked for more than retry_after_max
    kBudgetRefused,       // the retry budget (rule 11) has no retry left
  };
  Kind kind = Kind::kRetry;
  // kRetry: the delay before the next attempt. Otherwise the delay to
  // suggest to callers (RetryInfo / FailedEvent.retry_delay).
  absl::Duration delay;
};

// Decides the retry. `take_budget` is called (once) only when everything
// else allows the retry; it takes one retry from the budget and returns
// whether it could.
RetryDecision DecideRetry(const RetryInput& in,
                          absl::FunctionRef<bool()> take_budget);

// The failure a decision other than kRetry gives the flight's waiters
// (UPSTREAM_UNAVAILABLE, retryable, with the suggested delay), naming why.
Failure RetryFailure(const RetryDecision& decision, const RetryInput& in,
                     const vpic::UpstreamError& error);

// "HTTP 503", "timeout: <libcurl's text>": an upstream error for messages.
std::string DescribeUpstreamError(const vpic::UpstreamError& e);

}  // namespace engine

#endif  // VIN_ENGINE_RETRY_POLICY_H_
