// One budget for everything the service sends to NHTSA (DESIGN rules 9-11):
// the request rate (a token bucket), the pushback pause and effective rate
// after a 429, and the retry budget.
//
// An interface so that a fleet of replicas can hold one budget in a shared
// store; LocalBudget is the in-process implementation. Times are the
// engine's monotonic clock. Implementations are driven by the engine's loop
// thread and need not be thread-safe.
#ifndef VIN_UPSTREAM_UPSTREAM_BUDGET_H_
#define VIN_UPSTREAM_UPSTREAM_BUDGET_H_

#include <cstdint>

#include "absl/time/time.h"

namespace upstream {

struct BudgetOptions {
  // Requests per minute toward NHTSA, all flights together; <= 0 unlimited.
  double rate_per_minute = 1000;
  // Requests that may start back to back after a quiet spell.
  double burst = 10;
  // Retries may add this share of the first attempts of the last 10 s...
  // (negative: no retry budget, every retry allowed)
  double retry_ratio = 0.1;
  // ...and never fewer than this many per second.
  double retry_min_per_second = 1;
};

class UpstreamBudget {
 public:
  virtual ~UpstreamBudget() = default;

  // Takes the token of one upstream request (a single decode or a batch)
  // if the rate and any pause allow it at `now`.
  virtual bool TryAcquire(absl::Time now) = 0;

  // Rule 17: what the request is for, for a budget that a fleet shares
  // (in one process the gate's queue does this itself): a request of bulk
  // work alone leaves the interactive reserve, and during peak hours uses
  // at most `peak_share` of the rate.
  struct Purpose {
    bool bulk = false;
    bool peak = false;
    double peak_share = 1.0;
  };
  virtual bool TryAcquire(absl::Time now, const Purpose&) { return TryAcquire(now); }
  virtual absl::Time StartOfRequest(absl::Time now, double n,
                                    const Purpose&) const {
    return StartOfRequest(now, n);
  }
  // Whether this budget holds bulk to its peak-hour share itself (the
  // fleet's, while shared); otherwise the gate does.
  virtual bool LimitsBulk() const { return false; }
  // When the n-th request from now (n >= 1) could start, if nothing else
  // takes tokens meanwhile.
  virtual absl::Time StartOfRequest(absl::Time now, double n) const = 0;

  // `n` flights asked for their first attempt at `now` (counted when the
  // flight starts, before it may wait for the rate).
  virtual void RecordFirstAttempts(absl::Time now, int64_t n) = 0;
  // Takes one retry from the retry budget if it allows one.
  virtual bool TryRetry(absl::Time now) = 0;

  // A 429 (or 503 with Retry-After) arrived: pause every request for
  // `pause` and cut the rate. Returns whether the effective rate changed.
  virtual bool OnPushback(absl::Time now, absl::Duration pause) = 0;
  // A request was answered with a decode. Returns whether the effective
  // rate changed.
  virtual bool OnSuccess(absl::Time now) = 0;
  // vPIC answers again after an outage (rule 13): the rate resumes from a
  // fraction of the configured one (Pushback::OnRecovered). Returns
  // whether the effective rate changed.
  virtual bool OnRecovered(absl::Time now) = 0;

  // Requests per minute allowed now (<= 0: unlimited).
  virtual double EffectiveRatePerMinute() const = 0;
  virtual absl::Time PausedUntil() const = 0;
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_UPSTREAM_BUDGET_H_
