// AttemptRunner's gate and requests (DESIGN rules 9, 10, 12 and 17), on the
// engine's loop: flights queued in the fair order, requests started within
// the rate and the concurrency limit, their answers applied (pushback,
// health, the rate's climb back). The breaker: shared_breaker.cc.
#include "engine/attempt_runner.h"

#include <algorithm>
#include <utility>

namespace engine {
namespace {

// A 429 without a Retry-After still pauses every flight this long.
constexpr absl::Duration kDefaultPushback = absl::Seconds(1);

// For the metrics: a request that decoded anything is ok; otherwise what
// its answer was as a whole.
metrics::UpstreamResult ResultOf(const std::vector<vpic::Outcome>& outcomes) {
  for (const vpic::Outcome& o : outcomes) {
    if (o.verdict == vpic::Outcome::Verdict::kDecoded) {
      return metrics::UpstreamResult::kOk;
    }
  }
  return outcomes.front().verdict == vpic::Outcome::Verdict::kRetry
             ? metrics::UpstreamResult::kRetryable
             : metrics::UpstreamResult::kRejected;
}

upstream::GateOptions GateOptionsOf(const AttemptRunner::Options& options) {
  upstream::GateOptions g;
  g.batch_max = options.batch_max;
  g.share = options.share;
  g.bulk_peak_share = options.bulk_peak_share;
  return g;
}

}  // namespace

AttemptRunner::AttemptRunner(Options options,
                             std::unique_ptr<vpic::UpstreamClient> transport,
                             upstream::UpstreamBudget* budget,
                             const retry::Clock* clock,
                             metrics::ServiceMetrics* metrics,
                             EngineObserver* observer, Flights* flights)
    : options_(options),
      transport_(std::move(transport)),
      budget_(budget),
      clock_(clock),
      metrics_(metrics),
      observer_(observer),
      flights_(flights),
      gate_(budget, GateOptionsOf(options), clock->Now()),
      breaker_(options.breaker, clock, metrics, observer, this),
      rate_reported_(options.configured_rate) {}

AttemptRunner::Seq AttemptRunner::Enqueue(Ticket ticket, Seq place) {
  const absl::Time now = clock_->Now();
  const SharedBreaker::Permit permit = breaker_.Ask(now);
  if (permit == SharedBreaker::Permit::kRefused) return 0;
  ticket.queued_at = now;
  const Seq seq = gate_.Enqueue(ticket, place);
  if (permit == SharedBreaker::Permit::kProbe) {
    breaker_.Probing(seq, ticket.flight_id);
  }
  return seq;
}

void AttemptRunner::Remove(Seq seq) {
  if (seq == 0) return;
  gate_.Remove(seq);
  breaker_.LeftGate(seq);
}

void AttemptRunner::Requeue(Seq seq, Ticket ticket) {
  if (seq == 0) return;
  const Ticket* queued = gate_.Find(seq);
  ticket.queued_at = queued != nullptr ? queued->queued_at : clock_->Now();  // its wait goes on
  gate_.Remove(seq);
  gate_.Enqueue(std::move(ticket), seq);
}

metrics::Endpoint AttemptRunner::EndpointOf(const Request& r) {
  if (r.reference) return metrics::Endpoint::kReference;
  return r.batch ? metrics::Endpoint::kBatch : metrics::Endpoint::kSingle;
}

std::vector<std::pair<AttemptRunner::Ticket, absl::Time>> AttemptRunner::Queued(
    absl::Time now) const {
  std::vector<std::pair<Ticket, absl::Time>> queued;
  gate_.ForEach([&](Seq seq, const Ticket& t) {
    queued.emplace_back(t, gate_.EstimatedStart(seq, now, Peak()));
  });
  return queued;
}

void AttemptRunner::StartReady() {
  metrics_->upstream_bulk_share.Set(Peak() ? options_.bulk_peak_share : 1.0);
  if (breaker_.claiming()) return;  // the probe waits for the fleet's word
  const size_t limit = static_cast<size_t>(options_.max_concurrency);
  while (transport_->active() < limit) {
    std::vector<Ticket> tickets = gate_.Take(clock_->Now(), Peak());
    if (tickets.empty()) break;
    Start(std::move(tickets));
  }
}

absl::optional<absl::Time> AttemptRunner::NextStart(absl::Time now) const {
  if (transport_->active() >= static_cast<size_t>(options_.max_concurrency)) {
    return absl::nullopt;  // a request's end comes first, as I/O
  }
  if (breaker_.claiming()) return absl::nullopt;  // the claim's answer, as I/O
  return gate_.NextStart(now, Peak());
}

void AttemptRunner::Start(std::vector<Ticket> tickets) {
  Request req;
  std::vector<vpic::BatchEntry> entries;
  for (Ticket& t : tickets) {
    if (breaker_.Sends(t.flight_id)) req.probe = true;
    if (!flights_->Sending(t)) continue;  // cannot happen: a stopped flight leaves the gate
    entries.push_back({t.key.vin, t.key.model_year});
    req.flights.push_back(std::move(t));
  }
  if (req.flights.empty()) return;
  CountFairShare(req.flights);
  req.live = req.flights.size();
  req.reference = req.flights.front().key.is_reference();  // then alone
  req.batch = req.flights.size() > 1;
  req.started = clock_->Now();
  ++counts_.requests;
  if (!req.reference) {
    counts_.vins += req.flights.size();
    metrics_->upstream_vins.Add(req.flights.size());
  }
  // The id is known only once the request is started; the callback runs in
  // a later turn of the loop, so it reads the id from a slot filled below.
  auto slot = std::make_shared<RequestId>(0);
  auto callback = [this, slot](vpic::HttpResult r) {
    OnDone(*slot, std::move(r));
  };
  RequestId id = 0;
  if (req.reference) {
    ++counts_.reference_requests;
    id = transport_->StartReference(req.flights.front().key.reference,
                                    callback);
  } else if (req.batch) {
    ++counts_.batch_requests;
    for (const auto& e : entries) req.vins.push_back(e.vin);
    id = transport_->StartBatch(entries, callback);
  } else {
    id = transport_->Start(entries[0].vin, entries[0].model_year, callback);
  }
  *slot = id;
  for (const Ticket& t : req.flights) flights_->Carried(t, id);
  requests_.emplace(id, std::move(req));
}

void AttemptRunner::Leave(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (--it->second.live == 0) {
    // Nobody waits for its answer: no further upstream work for it.
    transport_->Cancel(id);
    metrics_->upstream_requests[metrics::I(EndpointOf(it->second))]
                               [metrics::I(metrics::UpstreamResult::kCancelled)]
        .Add();
    const bool probe = it->second.probe;
    requests_.erase(it);
    if (probe) breaker_.ProbeLost();
  }
}

void AttemptRunner::OnDone(RequestId id, vpic::HttpResult result) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Request req = std::move(it->second);
  requests_.erase(it);
  vpic::RequestOutcome answer =
      req.reference
          ? vpic::ClassifyReferenceRequest(result, clock_->WallNow())
          : vpic::ClassifyRequest(result, clock_->WallNow(),
                                  req.batch ? &req.vins : nullptr);
  metrics_->upstream_requests[metrics::I(EndpointOf(req))]
                             [metrics::I(ResultOf(answer.outcomes))]
      .Add();
  metrics_->upstream_request_duration[metrics::I(EndpointOf(req))].Observe(
      clock_->Now() - req.started);
  if (result.requests_sent > 1) CountResent(req, result.requests_sent - 1);
  // What the answer says of vPIC as a whole comes first: a pushback
  // delays the queue before the flights it carried retry into it, and an
  // open breaker answers them instead of a retry.
  ApplySignal(answer);
  breaker_.OnAnswer(answer, req.probe);
  for (size_t i = 0; i < req.flights.size(); ++i) {
    flights_->Answered(req.flights[i], id, std::move(answer.outcomes[i]));
  }
}

