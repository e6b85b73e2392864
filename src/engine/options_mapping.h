// How an Engine's options become each component's own (engine_options.h):
// one named mapping per component, each a pure function, so that a field
// reaches its component by name and not by its place in a list.
#ifndef VIN_ENGINE_OPTIONS_MAPPING_H_
#define VIN_ENGINE_OPTIONS_MAPPING_H_

#include <atomic>
#include <cstddef>

#include "absl/status/status.h"
#include "engine/answerer.h"
#include "engine/attempt_runner.h"
#include "engine/engine_options.h"
#include "engine/fleet_coordinator.h"
#include "engine/result_cache.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
#include "retry/scheduler.h"
#include "vpic/client.h"

namespace engine {

// OK, or INVALID_ARGUMENT naming what does not hold (Engine::Create's
// checks).
absl::Status CheckEngineOptions(const EngineOptions& options);

// The clock the engine reads: the one given, else the real one.
const retry::Clock* ClockOf(const EngineOptions& options);

// The vPIC client's (Engine::Create without a transport).
vpic::ClientOptions ClientOptionsOf(const EngineOptions& options);

// The result cache's, with the disk layer under it; `clock` is ClockOf's.
ResultCacheOptions CacheOptionsOf(const EngineOptions& options,
                                  const retry::Clock* clock);

// The answerer's: the snapshot store and the result bytes from the
// options, the rest the engine's own parts.
Answerer::Deps AnswererDepsOf(const EngineOptions& options,
                              const retry::Clock* clock, ResultCache* cache,
                              metrics::ServiceMetrics* metrics,
                              retry::Scheduler* scheduler,
                              std::atomic<size_t>* admitted);

// The attempt runner's, and its breaker's: the jitter's random source
// (tests) is the breaker's too; a probe's lease outlasts a request sent
// twice (rule 16).
AttemptRunner::Options RunnerOptionsOf(const EngineOptions& options);

// The fleet coordinator's (fleet mode only: options.fleet set).
SharedFleetOptions FleetOptionsOf(const EngineOptions& options);

}  // namespace engine

#endif  // VIN_ENGINE_OPTIONS_MAPPING_H_
