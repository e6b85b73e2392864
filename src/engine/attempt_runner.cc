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
      gate_(budget, options.batch_max),
      rate_reported_(options.configured_rate) {}

metrics::Endpoint AttemptRunner::EndpointOf(const Request& r) {
  return r.batch ? metrics::Endpoint::kBatch : metrics::Endpoint::kSingle;
}

std::vector<std::pair<AttemptRunner::Ticket, absl::Time>> AttemptRunner::Queued(
    absl::Time now) const {
  std::vector<std::pair<Ticket, absl::Time>> queued;
  gate_.ForEach([&](Seq seq, const Ticket& t) {
    queued.emplace_back(t, gate_.EstimatedStart(seq, now));
  });
  return queued;
}

void AttemptRunner::StartReady() {
  const size_t limit = static_cast<size_t>(options_.max_concurrency);
  while (transport_->active() < limit) {
    std::vector<Ticket> tickets = gate_.Take(clock_->Now());
    if (tickets.empty()) break;
    Start(std::move(tickets));
  }
}

absl::optional<absl::Time> AttemptRunner::NextStart(absl::Time now) const {
  if (transport_->active() >= static_cast<size_t>(options_.max_concurrency)) {
    return absl::nullopt;  // a request's end comes first, as I/O
  }
  return gate_.NextStart(now);
}

void AttemptRunner::Start(std::vector<Ticket> tickets) {
  Request req;
  std::vector<vpic::BatchEntry> entries;
  for (Ticket& t : tickets) {
    if (!flights_->Sending(t)) continue;  // cannot happen: a stopped flight leaves the gate
    entries.push_back({t.key.vin, t.key.model_year});
    req.flights.push_back(std::move(t));
  }
  if (req.flights.empty()) return;
  req.live = req.flights.size();
  req.batch = req.flights.size() > 1;
  req.started = clock_->Now();
  ++counts_.requests;
  counts_.vins += req.flights.size();
  metrics_->upstream_vins.Add(req.flights.size());
  // The id is known only once the request is started; the callback runs in
  // a later turn of the loop, so it reads the id from a slot filled below.
  auto slot = std::make_shared<RequestId>(0);
  auto callback = [this, slot](vpic::HttpResult r) {
    OnDone(*slot, std::move(r));
  };
  RequestId id = 0;
  if (req.batch) {
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
    requests_.erase(it);
  }
}

void AttemptRunner::OnDone(RequestId id, vpic::HttpResult result) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Request req = std::move(it->second);
  requests_.erase(it);
  vpic::RequestOutcome answer = vpic::ClassifyRequest(
      result, clock_->WallNow(), req.batch ? &req.vins : nullptr);
  metrics_->upstream_requests[metrics::I(EndpointOf(req))]
                             [metrics::I(ResultOf(answer.outcomes))]
      .Add();
  metrics_->upstream_request_duration[metrics::I(EndpointOf(req))].Observe(
      clock_->Now() - req.started);
  // What the answer says of vPIC as a whole comes first: a pushback
  // delays the queue before the flights it carried retry into it.
  ApplySignal(answer);
  for (size_t i = 0; i < req.flights.size(); ++i) {
    flights_->Answered(req.flights[i], id, std::move(answer.outcomes[i]));
  }
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

}  // namespace engine
