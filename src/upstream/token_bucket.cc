#include "upstream/token_bucket.h"

#include <algorithm>

namespace upstream {

TokenBucket::TokenBucket(double per_second, double burst, absl::Time now)
    : rate_(per_second),
      burst_(std::max(1.0, burst)),
      tokens_(burst_),
      updated_(now) {}

double TokenBucket::TokensAt(absl::Time now) const {
  if (now < held_until_) return 0;
  if (unlimited()) return burst_;
  const absl::Time from = std::max(updated_, held_until_);
  if (now <= from) return tokens_;
  return std::min(burst_,
                  tokens_ + rate_ * absl::ToDoubleSeconds(now - from));
}

void TokenBucket::Settle(absl::Time now) {
  tokens_ = TokensAt(now);
  updated_ = std::max(now, updated_);
}

bool TokenBucket::TryTake(absl::Time now) {
  if (now < held_until_) return false;
  if (unlimited()) return true;
  Settle(now);
  // A token that is due within a microsecond counts as there: the loop's
  // poll wakes on millisecond boundaries.
  if (tokens_ < 1.0 - 1e-6) return false;
  tokens_ = std::max(0.0, tokens_ - 1.0);
  return true;
}

void TokenBucket::Consume(double n, absl::Time now) {
  if (unlimited()) return;
  Settle(now);
  tokens_ -= n;
}

absl::Time TokenBucket::TimeOfToken(absl::Time now, double n) const {
  const absl::Time start = std::max(now, held_until_);
  if (unlimited()) return start;
  const double have = TokensAt(start);
  if (have >= n) return start;
  return start + absl::Seconds((n - have) / rate_);
}

void TokenBucket::SetRate(double per_second, absl::Time now) {
  Settle(now);
  rate_ = per_second;
}

void TokenBucket::HoldUntil(absl::Time until) {
  if (until <= held_until_) return;
  held_until_ = until;
  tokens_ = 0;
  updated_ = until;
}

}  // namespace upstream
