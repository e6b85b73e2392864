// Attempts of Engine, on its loop thread: flights queue at the upstream gate
// (rate, pushback and batching, DESIGN rules 9, 10 and 12), requests start
// within the concurrency limit, and their answers are classified and turned
// into completions, failures or retries (rules 2, 3 and 11).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "engine/retry_policy.h"

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

metrics::Endpoint Engine::EndpointOf(const Request& r) {
  return r.batch ? metrics::Endpoint::kBatch : metrics::Endpoint::kSingle;
}

void Engine::EnqueueAttempt(Flight* f) {
  const absl::Time now = clock_->Now();
  if (!drain_.loop_serving()) {  // a stagger or retry wake-up that fired meanwhile
    FailFlight(f, DrainState::ShuttingDown({}, f->state.attempts));
    return;
  }
  f->state.retry_at = absl::InfinitePast();
  f->state.ticket = gate_.Enqueue({f->key, f->id}, f->state.place);
  f->state.place = f->state.ticket;
  const absl::Time start = gate_.EstimatedStart(f->state.ticket, now);
  if (start > now) LeaveIfLate(f, start);
}

void Engine::StartReadyAttempts() {
  loop_->AssertOnLoopThread();
  if (!drain_.loop_serving()) return;  // no new upstream request while stopping
  const size_t limit = static_cast<size_t>(options_.max_upstream_concurrency);
  while (transport_->active() < limit) {
    std::vector<upstream::UpstreamGate::Ticket> tickets =
        gate_.Take(clock_->Now());
    if (tickets.empty()) break;
    StartRequest(std::move(tickets));
  }
}

void Engine::StartRequest(std::vector<upstream::UpstreamGate::Ticket> tickets) {
  Request req;
  std::vector<vpic::BatchEntry> entries;
  for (upstream::UpstreamGate::Ticket& t : tickets) {
    Flight* f = table_.Find(t.key, t.flight_id);
    if (f == nullptr) continue;  // cannot happen: a stopped flight leaves the gate
    f->state.ticket = 0;
    if (++f->state.attempts > 1) metrics_->upstream_retries.Add();
    entries.push_back({t.key.vin, t.key.model_year});
    req.flights.push_back(std::move(t));
  }
  if (req.flights.empty()) return;
  req.live = req.flights.size();
  req.batch = req.flights.size() > 1;
  req.started = clock_->Now();
  ++counts_.upstream_requests;
  counts_.upstream_vins += req.flights.size();
  metrics_->upstream_vins.Add(req.flights.size());
  vpic::UpstreamClient::RequestId id = 0;
  // The id is known only once the request is started; the callback runs in a
  // later Poll(), so it reads the id from a slot filled in below.
  auto slot = std::make_shared<vpic::UpstreamClient::RequestId>(0);
  auto callback = [this, slot](vpic::HttpResult r) {
    OnRequestDone(*slot, std::move(r));
  };
  if (req.batch) {
    ++counts_.upstream_batch_requests;
    for (const auto& e : entries) req.vins.push_back(e.vin);
    id = transport_->StartBatch(entries, callback);
  } else {
    id = transport_->Start(entries[0].vin, entries[0].model_year, callback);
  }
  *slot = id;
  for (const auto& t : req.flights) {
    if (Flight* f = table_.Find(t.key, t.flight_id)) f->state.request = id;
  }
  requests_.emplace(id, std::move(req));
}

