// The requests to vPIC: where, how fast, how often again, and the circuit
// breaker.
// --help lists these flags under "upstream (vPIC, rate, retries, breaker)"
// (server/flags.cc).

#include <algorithm>
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flag_groups.h"

ABSL_FLAG(std::string, vpic_base_url, "https://vpic.nhtsa.dot.gov/api/vehicles",
          "vPIC API base URL (a mirror or the fake vPIC can stand in)");
ABSL_FLAG(absl::Duration, retry_base, absl::Milliseconds(100),
          "base of the decorrelated-jitter retry delay");
ABSL_FLAG(absl::Duration, retry_cap, absl::Seconds(5), "largest retry delay");
ABSL_FLAG(int, max_attempts, 4,
          "upstream attempts per decode, the first included");
ABSL_FLAG(absl::Duration, attempt_timeout, absl::Seconds(15),
          "time limit of one upstream attempt");
ABSL_FLAG(int, max_upstream_concurrency, 8,
          "upstream requests in progress at once, all callers together");
ABSL_FLAG(double, upstream_rate, 1000,
          "upstream requests per minute toward vPIC, all callers, retries "
          "and batch requests together (0: unlimited)");
ABSL_FLAG(int, upstream_burst, 10,
          "upstream requests that may start back to back after a quiet spell");
ABSL_FLAG(int, upstream_batch_max, 50,
          "ready decodes sent together in one DecodeVINValuesBatch request "
          "when a backlog forms (1: no batching; vPIC allows 50)");
ABSL_FLAG(double, retry_budget, 0.1,
          "retries may add at most this share of the first attempts of the "
          "last 10 s (negative: no retry budget)");
ABSL_FLAG(double, retry_budget_min, 1,
          "retries per second the retry budget allows whatever the traffic");
ABSL_FLAG(absl::Duration, retry_after_max, absl::Seconds(60),
          "longest Retry-After waited out; a longer one fails the decode "
          "(retryable)");
ABSL_FLAG(int, breaker_failures, 5,
          "upstream requests failed in a row (unreachable or broken vPIC) "
          "that open the circuit breaker (0: no breaker)");
ABSL_FLAG(absl::Duration, breaker_cooldown, absl::Seconds(5),
          "how long the open breaker waits before its one probe of vPIC");
ABSL_FLAG(absl::Duration, breaker_cooldown_max, absl::Minutes(2),
          "the longest cool-down, grown with jitter after each failed probe");

namespace server {

// The requests to vPIC: where, how fast, how often again, and the breaker.
void UpstreamFromFlags(engine::EngineOptions& e) {
  e.vpic_base_url = absl::GetFlag(FLAGS_vpic_base_url);
  e.retry_base = absl::GetFlag(FLAGS_retry_base);
  e.retry_cap = absl::GetFlag(FLAGS_retry_cap);
  e.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  e.attempt_timeout = absl::GetFlag(FLAGS_attempt_timeout);
  e.max_upstream_concurrency = absl::GetFlag(FLAGS_max_upstream_concurrency);
  e.retry_after_max = absl::GetFlag(FLAGS_retry_after_max);
  e.breaker.failures = std::max(0, absl::GetFlag(FLAGS_breaker_failures));
  e.breaker.cooldown = absl::GetFlag(FLAGS_breaker_cooldown);
  e.breaker.cooldown_max = absl::GetFlag(FLAGS_breaker_cooldown_max);
  e.budget.rate_per_minute = absl::GetFlag(FLAGS_upstream_rate);
  e.budget.burst = absl::GetFlag(FLAGS_upstream_burst);
  e.budget.retry_ratio = absl::GetFlag(FLAGS_retry_budget);
  e.budget.retry_min_per_second = absl::GetFlag(FLAGS_retry_budget_min);
  e.upstream_batch_max = absl::GetFlag(FLAGS_upstream_batch_max);
}

}  // namespace server
