#include "fleet/redis_budget.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fleet/redis_budget_scripts.h"
#include "upstream/retry_budget.h"

namespace fleet {
namespace {

using budget_scripts::kPushback;
using budget_scripts::kRetryGrant;
using budget_scripts::kTake;

// How long a replica stays on its local bucket after Redis failed to
// answer, before it asks Redis again.
constexpr absl::Duration kRetryShared = absl::Seconds(1);


// Rule 17: tokens of the shared bucket that bulk work alone leaves for
// interactive requests (of any replica), when the burst has room for them.
constexpr int kInteractiveReserve = 1;

// Retries a replica keeps in stock: enough for a burst of failures between
// two answers of Redis, few enough not to hold the fleet's budget idle.
constexpr size_t kRetryStock = 2;

upstream::BudgetOptions FallbackOptions(upstream::BudgetOptions o, int hint) {
  hint = std::max(1, hint);
  if (o.rate_per_minute > 0) o.rate_per_minute /= hint;
  o.retry_min_per_second /= hint;
  return o;
}

// The longest a replica waits before asking the shared bucket again after
// a refusal, whatever Redis said (rates under a few a minute are then
// asked again sooner than their next token: one more refusal).
constexpr absl::Duration kMaxAskWait = absl::Minutes(1);

// A count of ms returned by a script within [lo, hi].
absl::Duration Ms(long long ms, absl::Duration lo, absl::Duration hi) {
  return std::clamp(absl::Milliseconds(ms), lo, hi);
}

// A number for a script, exactly (StrCat keeps 6 digits).
std::string Num(double v) { return absl::StrFormat("%.17g", v); }

}  // namespace

RedisBudget::RedisBudget(RedisClient* client, std::string key,
                         const upstream::BudgetOptions& options,
                         int fleet_size_hint, Now now, Now fleet_clock,
                         absl::Duration pause_max)
    : client_(client),
      key_(std::move(key)),
      options_(options),
      pause_max_(std::max(absl::ZeroDuration(), pause_max)),
      now_(std::move(now)),
      fleet_clock_(std::move(fleet_clock)),
      alive_(std::make_shared<bool>(true)),
      local_(FallbackOptions(options, fleet_size_hint), now_()),
      shared_rate_(options.rate_per_minute),
      reported_rate_(options.rate_per_minute) {
  TopUpRetries(now_());  // a stock for the first failures
}

RedisBudget::~RedisBudget() { *alive_ = false; }

double RedisBudget::SharedRate(const RedisValue& v, double otherwise) const {
  double rate = 0;
  const double conf = options_.rate_per_minute;
  if (conf <= 0 || v.type != RedisValue::Type::kString ||
      !absl::SimpleAtod(v.str, &rate) || !(rate == rate)) {
    return otherwise;  // (unlimited: no shared rate to follow; NaN)
  }
  return std::clamp(rate, std::min(1.0, conf), conf);
}

absl::Duration RedisBudget::Pause(long long ms) const {
  return Ms(ms, absl::ZeroDuration(), pause_max_);
}

RedisClient::Callback RedisBudget::OnLoop(
    std::function<void(RedisClient::Reply)> fn) {
  ++pending_;
  return [this, alive = alive_, fn = std::move(fn)](RedisClient::Reply r) {
    if (!*alive) return;
    --pending_;
    fn(std::move(r));
  };
}

std::string RedisBudget::FleetNow() const {
  if (!fleet_clock_) return "";
  return absl::StrCat(absl::ToUnixMillis(fleet_clock_()));
}

void RedisBudget::Ask(bool take, const Purpose& purpose) {
  asking_ = true;
  const int successes = successes_;
  successes_ = 0;
  const bool bulk = take && purpose.bulk;
  client_->Command(
      {"EVAL", kTake, "1", key_, Num(options_.rate_per_minute),
       Num(options_.burst), absl::StrCat(successes), take ? "1" : "0",
       FleetNow(), bulk ? "1" : "0", absl::StrCat(kInteractiveReserve),
       Num(bulk && purpose.peak ? std::clamp(purpose.peak_share, 1e-3, 1.0)
                                : 1.0),
       absl::StrCat(absl::ToInt64Milliseconds(pause_max_))},
      OnLoop([this, successes, take, bulk](RedisClient::Reply r) {
        if (!r.ok()) successes_ += successes;  // told next time
        OnAnswer(r, take, bulk);
      }));
}

void RedisBudget::OnAnswer(const RedisClient::Reply& reply, bool take,
                           bool bulk) {
  asking_ = false;
  const absl::Time now = now_();
  if (!reply.ok() || reply->type != RedisValue::Type::kArray ||
      reply->elements.size() != 5) {
    shared_ = false;
    retry_shared_at_ = now + kRetryShared;
    return;
  }
  shared_ = true;
  const auto& e = reply->elements;
  if (take) {
    if (e[0].integer > 0) {
      ++granted_;
      next_ask_ = next_ask_bulk_ = absl::InfinitePast();
    } else {
      // A bulk refusal says nothing of an interactive request, which may
      // take the reserve: it asks at once.
      next_ask_bulk_ =
          now + Ms(e[1].integer, absl::ZeroDuration(), kMaxAskWait);
      if (!bulk) next_ask_ = next_ask_bulk_;
    }
  }
  if (e[2].integer > 0) {
    shared_paused_until_ =
        std::max(shared_paused_until_, now + Pause(e[2].integer));
  }
  shared_rate_ = SharedRate(e[3], shared_rate_);
  // (The hash lives an hour; a raise is never further ahead than a pause.)
  shared_raised_ = now + Ms(e[4].integer, -absl::Hours(1), pause_max_);
}

void RedisBudget::RecordFirstAttempts(absl::Time now, int64_t n) {
  local_.RecordFirstAttempts(now, n);  // for the fallback
  firsts_untold_ += n;
  TopUpRetries(now);
}

bool RedisBudget::TryRetry(absl::Time now) {
  if (options_.retry_ratio < 0) return true;  // no budget
  const bool local = local_.TryRetry(now);  // counted there too, for the fallback
  if (!shared() || !retry_grant_seen_) {
    // Made before Redis's first grant: counted there with the next call.
    if (local && shared()) spent_untold_.push_back(-1);
    TopUpRetries(now);
    return local;
  }
  DropExpiredGrants(now);
  if (grants_.empty()) {
    TopUpRetries(now);
    return false;
  }
  spent_untold_.push_back(grants_.front().slot);
  grants_.pop_front();
  TopUpRetries(now);
  return true;
}

void RedisBudget::DropExpiredGrants(absl::Time now) {
  while (!grants_.empty() && now >= grants_.front().expires) {
    grants_.pop_front();
  }
}

void RedisBudget::TopUpRetries(absl::Time now) {
  if (topping_up_ || !client_->up() || options_.retry_ratio < 0) return;
  DropExpiredGrants(now);
  const int64_t want =
      grants_.size() < kRetryStock
          ? static_cast<int64_t>(kRetryStock - grants_.size())
          : 0;
  // First attempts make room; otherwise room comes back only with time.
  const int64_t ask =
      want > 0 && (firsts_untold_ > 0 || now >= retry_room_at_) ? want : 0;
  if (ask == 0 && firsts_untold_ == 0 && spent_untold_.empty()) return;
  topping_up_ = true;
  firsts_telling_ = firsts_untold_;
  firsts_untold_ = 0;
  spent_telling_.swap(spent_untold_);
  spent_untold_.clear();
  std::vector<std::string> argv = {
      "EVAL",
      kRetryGrant,
      "1",
      absl::StrCat(key_, ":retries"),
      absl::StrCat(firsts_telling_),
      absl::StrCat(ask),
      Num(options_.retry_ratio),
      Num(std::max(0.0, options_.retry_min_per_second) *
          absl::ToDoubleSeconds(upstream::RetryBudget::kSlot *
                                upstream::RetryBudget::kSlots)),
      FleetNow(),
      absl::StrCat(upstream::RetryBudget::kSlots),
      absl::StrCat(absl::ToInt64Milliseconds(upstream::RetryBudget::kSlot))};
  for (int64_t slot : spent_telling_) argv.push_back(absl::StrCat(slot));
  client_->Command(
      std::move(argv), OnLoop([this, ask](RedisClient::Reply r) {
        topping_up_ = false;
        if (!r.ok() || r->type != RedisValue::Type::kArray ||
            r->elements.size() != 4) {
          firsts_untold_ += firsts_telling_;  // told next time
          firsts_telling_ = 0;
          spent_untold_.insert(spent_untold_.end(), spent_telling_.begin(),
                               spent_telling_.end());
          spent_telling_.clear();
          return;
        }
        firsts_telling_ = 0;
        spent_telling_.clear();
        const absl::Time now = now_();
        const auto& e = r->elements;
        // Bounded: never more retries than asked, nor a grant or a wait
        // beyond the window.
        const absl::Duration window =
            upstream::RetryBudget::kSlot * upstream::RetryBudget::kSlots;
        const long long granted = std::clamp<long long>(e[0].integer, 0, ask);
        const absl::Time expires =
            now + Ms(e[3].integer, absl::ZeroDuration(), window);
        for (long long i = 0; i < granted; ++i) {
          grants_.push_back({std::max<long long>(-1, e[1].integer), expires});
        }
        retry_grant_seen_ = true;
        if (ask > 0) {
          retry_room_at_ =
              granted >= ask ? absl::InfinitePast()
              : e[2].integer < 0
                  ? absl::InfiniteFuture()
                  : now + Ms(e[2].integer, absl::ZeroDuration(), window);
        }
        // What came meanwhile goes at once; a refusal is asked again with
        // the next first attempt, or once room may have come back.
        if (firsts_untold_ > 0 || !spent_untold_.empty()) TopUpRetries(now);
      }));
}

bool RedisBudget::TryAcquire(absl::Time now) {
  return TryAcquire(now, Purpose{});
}

bool RedisBudget::TryAcquire(absl::Time now, const Purpose& purpose) {
  TopUpRetries(now);  // room for retries may have come back
  if (!shared()) {
    // On the local bucket; Redis is asked again from time to time, and
    // its token, if it gives one, is used by the next request.
    if (!asking_ && client_->up() && now >= retry_shared_at_) {
      retry_shared_at_ = now + kRetryShared;
      Ask(true);
    }
    return local_.TryAcquire(now);
  }
  if (now < std::max(shared_paused_until_, local_.PausedUntil())) return false;
  if (granted_ > 0) {
    --granted_;
    return true;
  }
  if (!asking_ && now >= (purpose.bulk ? next_ask_bulk_ : next_ask_)) {
    Ask(true, purpose);
  }
  return false;
}

absl::Time RedisBudget::StartOfRequest(absl::Time now, double n) const {
  return StartOfRequest(now, n, Purpose{});
}

absl::Time RedisBudget::StartOfRequest(absl::Time now, double n,
                                       const Purpose& purpose) const {
  if (!shared()) return local_.StartOfRequest(now, n);
  // (A token granted before a pause that came meanwhile waits for its end,
  // as TryAcquire does.)
  if (granted_ >= n) {
    return std::max({now, shared_paused_until_, local_.PausedUntil()});
  }
  absl::Time first =
      std::max({now, shared_paused_until_, local_.PausedUntil(),
                purpose.bulk ? next_ask_bulk_ : next_ask_});
  // The answer to the ask in flight wakes the loop; until then, a moment.
  if (asking_) first = std::max(first, now + absl::Milliseconds(50));
  const double rest = n - 1 - granted_;
  if (rest <= 0 || shared_rate_ <= 0) return first;
  const double rate = purpose.bulk && purpose.peak
                          ? shared_rate_ * std::max(1e-9, purpose.peak_share)
                          : shared_rate_;
  return first + absl::Seconds(rest * 60 / rate);
}

bool RedisBudget::OnPushback(absl::Time now, absl::Duration pause) {
  return Cut(now, local_.OnPushback(now, pause), pause, 0);
}

bool RedisBudget::OnRecovered(absl::Time now) {
  return Cut(now, local_.OnRecovered(now), absl::ZeroDuration(),
             upstream::kRecoveryShare);
}

bool RedisBudget::Cut(absl::Time now, bool changed, absl::Duration pause,
                      double share) {
  // At once here; the fleet hears of it through the shared hash.
  granted_ = 0;
  shared_paused_until_ = std::max(shared_paused_until_, now + pause);
  if (client_->up()) {
    const double before = shared_rate_;
    const double conf = options_.rate_per_minute;
    if (conf > 0) {
      shared_rate_ =
          share == 0 ? std::max(1.0, std::min(shared_rate_, conf) / 2)
                     : std::min(shared_rate_, std::max(1.0, conf * share));
    }
    shared_raised_ = shared_paused_until_;  // the climb starts after the pause
    if (shared_) changed = shared_rate_ != before;
    const int64_t pause_ms =
        share == 0 ? std::max<int64_t>(1, absl::ToInt64Milliseconds(pause)) : 0;
    client_->Command(
        {"EVAL", kPushback, "1", key_, Num(conf), absl::StrCat(pause_ms),
         FleetNow(), share == 0 ? std::string("halve") : Num(share),
         absl::StrCat(absl::ToInt64Milliseconds(pause_max_))},
        OnLoop([this](RedisClient::Reply r) {
          if (!r.ok() || r->type != RedisValue::Type::kArray ||
              r->elements.size() != 2) {
            return;
          }
          const absl::Time paused = now_() + Pause(r->elements[0].integer);
          shared_paused_until_ = std::max(shared_paused_until_, paused);
          shared_raised_ = paused;
          shared_rate_ = SharedRate(r->elements[1], shared_rate_);
        }));
  }
  reported_rate_ = EffectiveRatePerMinute();
  return changed;
}

bool RedisBudget::OnSuccess(absl::Time now) {
  ++successes_;
  const bool local_changed = local_.OnSuccess(now);
  TopUpRetries(now);
  if (!shared()) return local_changed;
  const double conf = options_.rate_per_minute;
  if (conf > 0 && shared_rate_ < conf) {
    // Raised here as Redis raises it when it hears of the success (told at
    // once); its answer then says what the fleet's rate is.
    const double minutes =
        std::max(0.0, absl::ToDoubleMinutes(now - shared_raised_));
    shared_raised_ = std::max(shared_raised_, now);
    shared_rate_ = std::min(conf, shared_rate_ + conf * minutes);
    if (!asking_) Ask(false);
  }
  const bool changed = shared_rate_ != reported_rate_;
  reported_rate_ = shared_rate_;
  return changed;
}

double RedisBudget::EffectiveRatePerMinute() const {
  if (!shared()) return local_.EffectiveRatePerMinute();
  return shared_rate_;
}

absl::Time RedisBudget::PausedUntil() const {
  return std::max(shared_paused_until_, local_.PausedUntil());
}

}  // namespace fleet
