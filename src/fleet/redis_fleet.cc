#include "fleet/redis_fleet.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fleet/redis_budget.h"

namespace fleet {
namespace {

using engine::FleetBackend;
using engine::FleetEvent;

// The shared cache's answer, else the lease if free (or ours), else taken.
constexpr char kClaim[] = R"lua(
local v = redis.call('GET', KEYS[1])
if v then return {1, v} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {2} end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return {2}
end
return {3})lua";

constexpr char kRenew[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0)lua";

constexpr char kRelease[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0)lua";

// The breaker's probe: free or already ours, it is ours for ARGV[2] ms
// ({1}); else {0, ms left}.
constexpr char kClaimProbe[] = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, redis.call('PTTL', KEYS[1])})lua";

std::string Millis(absl::Duration d) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

std::string RandomReplica() {
  absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

}  // namespace

RedisFleet::RedisFleet(RedisAddress address, std::string prefix,
                       absl::Duration timeout, int fleet_size_hint,
                       std::function<void(bool up)> on_state)
    : prefix_(std::move(prefix)),
      replica_(RandomReplica()),
      fleet_size_hint_(fleet_size_hint),
      client_(std::move(address), timeout, std::move(on_state)) {}

void RedisFleet::ClaimFlight(const std::string& key, const std::string& token,
                             absl::Duration lease,
                             std::function<void(Claim)> done) {
  client_.Command(
      {"EVAL", kClaim, "2", absl::StrCat(prefix_, "result:", key),
       absl::StrCat(prefix_, "lease:", key), token, Millis(lease)},
      [done = std::move(done)](RedisClient::Reply reply) {
        Claim claim;
        if (reply.ok() && reply->type == RedisValue::Type::kArray &&
            !reply->elements.empty()) {
          const long long kind = reply->elements[0].integer;
          if (kind == 1 && reply->elements.size() == 2) {
            claim.kind = Claim::Kind::kCached;
            claim.cached = std::make_shared<const std::string>(
                std::move(reply->elements[1].str));
          } else if (kind == 2) {
            claim.kind = Claim::Kind::kOwner;
          } else if (kind == 3) {
            claim.kind = Claim::Kind::kTaken;
          }
        }
        done(std::move(claim));
      });
}

void RedisFleet::RenewLease(const std::string& key, const std::string& token,
                            absl::Duration lease) {
  client_.Command({"EVAL", kRenew, "1", absl::StrCat(prefix_, "lease:", key),
                   token, Millis(lease)},
                  [](RedisClient::Reply) {});
}

void RedisFleet::ReleaseLease(const std::string& key,
                              const std::string& token) {
  client_.Command({"EVAL", kRelease, "1", absl::StrCat(prefix_, "lease:", key),
                   token},
                  [](RedisClient::Reply) {});
}

void RedisFleet::ClaimProbe(absl::Duration hold,
                            std::function<void(ProbeClaim)> done) {
  client_.Command(
      {"EVAL", kClaimProbe, "1", absl::StrCat(prefix_, "breaker:probe"),
       replica_, Millis(hold)},
      [done = std::move(done)](RedisClient::Reply reply) {
        ProbeClaim claim;
        if (reply.ok() && reply->type == RedisValue::Type::kArray &&
            !reply->elements.empty()) {
          if (reply->elements[0].integer == 1) {
            claim.kind = ProbeClaim::Kind::kMine;
          } else if (reply->elements.size() == 2) {
            claim.kind = ProbeClaim::Kind::kTaken;
            // (-1 or -2: it went meanwhile; the next flight asks again.)
            claim.wait = absl::Milliseconds(
                std::max<long long>(0, reply->elements[1].integer));
          }
        }
        done(claim);
      });
}

void RedisFleet::HoldProbe(absl::Duration hold) {
  client_.Command({"SET", absl::StrCat(prefix_, "breaker:probe"), replica_,
                   "PX", Millis(hold)},
                  [](RedisClient::Reply) {});
}

void RedisFleet::ReleaseProbe() {
  client_.Command({"EVAL", kRelease, "1", absl::StrCat(prefix_, "breaker:probe"),
                   replica_},
                  [](RedisClient::Reply) {});
}

void RedisFleet::StoreResult(const std::string& key, std::string cached,
                             absl::Duration ttl) {
  client_.Command({"SET", absl::StrCat(prefix_, "result:", key),
                   std::move(cached), "PX", Millis(ttl)},
                  [](RedisClient::Reply) {});
  // In Redis before the engine answers the callers: one who asks another
  // replica next finds it there.
  client_.Flush();
}

void RedisFleet::Publish(const FleetEvent& event) {
  client_.Command({"PUBLISH", absl::StrCat(prefix_, "events"),
                   EncodeEvent(event)},
                  [](RedisClient::Reply) {});
}

void RedisFleet::OnEvent(std::function<void(FleetEvent)> handler) {
  client_.Subscribe(absl::StrCat(prefix_, "events"),
                    [this, handler = std::move(handler)](std::string,
                                                         std::string message) {
                      auto e = DecodeEvent(message);
                      if (!e.ok()) {
                        ++events_rejected_;
                        if (on_rejected_) on_rejected_(e.status());
                        return;
                      }
                      if (e->origin != replica_) handler(*std::move(e));
                    });
}

std::unique_ptr<upstream::UpstreamBudget> RedisFleet::MakeBudget(
    const upstream::BudgetOptions& options, std::function<absl::Time()> now) {
  return std::make_unique<RedisBudget>(&client_, absl::StrCat(prefix_, "budget"),
                                       options, fleet_size_hint_,
                                       std::move(now));
}

}  // namespace fleet
