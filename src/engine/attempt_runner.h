// Attempts toward vPIC (DESIGN rules 9, 10, 12 and 13): the flights queued
// at the upstream gate, the requests in progress and the flights each
// carries, the concurrency limit, the circuit breaker. It starts requests
// as the breaker, the gate's tokens and the limit allow, classifies each
// answer once (vpic::ClassifyRequest), acts on what it says of vPIC as a
// whole (a pushback pauses everyone and cuts the rate; an answer lets the
// rate climb back; broken answers in a row open the breaker, the probe's
// answer closes or reopens it), counts it (the requests libcurl re-sent by
// itself included), and hands each flight its own outcome. What an outcome
// means for a flight (done, failed, retried) is the engine's.
//
// In a fleet (rule 13), the breaker is shared: a replica whose breaker
// opens or closes tells the others (FleetEvent kBreakerOpened/Closed), which
// follow at once (FromFleet); and the probe is one for the fleet, a lease
// (FleetBackend::ClaimProbe) that the replica whose cool-down ends first
// with a flight that wants to send takes. While its claim is asked, that
// flight waits at the gate and nothing starts; when another replica holds
// the probe, it leaves the live path like every other flight while open,
// and this breaker waits for the holder's news (or for its lease to end).
// A failed probe keeps the lease for the whole new cool-down, so nobody
// probes before it ends. Redis down, each replica's breaker is its own.
//
// Loop thread only. Owns the gate and the vPIC client; the budget is the
// engine's and the fleet backend its owner's (neither owned).
#ifndef VIN_ENGINE_ATTEMPT_RUNNER_H_
#define VIN_ENGINE_ATTEMPT_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine/fleet_backend.h"
#include "engine/types.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
#include "upstream/breaker.h"
#include "upstream/peak_hours.h"
#include "upstream/upstream_budget.h"
#include "upstream/upstream_gate.h"
#include "vpic/upstream_client.h"

namespace engine {

class AttemptRunner {
 public:
  using Ticket = upstream::UpstreamGate::Ticket;
  using Seq = upstream::UpstreamGate::Seq;
  using RequestId = vpic::UpstreamClient::RequestId;

  // The flights' side, implemented by the engine.
  class Flights {
   public:
    virtual ~Flights() = default;
    // The flight leaves the gate in a request about to start: it counts
    // the attempt. Returns false when the flight is gone.
    virtual bool Sending(const Ticket& t) = 0;
    // The request carrying the flight started, as `id`.
    virtual void Carried(const Ticket& t, RequestId id) = 0;
    // The flight's outcome, from the answer to request `id`.
    virtual void Answered(const Ticket& t, RequestId id,
                          vpic::Outcome outcome) = 0;
    // A pushback delayed every queued flight: waiters that can no longer
    // be served in time may leave.
    virtual void Delayed() = 0;
    // The breaker opened: every flight that waits to send (queued, waiting
    // for a retry or its stagger) leaves the live path now, with
    // Unreachable(). Flights whose request is in progress wait for it.
    virtual void Unreachable() = 0;
    // Request `id`, which carried the flight, was sent `extra` more times
    // by libcurl itself (rule 16): each is an attempt of the flight.
    virtual void Resent(const Ticket& t, int extra) = 0;
  };

  struct Options {
    int max_concurrency = 8;
    int batch_max = 50;
    double configured_rate = 0;  // --upstream_rate, per minute
    absl::Duration retry_after_max = absl::Seconds(60);
    upstream::BreakerOptions breaker;
    upstream::Breaker::Uniform breaker_uniform;  // tests only
    // The fleet that shares the breaker (null: this process alone), and
    // how long a probe's lease lasts unless released: longer than a
    // request may take.
    FleetBackend* fleet = nullptr;
    absl::Duration probe_hold = absl::Seconds(31);
    // Rule 17: the fair order of the gate and bulk's share at NHTSA's peak
    // hours (read from the clock's calendar time).
    upstream::FairShareOptions share;
    double bulk_peak_share = 1.0;
    upstream::PeakHours peak_hours;
  };
  // Counted since the start, for EngineStats.
  struct Counts {
    uint64_t requests = 0;
    uint64_t batch_requests = 0;
    uint64_t vins = 0;
    uint64_t pushbacks = 0;
  };

