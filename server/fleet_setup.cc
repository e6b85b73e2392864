#include "server/fleet_setup.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet/redis_url.h"
#include "fleet/redis_value.h"
#include "fleet/secret_file.h"
#include "server/common/log.h"
#include "server/common/proto_mapping.h"
#include "server/server.h"

namespace server {
namespace {

// The credentials of the URL, or the password file's.
absl::Status AddPassword(const FleetOptions& o, fleet::RedisAddress* a) {
  if (!o.redis_password_file.empty()) {
    if (!a->password.empty()) {
      return absl::InvalidArgumentError(
          "--redis_url holds a password and --redis_password_file gives "
          "one too: keep one (the file keeps it out of ps and logs)");
    }
    auto password =
        fleet::ReadPasswordFile(o.redis_password_file, "--redis_password_file");
    if (!password.ok()) return password.status();
    a->password = *std::move(password);
  }
  if (!a->user.empty() && a->password.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--redis_url names the user \"", fleet::PrintableText(a->user),
        "\" but no password: ",
        "give it as redis://user:password@host or in --redis_password_file"));
  }
  return absl::OkStatus();
}

fleet::FleetLimits LimitsOf(const engine::EngineOptions& e) {
  fleet::FleetLimits l;
  l.breaker_cooldown_max = e.breaker.cooldown_max;
  l.pause_max = e.retry_after_max;
  l.delay_max =
      std::max({e.retry_cap, e.retry_after_max, e.breaker.cooldown_max});
  l.probe_hold_max = std::max(e.breaker.cooldown_max,
                              2 * e.attempt_timeout + absl::Seconds(1));
  l.cache_ttl = e.cache_ttl;
  l.reference_ttl = e.reference_ttl;
  return l;
}

// Logged at the 1st, 2nd, 4th, 8th... of each kind (a replica of another
// version, or a writer that should not be one, may do it on every value).
void LogRejected(const fleet::RedisFleet& f, const std::string& url,
                 fleet::Rejection what, const std::string& why) {
  const uint64_t n = f.rejected(what);
  if ((n & (n - 1)) != 0) return;
  log::Event(log::Level::kWarn,
             fleet::IsEventRejection(what)
                 ? "a fleet event from redis was not believed: dropped"
                 : "a cached decode in redis was not believed: deleted, "
                   "and the VIN decoded live",
             {{"redis", url},
              {"what", fleet::RejectionName(what)},
              {"error", why},
              {"rejected", static_cast<int64_t>(n)}});
}

}  // namespace

absl::StatusOr<fleet::RedisFleetOptions> RedisFleetOptionsFor(
    const FleetOptions& o, const engine::EngineOptions& e) {
  auto address = fleet::ParseRedisUrl(o.redis_url);
  if (!address.ok()) return address.status();
  if (absl::Status s = AddPassword(o, &*address); !s.ok()) return s;
  if (o.size_hint < 1) {
    return absl::InvalidArgumentError("--fleet_size_hint must be at least 1");
  }
  if (o.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--redis_timeout must be positive");
  }
  if (o.connect_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--redis_connect_timeout cannot be negative");
  }
  fleet::RedisFleetOptions f;
  const bool tls_flags = !o.tls.ca_file.empty() || !o.tls.cert_file.empty() ||
                         !o.tls.key_file.empty();
  if (address->tls) {
    auto tls = fleet::RedisTls::Create(o.tls);
    if (!tls.ok()) return tls.status();
    f.tls = *std::move(tls);
  } else if (tls_flags) {
    return absl::InvalidArgumentError(
        "--redis_tls_ca_file, --redis_tls_cert_file and --redis_tls_key_file "
        "need a rediss:// --redis_url (TLS)");
  }
  if (!o.secret_file.empty()) {
    auto bytes =
        fleet::ReadFleetSecretFile(o.secret_file, "--fleet_secret_file");
    if (!bytes.ok()) return bytes.status();
    auto secret = fleet::FleetSecret::Create(*std::move(bytes));
    if (!secret.ok()) return secret.status();
    f.trust.secret = *std::move(secret);
  }
  f.address = *std::move(address);
  f.prefix = o.key_prefix;
  f.timeout = o.timeout;
  f.fleet_size_hint = o.size_hint;
  f.trust.read_result = CheckResultBytes;
  f.trust.limits = LimitsOf(e);
  return f;
}

absl::StatusOr<std::unique_ptr<fleet::RedisFleet>> StartRedisFleet(
    const FleetOptions& options, const engine::EngineOptions& engine,
    metrics::ServiceMetrics* m, FleetJoin* join) {
  auto o = RedisFleetOptionsFor(options, engine);
  if (!o.ok()) return o.status();
  const std::string url = fleet::RedactRedisUrl(options.redis_url);
  o->on_state = [m, url, join](bool up) {
    m->redis_up.Set(up ? 1 : 0);
    if (join != nullptr && !join->ShouldLogRedisState(up)) return;
    log::Event(up ? log::Level::kInfo : log::Level::kWarn,
               up ? "redis is up: cache, flights and the upstream "
                    "budget are shared with the fleet"
                  : "redis is down: decoding alone (local cache, "
                    "flights and bucket) until it is back",
               {{"redis", url}});
  };
  auto f = std::make_unique<fleet::RedisFleet>(*std::move(o));
  f->OnRejected(
      [f = f.get(), url](fleet::Rejection what, const std::string& why) {
        LogRejected(*f, url, what, why);
      });
  // Logged whatever the join's state: these do not pass by themselves.
  f->OnProblem([url](const absl::Status& why) {
    log::Event(log::Level::kError,
               "cannot use redis (credentials, TLS or its configuration): "
               "decoding alone until this is fixed",
               {{"redis", url}, {"error", why.ToString()}});
  });
  if (join != nullptr) f->OnJoined([join] { join->Joined(); });
  return f;
}

absl::StatusOr<std::unique_ptr<fleet::RedisJobStore>> StartRedisJobStore(
    const FleetOptions& options, const engine::EngineOptions& engine,
    const std::string& owner, std::function<void(const std::string&)> warn) {
  auto o = RedisFleetOptionsFor(options, engine);
  if (!o.ok()) return o.status();
  const std::string url = fleet::RedactRedisUrl(options.redis_url);
  auto caller = fleet::RedisCaller::Start(
      o->address, o->tls, std::max(absl::Seconds(2), options.timeout));
  if (!caller.ok()) return caller.status();
  fleet::RedisJobStoreOptions j;
  j.prefix = o->prefix;
  j.secret = o->trust.secret;
  j.owner = owner;
  j.warn = [warn, url](const std::string& why) {
    warn(absl::StrCat("a job in redis ", url, " was not believed: ", why));
  };
  return std::make_unique<fleet::RedisJobStore>(*std::move(caller),
                                                std::move(j));
}

}  // namespace server
