#include "fleet/redis_fleet.h"

#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fleet/redis_budget.h"
#include "fleet/redis_fleet_scripts.h"

namespace fleet {
namespace {

using engine::FleetBackend;
using engine::FleetEvent;

std::string Millis(absl::Duration d) {
  return absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

std::string RandomReplica() {
  absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

// The hex SHA-1 of `bytes`, as Lua's redis.sha1hex makes it: a script
// deletes a rejected value only if it is still the one rejected.
std::string Sha1Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha1(),
                 nullptr) != 1) {
    return "";  // matches nothing: the value stays (the lease is still asked)
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), len));
}

// A claim script's answer: {1, value} cached; {2, dropped} ours; {3,
// dropped} taken. `dropped` 1: the script deleted a value that could not
// be a result (not a string, or too large).
FleetBackend::Claim::Kind KindOf(const RedisValue& first) {
  using Kind = FleetBackend::Claim::Kind;
  if (first.type != RedisValue::Type::kInteger) return Kind::kUnavailable;
  switch (first.integer) {
    case 1:
      return Kind::kCached;
    case 2:
      return Kind::kOwner;
    case 3:
      return Kind::kTaken;
    default:
      return Kind::kUnavailable;
  }
}

bool Dropped(const RedisValue& reply) {
  return reply.elements.size() == 2 &&
         reply.elements[1].type == RedisValue::Type::kInteger &&
         reply.elements[1].integer == 1;
}

}  // namespace

RedisFleet::RedisFleet(RedisFleetOptions o)
    : prefix_(std::move(o.prefix)),
      channel_(absl::StrCat(prefix_, "events")),
      replica_(RandomReplica()),
      fleet_size_hint_(o.fleet_size_hint),
      trust_(std::move(o.trust)),
      wall_clock_(std::move(o.wall_clock)),
      events_(&trust_),
      client_(std::move(o.address), o.timeout, std::move(o.on_state),
              std::move(o.tls)) {}

absl::Time RedisFleet::WallNow() const {
  return wall_clock_ ? wall_clock_() : absl::Now();
}

uint64_t RedisFleet::events_rejected() const {
  uint64_t n = 0;
  for (size_t i = 0; i < kRejections; ++i) {
    if (IsEventRejection(static_cast<Rejection>(i))) n += rejected_[i].load();
  }
  return n;
}

void RedisFleet::Reject(Rejection what, const std::string& why) {
  rejected_[static_cast<size_t>(what)].fetch_add(1);
  if (on_rejected_) on_rejected_(what, why);
}

void RedisFleet::ClaimFlight(const std::string& key, const std::string& token,
                             absl::Duration lease,
                             std::function<void(Claim)> done) {
  const std::string result_key = ResultKey(key);
  client_.Command(
      {"EVAL", scripts::kClaim, "2", result_key,
       absl::StrCat(prefix_, "lease:", key), token, Millis(lease),
       absl::StrCat(kMaxValueBytes)},
      [this, key, result_key, token, lease,
       done = std::move(done)](RedisClient::Reply reply) mutable {
        Claim claim;
        if (!reply.ok() || reply->type != RedisValue::Type::kArray ||
            reply->elements.empty()) {
          done(std::move(claim));
          return;
        }
        claim.kind = KindOf(reply->elements[0]);
        if (claim.kind != Claim::Kind::kCached) {
          if (Dropped(*reply)) {
            Reject(Rejection::kResultUnparsable,
                   "not a string, or larger than the largest result");
          }
          done(std::move(claim));
          return;
        }
        if (reply->elements.size() != 2 ||
            reply->elements[1].type != RedisValue::Type::kString) {
          done(Claim{});
          return;
        }
        std::string& stored = reply->elements[1].str;
        Verdict<std::string> v =
            CheckCachedResult(stored, result_key, key, WallNow(), trust_);
        if (!v.value) {
          Reject(v.rejected, v.why);
          DiscardAndClaim(key, stored, token, lease, std::move(done));
          return;
        }
        claim.cached = std::make_shared<const std::string>(*std::move(v.value));
        done(std::move(claim));
      });
}

