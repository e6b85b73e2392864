// Each component's options from the engine's (options_mapping.h), as pure
// functions: every field reaches its component by name, and the checks
// refuse what Engine::Create refuses.
#include "engine/options_mapping.h"

#include <atomic>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace engine {
namespace {

using testing::HasSubstr;

TEST(CheckEngineOptions, TheDefaultsAreValid) {
  EXPECT_TRUE(CheckEngineOptions(EngineOptions{}).ok());
}

TEST(CheckEngineOptions, RefusesWhatCannotWork) {
  struct Case {
    const char* what;
    void (*change)(EngineOptions&);
    const char* says;
  };
  const Case cases[] = {
      {"retry base zero", [](EngineOptions& o) { o.retry_base = {}; },
       "retry base must be positive"},
      {"cap below base",
       [](EngineOptions& o) { o.retry_cap = absl::Milliseconds(50); },
       "no larger than the retry cap"},
      {"breaker cool-down zero",
       [](EngineOptions& o) { o.breaker.cooldown = {}; }, "--breaker_cooldown"},
      {"breaker cool-down over its max",
       [](EngineOptions& o) { o.breaker.cooldown_max = absl::Seconds(1); },
       "--breaker_cooldown_max"},
      {"no attempts", [](EngineOptions& o) { o.max_attempts = 0; },
       "max attempts"},
      {"no concurrency",
       [](EngineOptions& o) { o.max_upstream_concurrency = 0; },
       "upstream concurrency"},
      {"batch of 51", [](EngineOptions& o) { o.upstream_batch_max = 51; },
       "got 51"},
      {"no burst",
       [](EngineOptions& o) {
         o.budget.rate_per_minute = 60;
         o.budget.burst = 0;
       },
       "upstream burst"},
      {"negative retry floor",
       [](EngineOptions& o) { o.budget.retry_min_per_second = -1; },
       "floor cannot be negative"},
      {"fleet without encoder",
       [](EngineOptions& o) { o.fleet = reinterpret_cast<FleetBackend*>(0x1); },
       "fleet mode needs a result encoder"},
  };
  for (const Case& c : cases) {
    EngineOptions o;
    c.change(o);
    const absl::Status s = CheckEngineOptions(o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.says)) << c.what;
  }
  // Off, the breaker's cool-downs are not checked.
  EngineOptions off;
  off.breaker.failures = 0;
  off.breaker.cooldown = {};
  EXPECT_TRUE(CheckEngineOptions(off).ok());
}

TEST(ClockOf, TheGivenClockElseTheRealOne) {
  retry::FakeClock fake;
  EngineOptions o;
  EXPECT_EQ(ClockOf(o), retry::Clock::Real());
  o.clock = &fake;
  EXPECT_EQ(ClockOf(o), &fake);
}

TEST(ClientOptionsOf, TheBaseUrlAndTheAttemptTimeout) {
  EngineOptions o;
  o.vpic_base_url = "http://127.0.0.1:1/api/vehicles";
  o.attempt_timeout = absl::Seconds(7);
  const vpic::ClientOptions c = ClientOptionsOf(o);
  EXPECT_EQ(c.base_url, "http://127.0.0.1:1/api/vehicles");
  EXPECT_EQ(c.attempt_timeout, absl::Seconds(7));
  EXPECT_EQ(c.user_agent, "vin-decode-service/1");
}

// Result bytes functions that say which they are.
EngineOptions WithResultBytes() {
  EngineOptions o;
  o.encoder = [](const DecodeResult&) { return std::string("encoder"); };
  o.decoder = [](const std::string&, DecodeResult* r) {
    r->vin = "decoder";
    return true;
  };
  o.as_cache_answer = [](const std::string&) {
    return absl::optional<std::string>("as cache answer");
  };
  return o;
}

TEST(CacheOptionsOf, EachFieldByName) {
  EngineOptions o = WithResultBytes();
  o.cache_capacity = 123;
  o.cache_ttl = absl::Hours(2);
  o.reference_ttl = absl::Hours(7);
  o.cache_stale_max = absl::Hours(3);
  o.disk_cache = reinterpret_cast<disk_cache::DiskCache*>(0x10);
  retry::FakeClock clock;
  const ResultCacheOptions c = CacheOptionsOf(o, &clock);
  EXPECT_EQ(c.capacity, 123u);
  EXPECT_EQ(c.ttl, absl::Hours(2));
  EXPECT_EQ(c.reference_ttl, absl::Hours(7));
  EXPECT_EQ(c.stale_max, absl::Hours(3));
  EXPECT_EQ(c.disk, o.disk_cache);
  EXPECT_EQ(c.clock, &clock);
  EXPECT_EQ(c.encoder(DecodeResult{}), "encoder");
  DecodeResult r;
  EXPECT_TRUE(c.decoder("", &r));
  EXPECT_EQ(r.vin, "decoder");
  EXPECT_EQ(c.as_cache_answer(""), "as cache answer");
}

