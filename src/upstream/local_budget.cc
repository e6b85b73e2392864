#include "upstream/local_budget.h"

namespace upstream {

LocalBudget::LocalBudget(const BudgetOptions& options, absl::Time now)
    : bucket_(options.rate_per_minute / 60, options.burst, now),
      pushback_(options.rate_per_minute),
      retries_(options.retry_ratio, options.retry_min_per_second) {}

bool LocalBudget::OnPushback(absl::Time now, absl::Duration pause) {
  const bool changed = pushback_.OnPushback(now, pause);
  bucket_.HoldUntil(pushback_.paused_until());
  if (changed) bucket_.SetRate(pushback_.rate_per_minute() / 60, now);
  return changed;
}

bool LocalBudget::OnRecovered(absl::Time now) {
  bucket_.HoldUntil(now);  // no burst: the backlog starts at the new rate
  if (!pushback_.OnRecovered(now)) return false;
  bucket_.SetRate(pushback_.rate_per_minute() / 60, now);
  return true;
}

bool LocalBudget::OnSuccess(absl::Time now) {
  if (!pushback_.OnSuccess(now)) return false;
  bucket_.SetRate(pushback_.rate_per_minute() / 60, now);
  return true;
}

}  // namespace upstream
