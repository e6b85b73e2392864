// What an Engine is made with (engine.h): the rules' settings (the
// server's flags map onto them), the parts it is given (clock, metrics,
// snapshot store, fleet, disk cache; not owned), and what tests inject.
// options_mapping.h turns them into each component's own options.
#ifndef VIN_ENGINE_ENGINE_OPTIONS_H_
#define VIN_ENGINE_ENGINE_OPTIONS_H_

#include <cstddef>
#include <string>

#include "absl/time/time.h"
#include "engine/result_cache.h"
#include "engine/waiter_deadlines.h"
#include "engine_api/fleet_backend.h"
#include "engine_api/types.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
#include "retry/jitter.h"
#include "snapshot/snapshot_store.h"
#include "upstream/breaker.h"
#include "upstream/fair_queue.h"
#include "upstream/peak_hours.h"
#include "upstream/upstream_budget.h"

namespace engine {

struct EngineOptions {
  std::string vpic_base_url = "https://vpic.nhtsa.dot.gov/api/vehicles";
  absl::Duration retry_base = absl::Milliseconds(100);
  absl::Duration retry_cap = absl::Seconds(5);
  int max_attempts = 4;  // every attempt, the first included
  absl::Duration attempt_timeout = absl::Seconds(15);
  int max_upstream_concurrency = 8;
  // The budget toward NHTSA (DESIGN rules 9-11): requests per minute (<= 0
  // unlimited) and burst, and the retry budget.
  upstream::BudgetOptions budget;
  // Up to this many ready flights travel in one DecodeVINValuesBatch
  // request (rule 12); 1 turns batching off.
  int upstream_batch_max = 50;
  // A longer Retry-After is not waited out: the decode fails, retryable.
  absl::Duration retry_after_max = absl::Seconds(60);
  // The circuit breaker in front of vPIC (rule 13); failures 0 turns it off.
  upstream::BreakerOptions breaker;
  // Rule 17: the fair order of the upstream queue (interactive first,
  // bulk's minimum share, tenants' weights), and bulk's share of the rate
  // during NHTSA's peak hours. No peak hours here by default (the server's
  // --peak_hours has NHTSA's).
  upstream::FairShareOptions share;
  double bulk_peak_share = 0.5;
  upstream::PeakHours peak_hours;
  size_t cache_capacity = 100000;  // 0 disables the cache
  absl::Duration cache_ttl = absl::Hours(24);
  // Rule 18: the TTL of reference answers (GetAllMakes, ...).
  absl::Duration reference_ttl = absl::Hours(24);
  // Entries older than the TTL are kept this long in all (rule 15), to
  // answer when the live path fails for good.
  absl::Duration cache_stale_max = absl::Hours(24 * 30);
  // The disk layer under the cache (rule 14; not owned, may be null; needs
  // the encoder and the decoder).
  disk_cache::DiskCache* disk_cache = nullptr;
  // Waiters admitted at once, all callers together; beyond it, OVERLOADED.
  size_t max_waiters = 1000000;
  // Tests only: the jitter's random source. Empty means real randomness.
  retry::Jitter::Uniform uniform;
  // Tests only: the clock (not owned). Null means the real clock.
  const retry::Clock* clock = nullptr;
  EngineObserver* observer = nullptr;  // not owned; may be null
  // Encodes each result once for every caller it goes to, and for the
  // cache (see DecodeResult::encoded); may be empty.
  ResultEncoder encoder;
  // Reads those bytes back (stale answers get a note; disk rows are
  // checked); may be empty.
  ResultDecoder decoder;
  // Turns a live result's bytes into its cache answer's (see
  // ResultCacheOptions::as_cache_answer); may be empty.
  CacheAnswerRecoder as_cache_answer;
  // Where the engine counts what it does (not owned; null: counted
  // nowhere). Updates are atomic and never wait.
  metrics::ServiceMetrics* metrics = nullptr;
  // The offline snapshot, if any (not owned; may be null or empty).
  snapshot::SnapshotStore* snapshots = nullptr;
  // For requests that leave the choice to the server. kUnspecified means
  // LIVE_THEN_SNAPSHOT while a snapshot is loaded, LIVE_ONLY otherwise.
  SourcePreference default_source = SourcePreference::kUnspecified;
  // A LIVE_THEN_SNAPSHOT waiter with a deadline falls back to the snapshot
  // this long before the deadline, so that the answer can still arrive.
  absl::Duration snapshot_fallback_margin = kSnapshotFallbackMargin;
  // Rule 21: how many invalid VINs a second get the snapshot's suggestions
  // (Failure::suggested_vins); 0: none.
  int suggestions_per_second = 200;
  // Fleet mode (README "Running a fleet"): the cache, the flights and the
  // upstream budget shared with the other replicas. Not owned; must outlive
  // the engine. Null: this process alone. Needs an encoder.
  FleetBackend* fleet = nullptr;
  // A flight's lease: renewed every third of it while the flight lives; a
  // replica that dies leaves its flights to the others after at most this.
  absl::Duration fleet_lease = absl::Seconds(5);
};

}  // namespace engine

#endif  // VIN_ENGINE_ENGINE_OPTIONS_H_
