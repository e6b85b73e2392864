// The fleet's one NHTSA budget (DESIGN rules 9-11 across replicas): the
// token bucket, the pushback pause and the effective rate live in one Redis
// hash, changed only by atomic Lua scripts that read the fleet's clock
// (Redis's own), so that N replicas together stay within --upstream_rate.
// It is the same specification as upstream::LocalBudget: one table of cases
// runs against both (tests/fleet/budget_conformance_test.cc).
//
// The engine asks its budget synchronously on its loop; Redis answers
// later. So a replica asks Redis for a token when a flight is ready and has
// none, and the flight goes when the answer comes (on the loop). One
// request to Redis is in flight at a time; a refusal says when the next
// token (or the end of a pause) comes, and the replica asks again then.
// While the rate is below the configured one after a cut, a success tells
// Redis at once (with any others since the last ask), and the rate the
// replica shows is raised as Redis will raise it, until Redis's answer says
// what the fleet's rate is.
//
// While Redis is down, or its answers are late, the replica falls back to a
// local bucket at --upstream_rate / --fleet_size_hint, and goes back to the
// shared one when Redis answers again.
//
// The retry budget (rule 11) is the fleet's too, with the window of
// upstream::RetryBudget: first attempts and retries are counted in a ring
// of 100 slots of 100 ms in a Redis hash, and the budget is checked there
// over the last 100 slots. A retry is decided the moment an attempt fails,
// on the loop, and cannot wait for Redis; so a replica keeps a small stock
// of retries that Redis granted it (each counted, while unused, in the slot
// it was granted in), spends one per retry (Redis then counts it in the
// slot it was spent in, as the local budget does), and asks for more, with
// the first attempts it made since, when it runs low. A grant that leaves
// the window unused is dropped, and when the fleet's budget is spent Redis
// says when room comes back: the replica asks again at its next use of the
// budget after that. A replica never retries beyond what the fleet's budget
// granted; it may refuse a retry the fleet would allow when nothing asked
// Redis between the room coming back and the retry, which errs on the side
// of fewer requests.
//
// Loop-thread only, like every UpstreamBudget.
#ifndef VIN_FLEET_REDIS_BUDGET_H_
#define VIN_FLEET_REDIS_BUDGET_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fleet/redis_client.h"
#include "upstream/local_budget.h"
#include "upstream/upstream_budget.h"

namespace fleet {

class RedisBudget final : public upstream::UpstreamBudget {
 public:
  // Times of the engine's monotonic clock.
  using Now = std::function<absl::Time()>;

  // `client` is attached to the engine's loop; its answers run there.
  // `fleet_clock`: the time the scripts go by, the same for every replica;
  // null (the default) is Redis's own clock (TIME). Tests pass a fake one.
  // `pause_max` (--retry_after_max): the longest pause the shared hash may
  // impose. Whatever the scripts return is bounded before it is used
  // (DESIGN rule 19: anyone who reaches Redis can write the hash): a
  // pause to `pause_max`, a wait before asking again to a minute, the
  // rate to [1, the configured rate], retries granted to those asked.
  RedisBudget(RedisClient* client, std::string key,
              const upstream::BudgetOptions& options, int fleet_size_hint,
              Now now, Now fleet_clock = nullptr,
              absl::Duration pause_max = absl::Seconds(60));
  ~RedisBudget() override;

  bool TryAcquire(absl::Time now) override;
  // Rule 17: a bulk request leaves the fleet's interactive reserve (one
  // token, while the burst allows one) and, during peak hours, uses at
  // most its share of the rate, in the shared script.
  bool TryAcquire(absl::Time now, const Purpose& purpose) override;
  bool LimitsBulk() const override { return shared(); }
  absl::Time StartOfRequest(absl::Time now, double n,
                            const Purpose& purpose) const override;
  absl::Time StartOfRequest(absl::Time now, double n) const override;
  void RecordFirstAttempts(absl::Time now, int64_t n) override;
  bool TryRetry(absl::Time now) override;
  bool OnPushback(absl::Time now, absl::Duration pause) override;
  bool OnSuccess(absl::Time now) override;
  bool OnRecovered(absl::Time now) override;
  double EffectiveRatePerMinute() const override;
  absl::Time PausedUntil() const override;

