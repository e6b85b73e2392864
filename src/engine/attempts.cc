// The flights' side of their attempts, on Engine's loop thread: a flight
// queues at the gate for each attempt (AttemptRunner starts the requests,
// rules 9, 10 and 12), and its outcome becomes its completion, its failure
// or its retry (rules 2, 3 and 11).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "engine/retry_policy.h"

namespace engine {

void Engine::EnqueueAttempt(Flight* f) {
  const absl::Time now = clock_->Now();
  if (!drain_.loop_serving()) {  // a stagger or retry wake-up that fired meanwhile
    FailFlight(f, DrainState::ShuttingDown({}, f->state.attempts));
    return;
  }
  const AttemptRunner::Seq ticket = attempts_.Enqueue(
      {f->key, f->id, f->state.priority, f->state.tenant}, f->state.place);
  if (ticket == 0) {  // the breaker is open
    FailUnreachable(f, absl::nullopt);
    return;
  }
  f->state.phase.Queue(ticket);
  f->state.place = ticket;
  const absl::Time start = attempts_.EstimatedStart(ticket, now);
  if (start > now) LeaveIfLate(f, start);
}

void Engine::StartReadyAttempts() {
  loop_->AssertOnLoopThread();
  if (!drain_.loop_serving()) return;  // no new upstream request while stopping
  attempts_.StartReady();
}

// ---- AttemptRunner::Flights ----

bool Engine::Sending(const AttemptRunner::Ticket& t) {
  Flight* f = table_.Find(t.key, t.flight_id);
  if (f == nullptr) return false;
  f->state.phase.Send();
  if (++f->state.attempts > 1) metrics_->upstream_retries.Add();
  return true;
}

void Engine::Carried(const AttemptRunner::Ticket& t,
                     AttemptRunner::RequestId id) {
  if (Flight* f = table_.Find(t.key, t.flight_id)) f->state.phase.Carried(id);
}

void Engine::Answered(const AttemptRunner::Ticket& t,
                      AttemptRunner::RequestId id, vpic::Outcome outcome) {
  loop_->AssertOnLoopThread();
  Flight* f = table_.Find(t.key, t.flight_id);
  if (f == nullptr || !f->state.phase.Answer(id)) return;
  HandleOutcome(f, std::move(outcome));
}

// Queued flights start later now: waiters that can no longer be served
// before their deadline leave at once. (Estimated before any leaves, as
// leaving changes the queue.)
void Engine::Delayed() {
  for (const auto& [t, start] : attempts_.Queued(clock_->Now())) {
    if (Flight* f = table_.Find(t.key, t.flight_id)) LeaveIfLate(f, start);
  }
}

// The breaker opened: nothing waits to send while it is open.
void Engine::Unreachable() {
  std::vector<Flight*> waiting;
  table_.ForEachFlight([&](Flight* f) {
    if (!f->state.phase.sending()) waiting.push_back(f);
  });
  for (Flight* f : waiting) FailUnreachable(f, absl::nullopt);
}

void Engine::FailUnreachable(Flight* f,
                             absl::optional<vpic::UpstreamError> error) {
  Failure failure =
      attempts_.breaker().Unreachable(clock_->Now(), f->state.attempts);
  if (error) {
    failure.last_error = std::move(error);
  } else if (f->state.last_retrying) {
    failure.last_error = f->state.last_retrying->error;
  }
  FailFlight(f, std::move(failure));
}

void Engine::Resent(const AttemptRunner::Ticket& t, int extra) {
  Flight* f = table_.Find(t.key, t.flight_id);
  if (f == nullptr) return;
  f->state.attempts += extra;
  metrics_->upstream_retries.Add(extra);
  // They were retries the budget did not grant: they spend it all the same.
  const absl::Time now = clock_->Now();
  for (int i = 0; i < extra; ++i) budget_->TryRetry(now);
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
  // No RETRYING for a retry that cannot come.
  if (attempts_.breaker().Refuses(now)) {
    FailUnreachable(f, outcome.error);
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
        options_.observer->OnRetryRefused(f->key.text(), decision.delay);
      }
    }
    FailFlight(f, RetryFailure(decision, in, outcome.error));
    return;
  }
  const Retrying retrying{in.attempts, decision.delay, outcome.error};
  f->state.prev_delay = decision.delay;
  f->state.last_retrying = retrying;
  const absl::Time retry_at = now + decision.delay;
  f->state.phase.AwaitRetry(WakeUpAt(*f, retry_at), retry_at);
  // Waiters whose deadline falls before the wake-up leave now, without a
  // RETRYING: they will not see that retry.
  const std::vector<WaiterId> leaving = MustLeaveBefore(f->waiters, retry_at);
  fleet_->RetryScheduled(f->key, f->id, retrying);
  if (f->waiters.size() > leaving.size()) {
    if (options_.observer) {
      options_.observer->OnRetryScheduled(f->key.text(), retrying);
    }
    for (auto& [id, w] : f->waiters) {
      if (w.deadline >= retry_at) answerer_.Retry(w, retrying);
    }
  }
  // The last one out abandons the flight, cancelling the wake-up.
  if (!leaving.empty()) {
    RemoveWaiters(leaving, LateFailure(*f, retry_at, now));
  }
}

}  // namespace engine
