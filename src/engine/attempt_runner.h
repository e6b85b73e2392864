// Attempts toward vPIC (DESIGN rules 9, 10 and 12): the flights queued at
// the upstream gate, the requests in progress and the flights each
// carries, the concurrency limit. It starts requests as the gate's tokens
// and the limit allow, classifies each answer once (vpic::ClassifyRequest),
// acts on what it says of vPIC as a whole (a pushback pauses everyone and
// cuts the rate; an answer lets the rate climb back), counts it, and hands
// each flight its own outcome. What an outcome means for a flight (done,
// failed, retried) is the engine's.
//
// Loop thread only. Owns the gate and the vPIC client; the budget is the
// engine's (not owned).
#ifndef VIN_ENGINE_ATTEMPT_RUNNER_H_
#define VIN_ENGINE_ATTEMPT_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine/types.h"
#include "metrics/metrics.h"
#include "retry/clock.h"
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
  };

  struct Options {
    int max_concurrency = 8;
    int batch_max = 50;
    double configured_rate = 0;  // --upstream_rate, per minute
    absl::Duration retry_after_max = absl::Seconds(60);
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

  // ---- The gate ----
  // Queues a flight at `place` (its first place, kept for its retries), or
  // at the back; returns its place now.
  Seq Enqueue(Ticket ticket, Seq place) { return gate_.Enqueue(ticket, place); }
  void Remove(Seq seq) { gate_.Remove(seq); }
  absl::Time EstimatedStart(Seq seq, absl::Time now) const {
    return gate_.EstimatedStart(seq, now);
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
    absl::Time started;
  };
  void Start(std::vector<Ticket> tickets);
  void OnDone(RequestId id, vpic::HttpResult result);
  void ApplySignal(const vpic::RequestOutcome& answer);
  void ApplyPushback(const vpic::Outcome& outcome);
  void NoteRateChange(bool cut);
  static metrics::Endpoint EndpointOf(const Request& r);

  const Options options_;
  const std::unique_ptr<vpic::UpstreamClient> transport_;
  upstream::UpstreamBudget* const budget_;
  const retry::Clock* const clock_;
  metrics::ServiceMetrics* const metrics_;
  EngineObserver* const observer_;  // may be null
  Flights* const flights_;
  upstream::UpstreamGate gate_;
  absl::flat_hash_map<RequestId, Request> requests_;
  Counts counts_;
  double rate_reported_;  // the effective rate last told the observer
};

}  // namespace engine

#endif  // VIN_ENGINE_ATTEMPT_RUNNER_H_