TEST(AnswererDepsOf, TheOptionsPartsAndTheEnginesOwn) {
  EngineOptions o = WithResultBytes();
  o.snapshots = reinterpret_cast<snapshot::SnapshotStore*>(0x20);
  retry::FakeClock clock;
  ResultCache cache(1, absl::Hours(1));
  metrics::ServiceMetrics metrics;
  retry::Scheduler scheduler(&clock);
  std::atomic<size_t> admitted{0};
  const Answerer::Deps d =
      AnswererDepsOf(o, &clock, &cache, &metrics, &scheduler, &admitted);
  EXPECT_EQ(d.clock, &clock);
  EXPECT_EQ(d.cache, &cache);
  EXPECT_EQ(d.metrics, &metrics);
  EXPECT_EQ(d.snapshots, o.snapshots);
  EXPECT_EQ(d.scheduler, &scheduler);
  EXPECT_EQ(d.admitted, &admitted);
  EXPECT_EQ(d.encoder(DecodeResult{}), "encoder");
  DecodeResult r;
  EXPECT_TRUE(d.decoder("", &r));
  EXPECT_EQ(r.vin, "decoder");
}

TEST(RunnerOptionsOf, TheGateTheRateAndTheBreaker) {
  EngineOptions o;
  o.max_upstream_concurrency = 3;
  o.upstream_batch_max = 7;
  o.budget.rate_per_minute = 600;
  o.retry_after_max = absl::Seconds(9);
  o.breaker.failures = 4;
  o.breaker.cooldown = absl::Seconds(2);
  o.breaker.cooldown_max = absl::Seconds(20);
  o.uniform = [] { return 0.25; };
  o.fleet = reinterpret_cast<FleetBackend*>(0x30);
  o.attempt_timeout = absl::Seconds(10);
  o.share.bulk_min_share = 0.2;
  o.bulk_peak_share = 0.3;
  const AttemptRunner::Options r = RunnerOptionsOf(o);
  EXPECT_EQ(r.max_concurrency, 3);
  EXPECT_EQ(r.batch_max, 7);
  EXPECT_EQ(r.configured_rate, 600);
  EXPECT_EQ(r.retry_after_max, absl::Seconds(9));
  EXPECT_EQ(r.breaker.breaker.failures, 4);
  EXPECT_EQ(r.breaker.breaker.cooldown, absl::Seconds(2));
  EXPECT_EQ(r.breaker.breaker.cooldown_max, absl::Seconds(20));
  // The jitter's random source (tests) is the breaker's too.
  ASSERT_TRUE(r.breaker.uniform);
  EXPECT_EQ(r.breaker.uniform(), 0.25);
  EXPECT_EQ(r.breaker.fleet, o.fleet);
  // Twice the attempt timeout (libcurl may send a request again, rule 16)
  // and a second.
  EXPECT_EQ(r.breaker.probe_hold, absl::Seconds(21));
  EXPECT_EQ(r.share.bulk_min_share, 0.2);
  EXPECT_EQ(r.bulk_peak_share, 0.3);
}

TEST(RunnerOptionsOf, NoInjectedRandomnessLeavesTheBreakerItsOwn) {
  EXPECT_FALSE(RunnerOptionsOf(EngineOptions{}).breaker.uniform);
}

TEST(FleetOptionsOf, TheBackendTheLeaseAndTheTtls) {
  EngineOptions o;
  o.fleet = reinterpret_cast<FleetBackend*>(0x40);
  o.fleet_lease = absl::Seconds(3);
  o.cache_ttl = absl::Hours(5);
  o.reference_ttl = absl::Hours(7);
  const SharedFleetOptions f = FleetOptionsOf(o);
  EXPECT_EQ(f.backend, o.fleet);
  EXPECT_EQ(f.lease, absl::Seconds(3));
  EXPECT_EQ(f.cache_ttl, absl::Hours(5));
  EXPECT_EQ(f.reference_ttl, absl::Hours(7));
}

}  // namespace
}  // namespace engine
