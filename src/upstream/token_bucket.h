// The token bucket in front of every upstream request (DESIGN rule 9).
//
// Tokens accrue continuously at `rate` per second up to `burst`; a request
// takes one. A hold (a pushback pause, rule 10) empties the bucket and stops
// it filling until the hold ends, so that requests resume at the rate, not
// all at once.
//
// Pure and not thread-safe: time is passed in (the engine's monotonic clock).
#ifndef VIN_UPSTREAM_TOKEN_BUCKET_H_
#define VIN_UPSTREAM_TOKEN_BUCKET_H_

#include "absl/time/time.h"

namespace upstream {

class TokenBucket {
 public:
  // `per_second` <= 0 means unlimited (holds still apply). The bucket starts
  // full.
  TokenBucket(double per_second, double burst, absl::Time now);

  // Takes a token if one is available at `now`.
  bool TryTake(absl::Time now);
  // Takes `n` tokens (a part of one, too) whether or not they are there:
  // a debt the bucket pays back at its rate before the next full token.
  void Consume(double n, absl::Time now);
  // When the n-th token from now (n >= 1) can be taken, if nothing else
  // takes tokens meanwhile.
  absl::Time TimeOfToken(absl::Time now, double n) const;
  // Changes the rate from `now` on (tokens accrued so far are kept).
  void SetRate(double per_second, absl::Time now);
  // Empties the bucket and keeps it empty until `until`.
  void HoldUntil(absl::Time until);

  double rate() const { return rate_; }
  bool unlimited() const { return rate_ <= 0; }
  double TokensAt(absl::Time now) const;
  absl::Time held_until() const { return held_until_; }

 private:
  void Settle(absl::Time now);

  double rate_;
  const double burst_;
  double tokens_;
  absl::Time updated_;  // when tokens_ was right
  absl::Time held_until_ = absl::InfinitePast();
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_TOKEN_BUCKET_H_
