// The upstream budget of one process: a token bucket, the pushback state and
// the retry budget, in memory. Not thread-safe: owned by the engine's loop.
#ifndef VIN_UPSTREAM_LOCAL_BUDGET_H_
#define VIN_UPSTREAM_LOCAL_BUDGET_H_

#include "upstream/pushback.h"
#include "upstream/retry_budget.h"
#include "upstream/token_bucket.h"
#include "upstream/upstream_budget.h"

namespace upstream {

class LocalBudget final : public UpstreamBudget {
 public:
  LocalBudget(const BudgetOptions& options, absl::Time now);

  bool TryAcquire(absl::Time now) override { return bucket_.TryTake(now); }
  absl::Time StartOfRequest(absl::Time now, double n) const override {
    return bucket_.TimeOfToken(now, n);
  }
  void RecordFirstAttempts(absl::Time now, int64_t n) override {
    retries_.RecordFirstAttempts(now, n);
  }
  bool TryRetry(absl::Time now) override { return retries_.TryRetry(now); }
  bool OnPushback(absl::Time now, absl::Duration pause) override;
  bool OnSuccess(absl::Time now) override;
  bool OnRecovered(absl::Time now) override;
  double EffectiveRatePerMinute() const override {
    return pushback_.rate_per_minute();
  }
  absl::Time PausedUntil() const override { return pushback_.paused_until(); }

 private:
  TokenBucket bucket_;
  Pushback pushback_;
  RetryBudget retries_;
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_LOCAL_BUDGET_H_