void RedisFleet::DiscardAndClaim(const std::string& key,
                                 const std::string& rejected,
                                 const std::string& token, absl::Duration lease,
                                 std::function<void(Claim)> done) {
  client_.Command(
      {"EVAL", scripts::kDiscardAndClaim, "2", ResultKey(key),
       absl::StrCat(prefix_, "lease:", key), token, Millis(lease),
       Sha1Hex(rejected)},
      [done = std::move(done)](RedisClient::Reply reply) {
        Claim claim;
        if (reply.ok() && reply->type == RedisValue::Type::kArray &&
            !reply->elements.empty()) {
          claim.kind = KindOf(reply->elements[0]);
          // (Never a cached answer: the VIN is decoded live.)
          if (claim.kind == Claim::Kind::kCached)
            claim.kind = Claim::Kind::kUnavailable;
        }
        done(std::move(claim));
      });
}

void RedisFleet::RenewLease(const std::string& key, const std::string& token,
                            absl::Duration lease) {
  client_.Command({"EVAL", scripts::kRenew, "1",
                   absl::StrCat(prefix_, "lease:", key), token, Millis(lease)},
                  [](RedisClient::Reply) {});
}

void RedisFleet::ReleaseLease(const std::string& key,
                              const std::string& token) {
  client_.Command({"EVAL", scripts::kRelease, "1",
                   absl::StrCat(prefix_, "lease:", key), token},
                  [](RedisClient::Reply) {});
}

void RedisFleet::ClaimProbe(absl::Duration hold,
                            std::function<void(ProbeClaim)> done) {
  client_.Command(
      {"EVAL", scripts::kClaimProbe, "1",
       absl::StrCat(prefix_, "breaker:probe"), replica_, Millis(hold)},
      [this, done = std::move(done)](RedisClient::Reply reply) {
        ProbeClaim claim;
        if (reply.ok() && reply->type == RedisValue::Type::kArray &&
            !reply->elements.empty()) {
          if (reply->elements[0].integer == 1) {
            claim.kind = ProbeClaim::Kind::kMine;
          } else if (reply->elements.size() == 2) {
            claim.kind = ProbeClaim::Kind::kTaken;
            // (-1 or -2: it went meanwhile; the next flight asks again.) A
            // hold longer than any replica makes is somebody else's.
            claim.wait =
                ClampDuration(absl::Milliseconds(reply->elements[1].integer),
                              trust_.limits.probe_hold_max);
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
  client_.Command({"EVAL", scripts::kRelease, "1",
                   absl::StrCat(prefix_, "breaker:probe"), replica_},
                  [](RedisClient::Reply) {});
}

void RedisFleet::StoreResult(const std::string& key, std::string cached,
                             absl::Duration ttl) {
  const std::string result_key = ResultKey(key);
  if (absl::StartsWith(key, engine::kFleetReferencePrefix)) {
    cached = EncodeReferenceAnswer(cached);  // (rule 18: a document)
  }
  client_.Command({"SET", result_key,
                   Seal(cached, result_key, WallNow(), trust_.secret.get()),
                   "PX", Millis(ttl)},
                  [](RedisClient::Reply) {});
  // In Redis before the engine answers the callers: one who asks another
  // replica next finds it there.
  client_.Flush();
}

void RedisFleet::Publish(const FleetEvent& event) {
  client_.Command(
      {"PUBLISH", channel_,
       Seal(EncodeEvent(event), channel_, WallNow(), trust_.secret.get())},
      [](RedisClient::Reply) {});
}

void RedisFleet::OnEvent(std::function<void(FleetEvent)> handler) {
  client_.Subscribe(channel_, [this, handler = std::move(handler)](
                                  std::string, std::string message) {
    Verdict<FleetEvent> v = events_.Check(message, channel_, WallNow());
    if (!v.value) {
      Reject(v.rejected, v.why);
      return;
    }
    if (v.value->origin != replica_) handler(*std::move(v.value));
  });
}

std::unique_ptr<upstream::UpstreamBudget> RedisFleet::MakeBudget(
    const upstream::BudgetOptions& options, std::function<absl::Time()> now) {
  return std::make_unique<RedisBudget>(
      &client_, absl::StrCat(prefix_, "budget"), options, fleet_size_hint_,
      std::move(now), nullptr, trust_.limits.pause_max);
}

}  // namespace fleet