void Engine::DetachFromRequest(Flight* f) {
  const vpic::UpstreamClient::RequestId id = f->state.request;
  if (id == 0) return;
  f->state.request = 0;
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

void Engine::OnRequestDone(vpic::UpstreamClient::RequestId id,
                           vpic::HttpResult result) {
  loop_->AssertOnLoopThread();
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Request req = std::move(it->second);
  requests_.erase(it);
  vpic::RequestOutcome answer = vpic::ClassifyRequest(
      result, clock_->WallNow(), req.batch ? &req.vins : nullptr);
  std::vector<vpic::Outcome>& outcomes = answer.outcomes;
  metrics_->upstream_requests[metrics::I(EndpointOf(req))]
                             [metrics::I(ResultOf(outcomes))]
      .Add();
  metrics_->upstream_request_duration[metrics::I(EndpointOf(req))].Observe(
      clock_->Now() - req.started);
  ApplySignal(answer);
  for (size_t i = 0; i < req.flights.size(); ++i) {
    Flight* f = table_.Find(req.flights[i].key, req.flights[i].flight_id);
    if (f == nullptr || f->state.request != id) continue;
    f->state.request = 0;
    HandleOutcome(f, std::move(outcomes[i]));
  }
}

void Engine::ApplySignal(const vpic::RequestOutcome& answer) {
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

void Engine::HandleOutcome(Flight* f, vpic::Outcome outcome) {
  switch (outcome.verdict) {
    case vpic::Outcome::Verdict::kDecoded:
      Complete(f, std::move(outcome.decoded));
      return;
    case vpic::Outcome::Verdict::kReject: {
      Failure failure{FailureReason::kUpstreamRejected,
                      absl::StrCat("vPIC rejected the request (",
                                   DescribeUpstreamError(outcome.error), ")"),
                      false, f->state.attempts, outcome.error};
      FailFlight(f, std::move(failure));
      return;
    }
    case vpic::Outcome::Verdict::kRetry:
      ScheduleRetry(f, outcome);
      return;
  }
}

void Engine::ScheduleRetry(Flight* f, const vpic::Outcome& outcome) {
  const absl::Time now = clock_->Now();
  if (!drain_.loop_serving()) {
    Failure failure = DrainState::ShuttingDown(
        absl::StrCat("vPIC's last answer was ",
                     DescribeUpstreamError(outcome.error)),
        f->state.attempts);
    failure.last_error = outcome.error;
    FailFlight(f, std::move(failure));
    return;
  }
  RetryInput in;
  in.attempts = f->state.attempts;
  in.max_attempts = options_.max_attempts;
  in.jittered = jitter_.Next(f->state.prev_delay);
  in.retry_after = outcome.retry_after;
  in.retry_after_max = options_.retry_after_max;
  const RetryDecision decision =
      DecideRetry(in, [&] { return budget_->TryRetry(now); });
  if (decision.kind != RetryDecision::Kind::kRetry) {
    if (decision.kind == RetryDecision::Kind::kBudgetRefused) {
      ++counts_.retries_refused;
      metrics_->retry_budget_refused.Add();
      if (options_.observer) {
        options_.observer->OnRetryRefused(f->key.vin, decision.delay);
      }
    }
    FailFlight(f, RetryFailure(decision, in, outcome.error));
    return;
  }
  const Retrying retrying{in.attempts, decision.delay, outcome.error};
  f->state.prev_delay = decision.delay;
  f->state.last_retrying = retrying;
  f->state.retry_at = now + decision.delay;
  const uint64_t fid = f->id;
  const coalesce::FlightKey key = f->key;
  f->state.wakeup = scheduler_.ScheduleAt(f->state.retry_at, [this, key, fid] {
    if (Flight* g = table_.Find(key, fid)) {
      g->state.wakeup = 0;
      EnqueueAttempt(g);
    }
  });
  // Waiters whose deadline falls before the wake-up leave now, without a
  // RETRYING: they will not see that retry.
  const std::vector<WaiterId> leaving =
      MustLeaveBefore(f->waiters, f->state.retry_at);
  FleetRetrying(f, retrying);
  if (f->waiters.size() > leaving.size()) {
    if (options_.observer) options_.observer->OnRetryScheduled(key.vin, retrying);
    for (auto& [id, w] : f->waiters) {
      if (w.deadline >= f->state.retry_at) w.listener->OnRetrying(retrying);
    }
  }
  // The last one out abandons the flight, cancelling the wake-up.
  if (!leaving.empty()) {
    RemoveWaiters(leaving, LateFailure(*f, f->state.retry_at, now));
  }
}

void Engine::ApplyPushback(const vpic::Outcome& outcome) {
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
  if (options_.observer) options_.observer->OnPushback(outcome.error, pause);
  if (cut) NoteRateChange(true);
  // Queued flights start later now: waiters that can no longer be served
  // before their deadline leave at once. (Estimated before any leaves, as
  // leaving changes the queue.)
  std::vector<std::pair<upstream::UpstreamGate::Ticket, absl::Time>> queued;
  gate_.ForEach([&](upstream::UpstreamGate::Seq seq,
                    const upstream::UpstreamGate::Ticket& t) {
    queued.emplace_back(t, gate_.EstimatedStart(seq, now));
  });
  for (const auto& [t, start] : queued) {
    if (Flight* f = table_.Find(t.key, t.flight_id)) LeaveIfLate(f, start);
  }
}

// The observer hears of every cut, and of the climb back in steps of a
// tenth of the configured rate (each success moves it a little), and when it
// is back at the configured rate.
void Engine::NoteRateChange(bool cut) {
  const double rate = budget_->EffectiveRatePerMinute();
  const double configured = options_.budget.rate_per_minute;
  const bool step = rate - rate_reported_ >= configured / 10 ||
                    (rate >= configured && rate_reported_ < configured);
  if (!cut && !step) return;
  rate_reported_ = rate;
  if (options_.observer) {
    options_.observer->OnUpstreamRateChanged(rate, configured);
  }
}

}  // namespace engine
