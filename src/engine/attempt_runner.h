// Attempts toward vPIC (DESIGN rules 9, 10, 12 and 17): the flights queued
// at the upstream gate, the requests in progress and the flights each
// carries, the concurrency limit. It starts requests as the breaker, the
// gate's tokens and the limit allow, classifies each answer once
// (vpic::ClassifyRequest), acts on what it says of vPIC as a whole (a
// pushback pauses everyone and cuts the rate; an answer lets the rate climb
// back; its health goes to the breaker), counts it (the requests libcurl
// re-sent by itself included), and hands each flight its own outcome. What
// an outcome means for a flight (done, failed, retried) is the engine's.
//
// The circuit breaker (rule 13), alone or shared by a fleet, is a component
// of its own (shared_breaker.h) that the runner owns and asks at the gate;
// the engine asks it too (breaker()) before a flight would send.
//
// Loop thread only. Owns the gate, the breaker and the vPIC client; the
// budget is the engine's and the fleet backend its owner's (neither
// owned).
#ifndef VIN_ENGINE_ATTEMPT_RUNNER_H_
#define VIN_ENGINE_ATTEMPT_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine/shared_breaker.h"
#include "engine_api/fleet_backend.h"
#include "engine_api/types.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
#include "upstream/peak_hours.h"
#include "upstream/upstream_budget.h"
#include "upstream/upstream_gate.h"
#include "vpic/upstream_client.h"

namespace engine {

class AttemptRunner : private SharedBreaker::Effects {
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
    // breaker().Unreachable(). Flights whose request is in progress wait
    // for it.
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
    // The circuit breaker, and the fleet that shares it.
    SharedBreaker::Options breaker;
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
    uint64_t reference_requests = 0;  // rule 18's other endpoints
    uint64_t vins = 0;  // VINs carried (a reference request carries none)
    uint64_t pushbacks = 0;
  };

  AttemptRunner(Options options, std::unique_ptr<vpic::UpstreamClient> transport,
                upstream::UpstreamBudget* budget, const retry::Clock* clock,
                metrics::ServiceMetrics* metrics, EngineObserver* observer,
                Flights* flights);

  vpic::UpstreamClient& transport() { return *transport_; }
  // The circuit breaker (rule 13): whether a flight may send, the failure
  // it gets when it may not, the fleet's breaker events.
  SharedBreaker& breaker() { return breaker_; }
  const SharedBreaker& breaker() const { return breaker_; }

  // ---- The gate ----
  // Queues a flight for its next attempt at `place` (its first place, kept
  // for its retries), or at the back, as the breaker allows: returns its
  // place now, or 0 when the breaker refuses (SharedBreaker::Refuses). The
  // flight that finds the probe due is the probe.
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
    bool reference = false;  // a reference request (rule 18), alone
    bool probe = false;  // the breaker's probe
    absl::Time started;
  };
  void Start(std::vector<Ticket> tickets);
  void OnDone(RequestId id, vpic::HttpResult result);
  void ApplySignal(const vpic::RequestOutcome& answer);
  void ApplyPushback(const vpic::Outcome& outcome);
  void NoteRateChange(bool cut);
  // Rule 17's metrics of a request about to start: each flight's wait, the
  // VINs by tenant.
  void CountFairShare(const std::vector<Ticket>& flights);
  void CountResent(const Request& req, int extra);
  // SharedBreaker::Effects:
  void Refusing() override;
  void Closed() override;
  static metrics::Endpoint EndpointOf(const Request& r);

  const Options options_;
  const std::unique_ptr<vpic::UpstreamClient> transport_;
  upstream::UpstreamBudget* const budget_;
  const retry::Clock* const clock_;
  metrics::ServiceMetrics* const metrics_;
  EngineObserver* const observer_;  // may be null
  Flights* const flights_;
  upstream::UpstreamGate gate_;
  SharedBreaker breaker_;
  absl::flat_hash_map<RequestId, Request> requests_;
  Counts counts_;
  double rate_reported_;  // the effective rate last told the observer
};

}  // namespace engine

#endif  // VIN_ENGINE_ATTEMPT_RUNNER_H_
