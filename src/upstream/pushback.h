// The pushback state (DESIGN rule 10): a 429, or a 503 with Retry-After, is
// about the aggregate rate of the whole service, not about one VIN. It
// pauses every upstream request until its Retry-After has passed and halves
// the effective rate (never below 1 per minute). From the end of the pause,
// each success raises the rate additively back toward the configured one, by
// the configured rate times the minutes since the previous raise, so that a
// full recovery takes about a minute of successes however deep the cut was.
//
// Pure and not thread-safe: time is passed in (the engine's monotonic clock).
#ifndef VIN_UPSTREAM_PUSHBACK_H_
#define VIN_UPSTREAM_PUSHBACK_H_

#include "absl/time/time.h"

namespace upstream {

// The share of the configured rate the rate resumes from after an outage.
inline constexpr double kRecoveryShare = 0.1;

class Pushback {
 public:
  // `per_minute` <= 0: unlimited; pauses still apply, and there is no rate
  // to halve.
  explicit Pushback(double per_minute);

  // A pushback answer arrived at `now` asking to pause for `pause`. Returns
  // whether the effective rate changed.
  bool OnPushback(absl::Time now, absl::Duration pause);
  // A request succeeded at `now`. Returns whether the effective rate changed.
  bool OnSuccess(absl::Time now);
  // vPIC answers again after an outage (the circuit breaker closed, rule
  // 13): the rate resumes from kRecoveryShare of the configured one (or
  // less, when already lower) and climbs back as after a pushback.
  bool OnRecovered(absl::Time now);

  // The effective rate in requests per minute (<= 0: unlimited).
  double rate_per_minute() const { return rate_; }
  double configured_per_minute() const { return configured_; }
  absl::Time paused_until() const { return paused_until_; }

 private:
  const double configured_;
  double rate_;
  absl::Time paused_until_ = absl::InfinitePast();
  absl::Time last_raise_ = absl::InfinitePast();
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_PUSHBACK_H_
