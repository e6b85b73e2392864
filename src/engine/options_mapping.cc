#include "engine/options_mapping.h"

#include "absl/strings/str_cat.h"

namespace engine {

absl::Status CheckEngineOptions(const EngineOptions& options) {
  if (options.retry_base <= absl::ZeroDuration() ||
      options.retry_cap < options.retry_base) {
    return absl::InvalidArgumentError(
        "retry base must be positive and no larger than the retry cap");
  }
  if (options.breaker.failures > 0 &&
      (options.breaker.cooldown <= absl::ZeroDuration() ||
       options.breaker.cooldown_max < options.breaker.cooldown)) {
    return absl::InvalidArgumentError(
        "the breaker's cool-down must be positive and no longer than its "
        "maximum (--breaker_cooldown, --breaker_cooldown_max)");
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError("max attempts must be at least 1");
  }
  if (options.max_upstream_concurrency < 1) {
    return absl::InvalidArgumentError(
        "upstream concurrency must be at least 1");
  }
  if (options.upstream_batch_max < 1 || options.upstream_batch_max > 50) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upstream batch max must be between 1 (no batching) and 50 (vPIC's "
        "limit), got ",
        options.upstream_batch_max));
  }
  if (options.budget.rate_per_minute > 0 && options.budget.burst < 1) {
    return absl::InvalidArgumentError("upstream burst must be at least 1");
  }
  if (options.budget.retry_min_per_second < 0) {
    return absl::InvalidArgumentError(
        "the retry budget's floor cannot be negative");
  }
  if (options.fleet != nullptr &&
      (!options.encoder || options.fleet_lease < absl::Milliseconds(30))) {
    return absl::InvalidArgumentError(
        "fleet mode needs a result encoder and a lease of at least 30ms");
  }
  return absl::OkStatus();
}

const retry::Clock* ClockOf(const EngineOptions& options) {
  return options.clock != nullptr ? options.clock : retry::Clock::Real();
}

vpic::ClientOptions ClientOptionsOf(const EngineOptions& options) {
  vpic::ClientOptions c;
  c.base_url = options.vpic_base_url;
  c.attempt_timeout = options.attempt_timeout;
  c.user_agent = "vin-decode-service/1";
  return c;
}

ResultCacheOptions CacheOptionsOf(const EngineOptions& options,
                                  const retry::Clock* clock) {
  ResultCacheOptions c;
  c.capacity = options.cache_capacity;
  c.ttl = options.cache_ttl;
  c.reference_ttl = options.reference_ttl;
  c.stale_max = options.cache_stale_max;
  c.encoder = options.encoder;
  c.decoder = options.decoder;
  c.disk = options.disk_cache;
  c.clock = clock;
  c.as_cache_answer = options.as_cache_answer;
  return c;
}

Answerer::Deps AnswererDepsOf(const EngineOptions& options,
                              const retry::Clock* clock, ResultCache* cache,
                              metrics::ServiceMetrics* metrics,
                              retry::Scheduler* scheduler,
                              std::atomic<size_t>* admitted) {
  Answerer::Deps d;
  d.clock = clock;
  d.cache = cache;
  d.metrics = metrics;
  d.snapshots = options.snapshots;
  d.encoder = options.encoder;
  d.scheduler = scheduler;
  d.admitted = admitted;
  d.decoder = options.decoder;
  d.suggestions_per_second = options.suggestions_per_second;
  return d;
}

AttemptRunner::Options RunnerOptionsOf(const EngineOptions& options) {
  AttemptRunner::Options r;
  r.max_concurrency = options.max_upstream_concurrency;
  r.batch_max = options.upstream_batch_max;
  r.configured_rate = options.budget.rate_per_minute;
  r.retry_after_max = options.retry_after_max;
  r.breaker.breaker = options.breaker;
  r.breaker.uniform = options.uniform;
  r.breaker.fleet = options.fleet;
  // A request may be sent twice (rule 16), each within the attempt timeout.
  r.breaker.probe_hold = 2 * options.attempt_timeout + absl::Seconds(1);
  r.share = options.share;
  r.bulk_peak_share = options.bulk_peak_share;
  r.peak_hours = options.peak_hours;
  return r;
}

SharedFleetOptions FleetOptionsOf(const EngineOptions& options) {
  SharedFleetOptions f;
  f.backend = options.fleet;
  f.lease = options.fleet_lease;
  f.cache_ttl = options.cache_ttl;
  f.reference_ttl = options.reference_ttl;
  return f;
}

}  // namespace engine