void AttemptRunner::CountFairShare(const std::vector<Ticket>& flights) {
  const absl::Time now = clock_->Now();
  const std::string* tenant = nullptr;
  uint64_t run = 0;
  int run_priority = 0;
  for (const Ticket& t : flights) {
    const int p = static_cast<int>(t.priority);
    metrics_->upstream_wait[p].Observe(now - t.queued_at);
    if (tenant != nullptr && (*tenant != t.tenant || run_priority != p)) {
      metrics_->upstream_tenant_vins.Add(*tenant, run_priority, run);
      run = 0;
    }
    tenant = &t.tenant;
    run_priority = p;
    ++run;
  }
  metrics_->upstream_tenant_vins.Add(*tenant, run_priority, run);
}

// libcurl sent the request again by itself (a reused connection reset
// before any answer byte): each extra send reached vPIC, so it is counted
// as a request (a retryable one: the send before it broke) and as an
// attempt of every flight it carried.
void AttemptRunner::CountResent(const Request& req, int extra) {
  counts_.requests += extra;
  if (!req.reference) {
    counts_.vins += extra * req.flights.size();
    metrics_->upstream_vins.Add(extra * req.flights.size());
  }
  metrics_->upstream_requests[metrics::I(EndpointOf(req))]
                             [metrics::I(metrics::UpstreamResult::kRetryable)]
      .Add(extra);
  for (const Ticket& t : req.flights) flights_->Resent(t, extra);
}

void AttemptRunner::ApplySignal(const vpic::RequestOutcome& answer) {
  switch (answer.signal) {
    case vpic::Signal::kPushback:
      ApplyPushback(answer.outcomes.front());
      return;
    case vpic::Signal::kAnswered:
      if (budget_->OnSuccess(clock_->Now())) NoteRateChange(false);
      return;
    case vpic::Signal::kNone:
      return;
  }
}

void AttemptRunner::ApplyPushback(const vpic::Outcome& outcome) {
  const absl::Time now = clock_->Now();
  absl::Duration pause = outcome.retry_after.value_or(kDefaultPushback);
  pause = std::min(pause, options_.retry_after_max);
  ++counts_.pushbacks;
  metrics_->upstream_pushback.Add();
  const bool cut = budget_->OnPushback(now, pause);
  // Set here too, not only once per turn: the flights this answer fails
  // answer their callers before the turn ends.
  metrics_->upstream_rate_per_minute.Set(
      std::max(0.0, budget_->EffectiveRatePerMinute()));
  if (observer_ != nullptr) observer_->OnPushback(outcome.error, pause);
  if (cut) NoteRateChange(true);
  flights_->Delayed();
}

// The observer hears of every cut, and of the climb back in steps of a
// tenth of the configured rate (each success moves it a little), and when it
// is back at the configured rate.
void AttemptRunner::NoteRateChange(bool cut) {
  const double rate = budget_->EffectiveRatePerMinute();
  const double configured = options_.configured_rate;
  const bool step = rate - rate_reported_ >= configured / 10 ||
                    (rate >= configured && rate_reported_ < configured);
  if (!cut && !step) return;
  rate_reported_ = rate;
  if (observer_ != nullptr) observer_->OnUpstreamRateChanged(rate, configured);
}

// ---- SharedBreaker::Effects ----

void AttemptRunner::Refusing() { flights_->Unreachable(); }

// The backlog resumes from a fraction of the rate, climbing back as after a
// pushback.
void AttemptRunner::Closed() {
  if (budget_->OnRecovered(clock_->Now())) NoteRateChange(true);
}

}  // namespace engine
