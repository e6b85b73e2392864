// Fleet mode's wiring (README "Running a fleet"): --redis_url with its
// credentials (--redis_password_file) and TLS (--redis_tls_*), the fleet's
// secret (--fleet_secret_file), the limits other replicas' events are cut
// to (this replica's own flags), and the log lines of Redis's state, of
// connections Redis refused, and of values read from Redis that were not
// believed. The URL is logged redacted: never its password.
#ifndef VIN_SERVER_FLEET_SETUP_H_
#define VIN_SERVER_FLEET_SETUP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "fleet/redis_fleet.h"
#include "fleet/redis_job_store.h"
#include "metrics/metrics.h"
#include "server/fleet_join.h"

namespace server {

struct FleetOptions;

// The fleet's options from the server's: the URL parsed (a password from
// the file, which the URL must not also give), the TLS context of a
// rediss:// URL (TLS flags without one are refused), the secret read, and
// this replica's limits from `engine`. INVALID_ARGUMENT names the flag.
absl::StatusOr<fleet::RedisFleetOptions> RedisFleetOptionsFor(
    const FleetOptions& options, const engine::EngineOptions& engine);

// The Redis fleet for `options`, its state and problems logged (and told to
// `m` and `join`, which may be null and outlive it).
absl::StatusOr<std::unique_ptr<fleet::RedisFleet>> StartRedisFleet(
    const FleetOptions& options, const engine::EngineOptions& engine,
    metrics::ServiceMetrics* m, FleetJoin* join);

// The fleet's job store (DESIGN rule 20): Redis of `options`, with its
// own connection (commands wait: up to max(--redis_timeout, 2 s)), the
// fleet's prefix and secret; leases are taken in the name of `owner` (this
// replica's).
absl::StatusOr<std::unique_ptr<fleet::RedisJobStore>> StartRedisJobStore(
    const FleetOptions& options, const engine::EngineOptions& engine,
    const std::string& owner, std::function<void(const std::string&)> warn);

}  // namespace server

#endif  // VIN_SERVER_FLEET_SETUP_H_
