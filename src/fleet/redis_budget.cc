#include "fleet/redis_budget.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleet {
namespace {

// How long a replica stays on its local bucket after Redis failed to
// answer, before it asks Redis again.
constexpr absl::Duration kRetryShared = absl::Seconds(1);

// The shared bucket, in one hash: tokens, ts (when tokens was right, ms of
// Redis's clock), rate (per minute, effective), paused (until, ms), raised
// (the last raise of the rate, ms). Takes one token if it can.
// ARGV: configured rate per minute (<= 0 unlimited), burst, successes since
// the replica's last ask. Returns {granted 0/1, ms until the next token,
// ms left of a pause, effective rate}.
constexpr char kTake[] = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local conf = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local succ = tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'rate', 'paused', 'raised')
local tokens = tonumber(h[1]) or burst
local ts = tonumber(h[2]) or now
local rate = tonumber(h[3]) or conf
local paused = tonumber(h[4]) or 0
local raised = tonumber(h[5]) or 0
if conf > 0 and rate > conf then rate = conf end
if succ > 0 and conf > 0 and rate < conf and now >= paused then
  rate = math.min(conf, rate + conf * math.max(0, (now - raised) / 60000))
  raised = math.max(raised, now)
end
local granted = 0
local wait = 0
if now < paused then
  wait = paused - now
elseif conf <= 0 then
  granted = 1
else
  if now > ts then
    tokens = math.min(burst, tokens + (now - ts) * rate / 60000)
    ts = now
  end
  if tokens >= 1 then
    tokens = tokens - 1
    granted = 1
  else
    wait = math.ceil((1 - tokens) * 60000 / rate)
  end
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(ts),
           'rate', tostring(rate), 'paused', tostring(paused),
           'raised', tostring(raised))
redis.call('PEXPIRE', KEYS[1], 3600000)
return {granted, wait, math.max(0, paused - now), tostring(rate)})lua";

// A 429 (or 503 with Retry-After) somewhere in the fleet: every replica
// pauses until ARGV[2] ms from now, the rate halves (never below 1 a
// minute), and the bucket refills from the end of the pause.
constexpr char kPushback[] = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local conf = tonumber(ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'rate', 'paused')
local rate = tonumber(h[1]) or conf
local paused = math.max(tonumber(h[2]) or 0, now + tonumber(ARGV[2]))
if conf > 0 then rate = math.max(1, rate / 2) end
redis.call('HSET', KEYS[1], 'tokens', '0', 'ts', tostring(paused),
           'rate', tostring(rate), 'paused', tostring(paused),
           'raised', tostring(paused))
redis.call('PEXPIRE', KEYS[1], 3600000)
return {paused - now, tostring(rate)})lua";

// The fleet's retry budget: per-second counts of first attempts (f<sec>) and
// retries (r<sec>) in one hash. Adds ARGV[1] first attempts now, then grants
// up to ARGV[2] retries if the last 10 s allow them: retries <= ratio
// (ARGV[3]) x first attempts + floor (ARGV[4] per second) x 10. Returns the
// retries granted.
constexpr char kRetryGrant[] = R"lua(
local sec = tonumber(redis.call('TIME')[1])
local firsts = tonumber(ARGV[1])
if firsts > 0 then redis.call('HINCRBY', KEYS[1], 'f' .. sec, firsts) end
local f, r = 0, 0
for s = sec - 9, sec do
  f = f + (tonumber(redis.call('HGET', KEYS[1], 'f' .. s)) or 0)
  r = r + (tonumber(redis.call('HGET', KEYS[1], 'r' .. s)) or 0)
end
for s = sec - 30, sec - 10 do redis.call('HDEL', KEYS[1], 'f' .. s, 'r' .. s) end
local room = math.floor(tonumber(ARGV[3]) * f + tonumber(ARGV[4]) * 10 - r)
local grant = math.max(0, math.min(tonumber(ARGV[2]), room))
if grant > 0 then redis.call('HINCRBY', KEYS[1], 'r' .. sec, grant) end
redis.call('PEXPIRE', KEYS[1], 30000)
return grant)lua";

// Retries a replica keeps in stock: enough for a burst of failures between
// two answers of Redis, few enough not to hold the fleet's budget idle.
constexpr int64_t kRetryStock = 2;

upstream::BudgetOptions FallbackOptions(upstream::BudgetOptions o, int hint) {
  hint = std::max(1, hint);
  if (o.rate_per_minute > 0) o.rate_per_minute /= hint;
  o.retry_min_per_second /= hint;
  return o;
}

double RateOf(const RedisValue& v, double otherwise) {
  double rate = otherwise;
  if (v.type == RedisValue::Type::kString && absl::SimpleAtod(v.str, &rate)) {
    return rate;
  }
  return otherwise;
}

}  // namespace

RedisBudget::RedisBudget(RedisClient* client, std::string key,
                         const upstream::BudgetOptions& options,
                         int fleet_size_hint, Now now, Post post)
    : client_(client),
      key_(std::move(key)),
      options_(options),
      now_(std::move(now)),
      post_(std::move(post)),
      alive_(std::make_shared<bool>(true)),
      local_(FallbackOptions(options, fleet_size_hint), now_()),
      shared_rate_(options.rate_per_minute),
      reported_rate_(options.rate_per_minute) {}

RedisBudget::~RedisBudget() { *alive_ = false; }

RedisClient::Callback RedisBudget::OnLoop(
    std::function<void(RedisClient::Reply)> fn) {
  return [alive = alive_, post = post_, fn = std::move(fn)](RedisClient::Reply r) {
    post([alive, fn, r = std::move(r)]() mutable {
      if (*alive) fn(std::move(r));
    });
  };
}

