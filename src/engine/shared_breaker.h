// The circuit breaker in front of vPIC as the engine runs it (DESIGN rule
// 13), alone or shared by a fleet: the breaker (upstream::Breaker) and the
// protocol around its probe.
//
// The gate asks it before it queues a flight (Ask); a refused flight leaves
// the live path with Unreachable(). The flight that finds the cool-down over
// is the probe (Probing): the gate tells the breaker when the probe leaves
// unsent (LeftGate), is sent (Sends) or is abandoned in its request
// (ProbeLost), and every request's answer goes through OnAnswer, which
// counts broken answers in a row, opens, closes or reopens the breaker.
//
// In a fleet the breaker is shared: a replica whose breaker opens or closes
// tells the others (FleetEvent kBreakerOpened/Closed), which follow at once
// (FromFleet); and the probe is one for the fleet, a lease
// (FleetBackend::ClaimProbe) that the replica whose cool-down ends first
// with a flight that wants to send takes. While its claim is asked, that
// flight waits at the gate and nothing starts (claiming()); when another
// replica holds the probe, it leaves the live path like every other flight
// while open, and this breaker waits for the holder's news (or for its
// lease to end). A failed probe keeps the lease for the whole new cool-down,
// so nobody probes before it ends. Redis down, each replica's breaker is its
// own.
//
// What a move means for the rest of the engine goes to Effects: when it
// opens (or the probe turns out to be another replica's), every flight that
// waits to send leaves; when it closes, the rate resumes from a fraction.
//
// Loop thread only. Owned by the AttemptRunner (which implements Effects);
// the fleet backend, metrics and observer are not owned.
#ifndef VIN_ENGINE_SHARED_BREAKER_H_
#define VIN_ENGINE_SHARED_BREAKER_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine_api/fleet_backend.h"
#include "engine_api/types.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
#include "upstream/breaker.h"
#include "upstream/upstream_gate.h"
#include "vpic/classify.h"

namespace engine {

class SharedBreaker {
 public:
  using Seq = upstream::UpstreamGate::Seq;
  using Permit = upstream::Breaker::Permit;

  class Effects {
   public:
    virtual ~Effects() = default;
    // Every flight that waits to send (queued, waiting for a retry or its
    // stagger) leaves the live path now, with Unreachable(); flights whose
    // request is in progress wait for it.
    virtual void Refusing() = 0;
    // The breaker closed: the upstream rate resumes from a fraction.
    virtual void Closed() = 0;
  };

  struct Options {
    upstream::BreakerOptions breaker;
    upstream::Breaker::Uniform uniform;  // tests only
    // The fleet that shares the breaker (null: this process alone), and
    // how long a probe's lease lasts unless released: longer than a
    // request may take.
    FleetBackend* fleet = nullptr;
    absl::Duration probe_hold = absl::Seconds(31);
  };

  SharedBreaker(Options options, const retry::Clock* clock,
                metrics::ServiceMetrics* metrics, EngineObserver* observer,
                Effects* effects);

  // Whether a flight that wants to send now must leave the live path
  // instead: the breaker is open before its probe is due, or half open.
  bool Refuses(absl::Time now) const;
  // The failure such a flight gets (UPSTREAM_UNAVAILABLE, retryable, with
  // the time to the next probe), naming since when vPIC is unreachable.
  Failure Unreachable(absl::Time now, int attempts) const;
  upstream::BreakerState state() const { return breaker_.state(); }
  // Another replica's breaker event (kBreakerOpened or kBreakerClosed).
  void FromFleet(const FleetEvent& event);

  // ---- The gate's side ----
  // May a flight queue at `now`? kProbe: it is the probe; the gate tells
  // Probing() where it queued it.
  Permit Ask(absl::Time now);
  // The probe queued at `place`, for flight `flight_id`: the breaker is half
  // open; in a fleet, the fleet's probe is claimed.
  void Probing(Seq place, uint64_t flight_id);
  // Whether the probe's claim is under way (nothing starts meanwhile).
  bool claiming() const { return probe_claim_ != 0; }
  // The flight at `seq` left the gate unsent.
  void LeftGate(Seq seq);
  // Flight `flight_id` leaves the gate in a request: whether it is the
  // probe (that request is then the probe's).
  bool Sends(uint64_t flight_id);
  // The probe's request ended unanswered (nobody waits for it any more).
  void ProbeLost();
  // A request's answer (`probe`: the probe's).
  void OnAnswer(const vpic::RequestOutcome& answer, bool probe);

 private:
  using Cause = BreakerChange::Cause;
  // The wall time since when vPIC is unreachable, from the breaker's
  // monotonic one at `now`.
  absl::Time WallUnreachableSince(absl::Time now) const;
  void NoteBreaker(absl::optional<upstream::Breaker::Transition> t,
                   Cause cause = Cause::kHere, const std::string& by = "");
  // Tells the fleet what this replica's own breaker did.
  void ShareBreaker(const upstream::Breaker::Transition& t);
  // The answer to the probe's claim `claim` (a later turn).
  void OnProbeClaim(uint64_t claim, FleetBackend::ProbeClaim answer);
  // The probe's flight left the gate, or its request ended unanswered.
  void LoseProbe();
  // This replica's probe ended (in a fleet): its lease is let go, or kept
  // for the new cool-down when the probe failed.
  void EndProbe(bool reopened);

  const Options options_;
  const retry::Clock* const clock_;
  metrics::ServiceMetrics* const metrics_;
  EngineObserver* const observer_;  // may be null
  Effects* const effects_;
  upstream::Breaker breaker_;
  // The probe while it waits at the gate: its place (0 when none) and its
  // flight.
  Seq probe_place_ = 0;
  uint64_t probe_flight_ = 0;
  // In a fleet: the claim of the fleet's probe under way (0: none; while
  // one is, nothing starts), and whether this replica holds the probe's
  // lease.
  uint64_t probe_claim_ = 0;
  uint64_t claims_ = 0;
  bool probe_held_ = false;
  // The last broken answer, for the failures the breaker gives.
  vpic::UpstreamError last_broken_;
  // The replica that opened this breaker ("" when this one did).
  std::string opened_by_;
};

}  // namespace engine

#endif  // VIN_ENGINE_SHARED_BREAKER_H_
