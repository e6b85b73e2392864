// The fleet's one NHTSA budget (DESIGN rules 9 and 10 across replicas): the
// token bucket, the pushback pause and the effective rate live in one Redis
// hash, changed only by atomic Lua scripts that read Redis's own clock, so
// that N replicas together stay within --upstream_rate.
//
// The engine asks its budget synchronously on its loop; Redis answers
// later. So a replica asks Redis for a token when a flight is ready and has
// none, and the flight goes when the answer comes (posted to the loop). One
// request to Redis is in flight at a time; a refusal says when the next
// token (or the end of a pause) comes, and the replica asks again then.
// Successes since the last ask travel with the next one and raise the shared
// rate back after a cut.
//
// While Redis is down, or its answers are late, the replica falls back to a
// local bucket at --upstream_rate / --fleet_size_hint, and goes back to the
// shared one when Redis answers again.
//
// The retry budget (rule 11) is the fleet's too: first attempts and retries
// are counted per second in a Redis hash, and the budget is checked there
// over the last 10 s. A retry is decided the moment an attempt fails, on
// the loop, and cannot wait for Redis; so a replica keeps a small stock of
// retries that Redis granted it (taken from the fleet's budget when
// granted), spends one per retry, and asks for more, with the first
// attempts it made since, when it runs low. A replica never retries beyond
// what the fleet's budget granted; a granted retry left unused is simply
// not made, which errs on the side of fewer requests.
//
// Loop-thread only, like every UpstreamBudget.
#ifndef VIN_FLEET_REDIS_BUDGET_H_
#define VIN_FLEET_REDIS_BUDGET_H_

#include <functional>
#include <memory>
#include <string>

#include "fleet/redis_client.h"
#include "upstream/local_budget.h"
#include "upstream/upstream_budget.h"

namespace fleet {

class RedisBudget final : public upstream::UpstreamBudget {
 public:
  // Runs a task on the engine's loop (from any thread).
  using Post = std::function<void(std::function<void()>)>;
  // Times of the engine's monotonic clock.
  using Now = std::function<absl::Time()>;

  RedisBudget(RedisClient* client, std::string key,
              const upstream::BudgetOptions& options, int fleet_size_hint,
              Now now, Post post);
  ~RedisBudget() override;

  bool TryAcquire(absl::Time now) override;
  absl::Time StartOfRequest(absl::Time now, double n) const override;
  void RecordFirstAttempts(absl::Time now, int64_t n) override;
  bool TryRetry(absl::Time now) override;
  bool OnPushback(absl::Time now, absl::Duration pause) override;
  bool OnSuccess(absl::Time now) override;
  double EffectiveRatePerMinute() const override;
  absl::Time PausedUntil() const override;

  // Whether the shared bucket is in use (Redis answered the last ask).
  bool shared() const { return shared_ && client_->up(); }

 private:
  void Ask();
  void OnAnswer(const RedisClient::Reply& reply);
  // A reply callback that runs `fn` on the engine's loop, unless the budget
  // is gone by then.
  RedisClient::Callback OnLoop(std::function<void(RedisClient::Reply)> fn);
  // Tells Redis the first attempts made since the last time, and asks for
  // retries up to the stock, when none such request is in flight.
  void TopUpRetries();

  RedisClient* const client_;
  const std::string key_;
  const upstream::BudgetOptions options_;
  const Now now_;
  const Post post_;
  // Set to false when the budget is destroyed, for answers still on their
  // way.
  std::shared_ptr<bool> alive_;

  upstream::LocalBudget local_;  // the fallback, and the retry budget
  bool shared_ = true;           // until Redis fails to answer
  int granted_ = 0;              // tokens Redis gave that are not used yet
  bool asking_ = false;
  absl::Time next_ask_ = absl::InfinitePast();
  absl::Time shared_paused_until_ = absl::InfinitePast();
  double shared_rate_;
  int successes_ = 0;  // since the last ask
  double reported_rate_;  // the shared rate OnSuccess last reported
  absl::Time retry_shared_at_ = absl::InfinitePast();  // after a failure
  // The shared retry budget: first attempts not yet told to Redis (and
  // those on their way), the retries Redis granted and not yet spent, and
  // whether a grant was ever received (until then, the local budget).
  int64_t firsts_untold_ = 0;
  int64_t firsts_telling_ = 0;
  int64_t retries_granted_ = 0;
  bool topping_up_ = false;
  bool retry_grant_seen_ = false;
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_BUDGET_H_