void RedisBudget::Ask() {
  asking_ = true;
  const int successes = successes_;
  successes_ = 0;
  client_->Command(
      {"EVAL", kTake, "1", key_, absl::StrCat(options_.rate_per_minute),
       absl::StrCat(options_.burst), absl::StrCat(successes)},
      OnLoop([this, successes](RedisClient::Reply r) {
        if (!r.ok()) successes_ += successes;  // told next time
        OnAnswer(r);
      }));
}

void RedisBudget::OnAnswer(const RedisClient::Reply& reply) {
  asking_ = false;
  const absl::Time now = now_();
  if (!reply.ok() || reply->type != RedisValue::Type::kArray ||
      reply->elements.size() != 4) {
    shared_ = false;
    retry_shared_at_ = now + kRetryShared;
    return;
  }
  shared_ = true;
  const auto& e = reply->elements;
  if (e[0].integer > 0) ++granted_;
  next_ask_ = e[0].integer > 0 ? absl::InfinitePast()
                               : now + absl::Milliseconds(e[1].integer);
  shared_paused_until_ = now + absl::Milliseconds(e[2].integer);
  shared_rate_ = RateOf(e[3], shared_rate_);
}

void RedisBudget::RecordFirstAttempts(absl::Time now, int64_t n) {
  local_.RecordFirstAttempts(now, n);  // for the fallback
  firsts_untold_ += n;
  TopUpRetries();
}

bool RedisBudget::TryRetry(absl::Time now) {
  if (options_.retry_ratio < 0) return true;  // no budget
  const bool local = local_.TryRetry(now);  // counted there too, for the fallback
  if (!shared() || !retry_grant_seen_) return local;
  if (retries_granted_ == 0) {
    TopUpRetries();
    return false;
  }
  --retries_granted_;
  TopUpRetries();
  return true;
}

void RedisBudget::TopUpRetries() {
  if (topping_up_ || !client_->up() || options_.retry_ratio < 0) return;
  const int64_t want = std::max<int64_t>(0, kRetryStock - retries_granted_);
  if (want == 0 && firsts_untold_ == 0) return;
  topping_up_ = true;
  firsts_telling_ = firsts_untold_;
  firsts_untold_ = 0;
  client_->Command(
      {"EVAL", kRetryGrant, "1", absl::StrCat(key_, ":retries"),
       absl::StrCat(firsts_telling_), absl::StrCat(want),
       absl::StrCat(options_.retry_ratio),
       absl::StrCat(options_.retry_min_per_second)},
      OnLoop([this](RedisClient::Reply r) {
        topping_up_ = false;
        if (!r.ok() || r->type != RedisValue::Type::kInteger) {
          firsts_untold_ += firsts_telling_;  // told next time
          firsts_telling_ = 0;
          return;
        }
        firsts_telling_ = 0;
        retries_granted_ += r->integer;
        retry_grant_seen_ = true;
        // What came meanwhile goes at once; a refusal is asked again with
        // the next first attempt or retry.
        if (firsts_untold_ > 0) TopUpRetries();
      }));
}

bool RedisBudget::TryAcquire(absl::Time now) {
  if (!shared()) {
    // On the local bucket; Redis is asked again from time to time, and
    // its token, if it gives one, is used by the next request.
    if (!asking_ && client_->up() && now >= retry_shared_at_) {
      retry_shared_at_ = now + kRetryShared;
      Ask();
    }
    return local_.TryAcquire(now);
  }
  if (now < std::max(shared_paused_until_, local_.PausedUntil())) return false;
  if (granted_ > 0) {
    --granted_;
    return true;
  }
  if (!asking_ && now >= next_ask_) Ask();
  return false;
}

absl::Time RedisBudget::StartOfRequest(absl::Time now, double n) const {
  if (!shared()) return local_.StartOfRequest(now, n);
  if (granted_ >= n) return now;
  absl::Time first =
      std::max({now, shared_paused_until_, local_.PausedUntil(), next_ask_});
  // The answer to the ask in flight wakes the loop; until then, a moment.
  if (asking_) first = std::max(first, now + absl::Milliseconds(50));
  const double rest = n - 1 - granted_;
  if (rest <= 0 || shared_rate_ <= 0) return first;
  return first + absl::Seconds(rest * 60 / shared_rate_);
}

bool RedisBudget::OnPushback(absl::Time now, absl::Duration pause) {
  // At once here; the fleet hears of it through the shared hash.
  bool changed = local_.OnPushback(now, pause);
  granted_ = 0;
  shared_paused_until_ = std::max(shared_paused_until_, now + pause);
  if (client_->up()) {
    const double before = shared_rate_;
    if (options_.rate_per_minute > 0) {
      shared_rate_ = std::max(1.0, shared_rate_ / 2);
    }
    changed = shared_ ? shared_rate_ != before : changed;
    client_->Command(
        {"EVAL", kPushback, "1", key_, absl::StrCat(options_.rate_per_minute),
         absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(pause)))},
        OnLoop([this](RedisClient::Reply r) {
          if (!r.ok() || r->type != RedisValue::Type::kArray ||
              r->elements.size() != 2) {
            return;
          }
          shared_paused_until_ =
              std::max(shared_paused_until_,
                       now_() + absl::Milliseconds(r->elements[0].integer));
          shared_rate_ = RateOf(r->elements[1], shared_rate_);
        }));
  }
  return changed;
}

bool RedisBudget::OnSuccess(absl::Time now) {
  ++successes_;
  const bool local_changed = local_.OnSuccess(now);
  if (!shared()) return local_changed;
  // The shared rate climbs in Redis; what the last answer said shows here.
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