  // Whether the shared bucket is in use (Redis answered the last ask).
  bool shared() const { return shared_ && client_->up(); }
  // Commands sent to Redis whose answers have not come yet.
  int pending() const { return pending_; }

 private:
  // A pushback (share 0: the rate halves, `pause`) or the recovery after an
  // outage (the rate resumes from `share` of the configured one), here at
  // once and in the shared hash; `changed`: the local budget's rate moved.
  bool Cut(absl::Time now, bool changed, absl::Duration pause, double share);
  // A retry Redis granted this replica and that it has not spent.
  struct Grant {
    int64_t slot;        // the fleet's slot it is counted in
    absl::Time expires;  // when that slot leaves the window (engine's clock)
  };

  void Ask(bool take, const Purpose& purpose = {});
  // `take`: the ask was for a token (else only for the successes), for
  // bulk work alone when `bulk`.
  void OnAnswer(const RedisClient::Reply& reply, bool take, bool bulk);
  // A reply callback that runs `fn`, unless the budget is gone by then.
  RedisClient::Callback OnLoop(std::function<void(RedisClient::Reply)> fn);
  // The fleet clock's time for a script ("" for Redis's own).
  std::string FleetNow() const;
  // Tells Redis the first attempts and retries made since the last time,
  // and asks for retries up to the stock, when no such request is in
  // flight and there is something to tell or room may have come back.
  void TopUpRetries(absl::Time now);
  void DropExpiredGrants(absl::Time now);

  // A rate Redis returned (the effective rate), bounded; `otherwise` when
  // it is not a number.
  double SharedRate(const RedisValue& v, double otherwise) const;
  // A pause Redis returned, in ms, bounded to [0, pause_max_].
  absl::Duration Pause(long long ms) const;

  RedisClient* const client_;
  const std::string key_;
  const upstream::BudgetOptions options_;
  const absl::Duration pause_max_;
  const Now now_;
  const Now fleet_clock_;
  // Set to false when the budget is destroyed, for answers still on their
  // way.
  std::shared_ptr<bool> alive_;
  int pending_ = 0;

  upstream::LocalBudget local_;  // the fallback, and the retry budget
  bool shared_ = true;           // until Redis fails to answer
  int granted_ = 0;              // tokens Redis gave that are not used yet
  bool asking_ = false;
  // When to ask again after a refusal: an interactive request at
  // next_ask_, bulk alone at next_ask_bulk_ (refused also for the reserve
  // and its peak-hour share).
  absl::Time next_ask_ = absl::InfinitePast();
  absl::Time next_ask_bulk_ = absl::InfinitePast();
  absl::Time shared_paused_until_ = absl::InfinitePast();
  double shared_rate_;
  // When the shared rate was last raised (or the pause ends), as Redis
  // said: the next success raises it by the minutes since.
  absl::Time shared_raised_ = absl::InfinitePast();
  int successes_ = 0;  // since the last ask
  double reported_rate_;  // the rate OnPushback/OnSuccess last reported
  absl::Time retry_shared_at_ = absl::InfinitePast();  // after a failure
  // The shared retry budget: first attempts not yet told to Redis (and
  // those on their way), the grants not spent yet (oldest first), the
  // grants spent and not yet told (their slots), and whether a grant was
  // ever received (until then, the local budget).
  int64_t firsts_untold_ = 0;
  int64_t firsts_telling_ = 0;
  std::deque<Grant> grants_;
  std::vector<int64_t> spent_untold_;
  std::vector<int64_t> spent_telling_;
  // When the fleet's retry budget may have room again (after a grant
  // short of what was asked).
  absl::Time retry_room_at_ = absl::InfinitePast();
  bool topping_up_ = false;
  bool retry_grant_seen_ = false;
};

}  // namespace fleet

#endif  // VIN_FLEET_REDIS_BUDGET_H_
