// What the engine tells its callers: results, failures, retry progress.
#ifndef VIN_ENGINE_API_TYPES_H_
#define VIN_ENGINE_API_TYPES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "domain/decode_result.h"
#include "domain/failure.h"
#include "upstream/breaker.h"
#include "vin/vin.h"
#include "vpic/classify.h"
#include "vpic/vehicle.h"

namespace engine {

// The vocabulary every layer shares (src/domain/).
using Source = domain::Source;
using SourcePreference = domain::SourcePreference;
using DecodeResult = domain::DecodeResult;
using FailureReason = domain::FailureReason;
using Failure = domain::Failure;

// A waiter has joined its flight (the first event of every waiter).
struct Queued {
  bool coalesced = false;  // joined a flight already running
  // The flight waits for the upstream rate cap (DESIGN rule 9) longer than
  // a moment; `estimated_wait` is when its request is expected to start.
  bool waiting_for_rate = false;
  absl::Duration estimated_wait = absl::ZeroDuration();
  // While waiting_for_rate: a bulk flight held to bulk's share of the rate
  // at NHTSA's peak hours (DESIGN rule 17).
  bool bulk_peak_hours = false;
};

// What Engine::Submit answers: the waiter admitted (its id), or the
// failure the request gets at once, the same failure type as any other.
class Admission {
 public:
  static Admission Admitted(uint64_t id) { return Admission(id, {}); }
  static Admission Refused(Failure failure) {
    return Admission(0, std::move(failure));
  }
  bool ok() const { return !refused_.has_value(); }
  uint64_t id() const { return id_; }                   // 0 when refused
  const Failure& failure() const { return *refused_; }  // !ok() only

 private:
  Admission(uint64_t id, absl::optional<Failure> refused)
      : id_(id), refused_(std::move(refused)) {}
  uint64_t id_;
  absl::optional<Failure> refused_;
};

// A flight's attempt failed and another is scheduled.
struct Retrying {
  int attempt = 0;  // the attempt that failed, 1-based
  absl::Duration next_delay;
  vpic::UpstreamError error;
};

// Who a waiter is, for the log: the caller's address and, for a batch
// item, its request id.
struct CallerInfo {
  std::string peer;
  std::string request_id;
};

// The events of one waiter. Called on the engine's loop thread (or inside
// Engine::Submit for a cache hit); must not block. Order: OnQueued, zero or
// more OnRetrying, then exactly one of OnDone / OnFailed, after which the
// engine never touches the listener again.
class DecodeListener {
 public:
  virtual ~DecodeListener() = default;
  virtual void OnQueued(const Queued& queued) = 0;
  virtual void OnRetrying(const Retrying& retrying) = 0;
  virtual void OnDone(std::shared_ptr<const DecodeResult> result) = 0;
  virtual void OnFailed(const Failure& failure) = 0;
  // Asked only when a finished flight is logged, of its first few waiters.
  virtual CallerInfo Caller() const { return {}; }
};

// One finished flight, for the log.
struct FlightSummary {
  std::string vin;
  int model_year = 0;
  bool ok = false;
  std::string outcome;  // "done", or the failure reason and upstream error
  int attempts = 0;
  absl::Duration latency;           // from the flight's start to its end
  size_t waiters = 0;               // callers that received this outcome
  std::vector<CallerInfo> callers;  // the first few of them
  // Rule 17: the tenant and priority the flight counted for.
  std::string tenant;
  const char* priority = "interactive";
};

// The circuit breaker in front of vPIC changed state (DESIGN rule 13).
struct BreakerChange {
  // Who moved it: this replica's own requests, another replica of the fleet
  // (`by`), or the fleet's one probe, which went to another replica.
  enum class Cause { kHere, kFleet, kProbeElsewhere };
  upstream::BreakerState from;
  upstream::BreakerState to;
  Cause cause = Cause::kHere;
  std::string by;  // kFleet: the replica that moved it
  // Wall time since when vPIC is unreachable; InfinitePast once closed.
  absl::Time unreachable_since;
  absl::Duration next_probe;  // to open: the wait until the probe may go
  std::string last_error;     // the last broken answer, described
};

// Hooks for logging and metrics, called on the loop thread; must not block.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void OnRetryScheduled(const std::string& vin, const Retrying& r) = 0;
  virtual void OnFlightFinished(const FlightSummary& summary) = 0;
  // A 429 (or 503 with Retry-After) paused every upstream request for
  // `pause` (DESIGN rule 10).
  virtual void OnPushback(const vpic::UpstreamError& error,
                          absl::Duration pause) {}
  // The effective upstream rate changed (halved by a pushback, or climbing
  // back after one). `configured` is --upstream_rate.
  virtual void OnUpstreamRateChanged(double per_minute, double configured) {}
  // The retry budget refused a retry of this flight (DESIGN rule 11).
  virtual void OnRetryRefused(const std::string& vin, absl::Duration delay) {}
  virtual void OnBreakerChanged(const BreakerChange& change) {}
  // A VIN decoded live by vPIC, as its callers get it (rule 21: compared
  // with the snapshot's decode), on the engine's loop: keep it cheap.
  // `model_year_hint` is the flight's (0: none).
  virtual void OnLiveAnswer(const std::shared_ptr<const DecodeResult>& result,
                            int model_year_hint) {}
};

}  // namespace engine

#endif  // VIN_ENGINE_API_TYPES_H_