  AttemptRunner(Options options, std::unique_ptr<vpic::UpstreamClient> transport,
                upstream::UpstreamBudget* budget, const retry::Clock* clock,
                metrics::ServiceMetrics* metrics, EngineObserver* observer,
                Flights* flights);

  vpic::UpstreamClient& transport() { return *transport_; }

  // ---- The breaker (rule 13) ----
  // Whether a flight that wants to send now must leave the live path
  // instead: the breaker is open before its probe is due, or half open.
  bool Refuses(absl::Time now) const;
  // The failure such a flight gets (UPSTREAM_UNAVAILABLE, retryable, with
  // the time to the next probe), naming since when vPIC is unreachable.
  Failure Unreachable(absl::Time now, int attempts) const;
  upstream::BreakerState breaker_state() const { return breaker_.state(); }
  // Another replica's breaker event (kBreakerOpened or kBreakerClosed).
  void FromFleet(const FleetEvent& event);

  // ---- The gate ----
  // Queues a flight for its next attempt at `place` (its first place, kept
  // for its retries), or at the back, as the breaker allows: returns its
  // place now, or 0 when the breaker refuses (see Refuses). The flight
  // that finds the probe due is the probe.
  Seq Enqueue(Ticket ticket, Seq place);
  void Remove(Seq seq);
  // The queued flight at `seq` now counts as `ticket` (a more urgent
  // waiter joined it), keeping its place.
  void Requeue(Seq seq, Ticket ticket);
  // The estimated start of the flight at `seq`, or of one of `priority`
  // and `tenant` queued now (`seq` 0).
  absl::Time EstimatedStart(
      Seq seq, absl::Time now,
      domain::Priority priority = domain::Priority::kInteractive,
      const std::string& tenant = std::string(domain::kDefaultTenant)) const {
    return gate_.EstimatedStart(seq, now, Peak(), priority, tenant);
  }
  // Whether NHTSA's peak hours hold now (bulk at its share of the rate).
  bool Peak() const { return options_.peak_hours.Contains(clock_->WallNow()); }
  // Whether a flight of `priority` is held to bulk's share of the rate now.
  bool HeldToPeakShare(domain::Priority priority) const {
    return priority == domain::Priority::kBulk &&
           options_.bulk_peak_share < 1.0 && Peak();
  }
  // The queued flights with their estimated start, front first.
  std::vector<std::pair<Ticket, absl::Time>> Queued(absl::Time now) const;
  size_t waiting() const { return gate_.waiting(); }

  // ---- Requests ----
  // Starts every request the concurrency limit and the gate allow now.
  void StartReady();
  // When StartReady() may next start one (below the limit, something
  // queued), if it can tell.
  absl::optional<absl::Time> NextStart(absl::Time now) const;
  // A flight stops waiting for request `id`; a request no flight waits for
  // is aborted (and counted cancelled): nothing more is sent for it.
  void Leave(RequestId id);
  size_t active() const { return transport_->active(); }
  const Counts& counts() const { return counts_; }

 private:
  struct Request {
    std::vector<Ticket> flights;
    std::vector<std::string> vins;  // batch requests: as sent, in order
    size_t live = 0;                // flights still waiting for it
    bool batch = false;
    bool probe = false;  // the breaker's probe
    absl::Time started;
  };
  void Start(std::vector<Ticket> tickets);
  void OnDone(RequestId id, vpic::HttpResult result);
  void ApplySignal(const vpic::RequestOutcome& answer);
  void ApplyPushback(const vpic::Outcome& outcome);
  void NoteRateChange(bool cut);
  void ApplyHealth(const vpic::RequestOutcome& answer, bool probe);
  using Cause = BreakerChange::Cause;
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
  void CountResent(const Request& req, int extra);
  static metrics::Endpoint EndpointOf(const Request& r);

  const Options options_;
  const std::unique_ptr<vpic::UpstreamClient> transport_;
  upstream::UpstreamBudget* const budget_;
  const retry::Clock* const clock_;
  metrics::ServiceMetrics* const metrics_;
  EngineObserver* const observer_;  // may be null
  Flights* const flights_;
  upstream::UpstreamGate gate_;
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
  absl::flat_hash_map<RequestId, Request> requests_;
  Counts counts_;
  double rate_reported_;  // the effective rate last told the observer
};

}  // namespace engine

#endif  // VIN_ENGINE_ATTEMPT_RUNNER_H_
