#include "fleet/redis_fleet.h"

#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
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

std::string Millis(absl::Duration d) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

std::string RandomReplica() {
  absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

}  // namespace

// kind origin key | then, by kind:
//   done:      source attempts encoded-size \n encoded-bytes cached-bytes
//   retrying:  attempt next_delay_ns http_status kind \n message
//   failed:    reason retryable attempts retry_delay_ns http_status kind \n message
//   abandoned: (nothing)
std::string EncodeEvent(const FleetEvent& e) {
  std::string head = absl::StrCat(static_cast<int>(e.kind), " ", e.origin,
                                  " ", e.key, "\n");
  switch (e.kind) {
    case FleetEvent::Kind::kDone:
      return absl::StrCat(head, static_cast<int>(e.source), " ", e.attempts,
                          " ", e.encoded ? e.encoded->size() : 0, "\n",
                          e.encoded ? *e.encoded : std::string(),
                          e.cached ? *e.cached : std::string());
    case FleetEvent::Kind::kRetrying:
      return absl::StrCat(head, e.retrying.attempt, " ",
                          absl::ToInt64Nanoseconds(e.retrying.next_delay), " ",
                          e.retrying.error.http_status, " ",
                          e.retrying.error.kind, "\n", e.retrying.error.message);
    case FleetEvent::Kind::kFailed: {
      const vpic::UpstreamError err =
          e.failure.last_error.value_or(vpic::UpstreamError{0, "-", ""});
      return absl::StrCat(head, static_cast<int>(e.failure.reason), " ",
                          e.failure.retryable ? 1 : 0, " ", e.failure.attempts,
                          " ", absl::ToInt64Nanoseconds(e.failure.retry_delay),
                          " ", err.http_status, " ",
                          err.kind.empty() ? "-" : err.kind, "\n",
                          e.failure.message);
    }
    case FleetEvent::Kind::kAbandoned:
      return head;
  }
  return head;
}

absl::optional<FleetEvent> DecodeEvent(const std::string& bytes) {
  const size_t nl = bytes.find('\n');
  if (nl == std::string::npos) return absl::nullopt;
  std::vector<std::string> head = absl::StrSplit(bytes.substr(0, nl), ' ');
  if (head.size() != 3) return absl::nullopt;
  FleetEvent e;
  int kind = 0;
  if (!absl::SimpleAtoi(head[0], &kind) || kind < 0 || kind > 3) {
    return absl::nullopt;
  }
  e.kind = static_cast<FleetEvent::Kind>(kind);
  e.origin = head[1];
  e.key = head[2];
  std::string rest = bytes.substr(nl + 1);
  if (e.kind == FleetEvent::Kind::kAbandoned) return e;
  const size_t nl2 = rest.find('\n');
  if (nl2 == std::string::npos) return absl::nullopt;
  std::vector<std::string> f = absl::StrSplit(rest.substr(0, nl2), ' ');
  std::string tail = rest.substr(nl2 + 1);
  int64_t ns = 0;
  switch (e.kind) {
    case FleetEvent::Kind::kDone: {
      int source = 0;
      size_t size = 0;
      if (f.size() != 3 || !absl::SimpleAtoi(f[0], &source) ||
          source < 0 || source > 2 || !absl::SimpleAtoi(f[1], &e.attempts) ||
          !absl::SimpleAtoi(f[2], &size) || size > tail.size()) {
        return absl::nullopt;
      }
      e.source = static_cast<engine::Source>(source);
      e.encoded = std::make_shared<const std::string>(tail.substr(0, size));
      e.cached = std::make_shared<const std::string>(tail.substr(size));
      return e;
    }
    case FleetEvent::Kind::kRetrying:
      if (f.size() != 4 || !absl::SimpleAtoi(f[0], &e.retrying.attempt) ||
          !absl::SimpleAtoi(f[1], &ns) ||
          !absl::SimpleAtoi(f[2], &e.retrying.error.http_status)) {
        return absl::nullopt;
      }
      e.retrying.next_delay = absl::Nanoseconds(ns);
      e.retrying.error.kind = f[3];
      e.retrying.error.message = tail;
      return e;
    case FleetEvent::Kind::kFailed: {
      int reason = 0, retryable = 0;
      vpic::UpstreamError err;
      if (f.size() != 6 || !absl::SimpleAtoi(f[0], &reason) ||
          !absl::SimpleAtoi(f[1], &retryable) ||
          !absl::SimpleAtoi(f[2], &e.failure.attempts) ||
          !absl::SimpleAtoi(f[3], &ns) ||
          !absl::SimpleAtoi(f[4], &err.http_status)) {
        return absl::nullopt;
      }
      e.failure.reason = static_cast<engine::FailureReason>(reason);
      e.failure.retryable = retryable != 0;
      e.failure.retry_delay = absl::Nanoseconds(ns);
      e.failure.message = tail;
      if (f[5] != "-") {
        err.kind = f[5];
        e.failure.last_error = err;
      }
      return e;
    }
    default:
      return absl::nullopt;
  }
}

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

void RedisFleet::StoreResult(const std::string& key, std::string cached,
                             absl::Duration ttl) {
  client_.Command({"SET", absl::StrCat(prefix_, "result:", key),
                   std::move(cached), "PX", Millis(ttl)},
                  [](RedisClient::Reply) {});
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
                      if (e && e->origin != replica_) handler(*std::move(e));
                    });
}

}  // namespace fleet

namespace fleet {

std::unique_ptr<upstream::UpstreamBudget> RedisFleet::MakeBudget(
    const upstream::BudgetOptions& options, std::function<absl::Time()> now,
    std::function<void(std::function<void()>)> post) {
  return std::make_unique<RedisBudget>(&client_, absl::StrCat(prefix_, "budget"),
                                       options, fleet_size_hint_,
                                       std::move(now), std::move(post));
}

}  // namespace fleet
