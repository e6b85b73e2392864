// The flight lifecycle of Engine, on its loop thread: joining and leaving
// flights, attempts and their classification, retries through the shared
// scheduler, completion, and answering each waiter (including the snapshot
// fallback). The thread-safe entry points and the loop are in engine.cc.
#include "engine/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace engine {
namespace {

std::string Describe(const vpic::UpstreamError& e) {
  if (e.http_status != 0 && e.kind == "http") return e.message;
  return absl::StrCat(e.kind, ": ", e.message);
}

}  // namespace

void Engine::OnSubmit(WaiterId id, coalesce::FlightKey key,
                      std::vector<vpic::Note> warnings, Waiter waiter,
                      bool stagger) {
  const absl::Time now = clock_->Now();
  if (loop_shutting_down_) {
    Failure f{FailureReason::kShuttingDown,
              "the server is shutting down; try again later", true};
    DeliverFailure(waiter, f, key, warnings);
    return;
  }
  if (waiter.source == SourcePreference::kSnapshotOnly) {
    waiter.listener->OnQueued(false);
    if (auto answer = SnapshotAnswer(key, warnings, 0, "")) {
      waiter.listener->OnDone(std::move(answer));
      Release(waiter);
    } else {
      DeliverFailure(waiter,
                     {FailureReason::kNoSnapshot,
                      "the offline vPIC snapshot could not decode this VIN",
                      false},
                     key, warnings);
    }
    return;
  }
  if (auto cached = cache_.Lookup(key, now)) {
    waiter.listener->OnQueued(false);
    waiter.listener->OnDone(std::move(cached));
    Release(waiter);
    return;
  }
  if (waiter.deadline <= now) {
    DeliverFailure(waiter,
                   {FailureReason::kDeadlineExceeded,
                    "the deadline passed before the decode started", true},
                   key, warnings);
    return;
  }
  DecodeListener* listener = waiter.listener;
  const absl::Time deadline = waiter.deadline;
  // A waiter that may fall back to the snapshot leaves the live path a
  // little before its deadline, so that the snapshot answer arrives in time.
  absl::Time leave_at = deadline;
  if (waiter.source == SourcePreference::kLiveThenSnapshot &&
      deadline != absl::InfiniteFuture()) {
    leave_at = std::max(now, deadline - options_.snapshot_fallback_margin);
  }
  auto [f, created] = table_.Join(key, id, waiter);
  Waiter& w = f->waiters.at(id);
  listener->OnQueued(!created);
  if (created) {
    f->state.warnings = std::move(warnings);
    f->state.prev_delay = options_.retry_base;
    f->state.started = now;
  } else if (f->state.last_retrying) {
    listener->OnRetrying(*f->state.last_retrying);
  }
  // A waiter whose deadline falls before the flight's next attempt leaves
  // at once: it would only sleep into its deadline.
  if (!created && f->state.wakeup != 0 && leave_at < f->state.retry_at) {
    OnCancel(id, FailureReason::kUpstreamUnavailable, "");
    return;
  }
  w.deadline = leave_at;
  if (leave_at != absl::InfiniteFuture()) {
    w.deadline_timer = scheduler_.ScheduleAt(leave_at, [this, id] {
      OnCancel(id, FailureReason::kDeadlineExceeded,
               "the deadline passed while vPIC was being asked");
    });
  }
  if (!created) return;
  if (stagger) {
    const uint64_t fid = f->id;
    f->state.wakeup =
        scheduler_.ScheduleAfter(jitter_.Stagger(), [this, key, fid] {
          if (Flight* g = table_.Find(key, fid)) {
            g->state.wakeup = 0;
            EnqueueAttempt(g);
          }
        });
  } else {
    EnqueueAttempt(f);
  }
}

// Removes one waiter with a failure. kUpstreamUnavailable here means "the
// next retry wakes after this waiter's deadline" and carries that delay.
void Engine::OnCancel(WaiterId id, FailureReason reason,
                      const std::string& message) {
  Waiter w;
  Flight* f = table_.Leave(id, &w);
  if (f == nullptr) return;  // already answered
  Failure failure{reason, message, reason != FailureReason::kCancelled,
                  f->state.attempts};
  if (reason == FailureReason::kUpstreamUnavailable) {
    failure.retry_delay = f->state.retry_at - clock_->Now();
    failure.last_error = f->state.last_retrying->error;
    failure.message = absl::StrCat(
        "vPIC is failing (", Describe(failure.last_error.value()),
        "); its next attempt, in ", absl::FormatDuration(failure.retry_delay),
        ", falls after this call's deadline");
  } else if (f->state.last_retrying) {
    failure.last_error = f->state.last_retrying->error;
  }
  DeliverFailure(w, failure, f->key, f->state.warnings);
  AbandonIfEmpty(f);
}

void Engine::AbandonIfEmpty(Flight* f) {
  if (!f->waiters.empty()) return;
  Summarise(f, false, "abandoned: no caller left", 0);
  StopFlightWork(f);
  table_.Erase(f);
}

void Engine::StopFlightWork(Flight* f) {
  scheduler_.Cancel(f->state.wakeup);
  f->state.wakeup = 0;
  if (f->state.request != 0) {
    client_->Cancel(f->state.request);
    f->state.request = 0;
  }
  f->state.awaiting_slot = false;  // its ready_ entry becomes stale
}

void Engine::EnqueueAttempt(Flight* f) {
  f->state.retry_at = absl::InfinitePast();
  f->state.awaiting_slot = true;
  ready_.emplace_back(f->key, f->id);
}

void Engine::StartReadyAttempts() {
  while (!ready_.empty() &&
         client_->active() < static_cast<size_t>(options_.max_upstream_concurrency)) {
    auto [key, fid] = std::move(ready_.front());
    ready_.pop_front();
    Flight* f = table_.Find(key, fid);
    if (f == nullptr || !f->state.awaiting_slot) continue;
    f->state.awaiting_slot = false;
    ++f->state.attempts;
    ++upstream_requests_;
    f->state.request = client_->Start(
        key.vin, key.model_year,
        [this, key = key, fid = fid](vpic::HttpResult r) {
          OnAttemptDone(key, fid, std::move(r));
        });
  }
}

void Engine::OnAttemptDone(const coalesce::FlightKey& key, uint64_t flight_id,
                           vpic::HttpResult result) {
  Flight* f = table_.Find(key, flight_id);
  if (f == nullptr) return;
  f->state.request = 0;
  vpic::Outcome outcome = vpic::Classify(result, clock_->Now());
  switch (outcome.verdict) {
    case vpic::Outcome::Verdict::kDecoded:
      Complete(f, std::move(outcome.decoded));
      return;
    case vpic::Outcome::Verdict::kReject: {
      Failure failure{FailureReason::kUpstreamRejected,
                      absl::StrCat("vPIC rejected the request (",
                                   Describe(outcome.error), ")"),
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
  const int attempts = f->state.attempts;
  absl::Duration delay = jitter_.Next(f->state.prev_delay);
  Failure exhausted{FailureReason::kUpstreamUnavailable, "", true, attempts,
                    outcome.error};
  if (outcome.retry_after) {
    if (*outcome.retry_after > options_.retry_after_max) {
      exhausted.retry_delay = *outcome.retry_after;
      exhausted.message = absl::StrCat(
          "vPIC asked to retry after ",
          absl::FormatDuration(*outcome.retry_after),
          ", longer than this server waits (",
          absl::FormatDuration(options_.retry_after_max), ")");
      FailFlight(f, std::move(exhausted));
      return;
    }
    delay = std::max(delay, *outcome.retry_after);
  }
  if (attempts >= options_.max_attempts) {
    exhausted.retry_delay = delay;
    exhausted.message =
        absl::StrCat("vPIC still failing after ", attempts, " attempt",
                     attempts == 1 ? "" : "s", " (", Describe(outcome.error),
                     ")");
    FailFlight(f, std::move(exhausted));
    return;
  }
  const Retrying retrying{attempts, delay, outcome.error};
  f->state.prev_delay = delay;
  f->state.last_retrying = retrying;
  f->state.retry_at = clock_->Now() + delay;
  const uint64_t fid = f->id;
  const coalesce::FlightKey key = f->key;
  f->state.wakeup = scheduler_.ScheduleAt(f->state.retry_at, [this, key, fid] {
    if (Flight* g = table_.Find(key, fid)) {
      g->state.wakeup = 0;
      EnqueueAttempt(g);
    }
  });
  // Waiters whose deadline falls before the wake-up leave now.
  std::vector<WaiterId> leaving;
  for (const auto& [id, w] : f->waiters) {
    if (w.deadline < f->state.retry_at) leaving.push_back(id);
  }
  const size_t staying = f->waiters.size() - leaving.size();
  if (staying > 0) {
    if (options_.observer) options_.observer->OnRetryScheduled(key.vin, retrying);
    for (auto& [id, w] : f->waiters) {
      if (w.deadline >= f->state.retry_at) w.listener->OnRetrying(retrying);
    }
  }
  for (WaiterId id : leaving) {
    // The last one out abandons the flight, cancelling the wake-up.
    OnCancel(id, FailureReason::kUpstreamUnavailable, "");
  }
}

void Engine::Complete(Flight* f, vpic::Decoded decoded) {
  const absl::Time now = clock_->Now();
  auto result = std::make_shared<DecodeResult>();
  result->vin = f->key.vin;
  result->vehicle = std::move(decoded.vehicle);
  result->source = Source::kVpic;
  result->attempts = f->state.attempts;
  result->notes = f->state.warnings;
  for (auto& n : decoded.notes) result->notes.push_back(std::move(n));
  result->decode_time = now;
  cache_.Insert(f->key, *result, now);
  Summarise(f, true, "done", f->waiters.size());
  StopFlightWork(f);
  auto waiters = table_.Erase(f);
  std::shared_ptr<const DecodeResult> shared = std::move(result);
  for (auto& [id, w] : waiters) {
    w.listener->OnDone(shared);
    Release(w);
  }
}

void Engine::FailFlight(Flight* f, Failure failure) {
  Summarise(f, false, failure.message, f->waiters.size());
  StopFlightWork(f);
  const coalesce::FlightKey key = f->key;
  const std::vector<vpic::Note> warnings = f->state.warnings;
  auto waiters = table_.Erase(f);
  for (auto& [id, w] : waiters) DeliverFailure(w, failure, key, warnings);
}

void Engine::FailEverything(const Failure& failure) {
  std::vector<Flight*> all;
  table_.ForEachFlight([&](Flight* f) { all.push_back(f); });
  for (Flight* f : all) {
    Failure each = failure;
    each.attempts = f->state.attempts;
    if (f->state.last_retrying) each.last_error = f->state.last_retrying->error;
    FailFlight(f, std::move(each));
  }
  ready_.clear();
}

void Engine::DeliverFailure(Waiter& w, const Failure& failure,
                            const coalesce::FlightKey& key,
                            const std::vector<vpic::Note>& warnings) {
  const bool live_failed_for_good =
      failure.reason == FailureReason::kUpstreamUnavailable ||
      failure.reason == FailureReason::kUpstreamRejected ||
      failure.reason == FailureReason::kDeadlineExceeded;
  if (w.source == SourcePreference::kLiveThenSnapshot && live_failed_for_good) {
    if (auto answer =
            SnapshotAnswer(key, warnings, failure.attempts, failure.message)) {
      w.listener->OnDone(std::move(answer));
      Release(w);
      return;
    }
  }
  w.listener->OnFailed(failure);
  Release(w);
}

std::shared_ptr<const DecodeResult> Engine::SnapshotAnswer(
    const coalesce::FlightKey& key, const std::vector<vpic::Note>& warnings,
    int attempts, const std::string& live_failure) {
  if (options_.snapshots == nullptr) return nullptr;
  std::shared_ptr<const snapshot::Snapshot> snap =
      options_.snapshots->Current();
  if (snap == nullptr) return nullptr;
  const absl::Time now = clock_->Now();
  const int reference_year =
      static_cast<int>(absl::ToCivilYear(now, absl::UTCTimeZone()).year());
  auto decoded = snap->Decode(key.vin, key.model_year, reference_year);
  if (!decoded.ok()) return nullptr;
  auto result = std::make_shared<DecodeResult>();
  result->vin = key.vin;
  result->vehicle = std::move(decoded->vehicle);
  result->source = Source::kSnapshot;
  result->attempts = attempts;
  result->notes = warnings;
  for (auto& n : decoded->notes) result->notes.push_back(std::move(n));
  if (!live_failure.empty()) {
    result->notes.push_back(
        {"live_failure",
         absl::StrCat("answered from the offline snapshot because the live "
                      "decode failed: ",
                      live_failure)});
  }
  result->decode_time = now;
  return result;
}

// The waiter has had its terminal event.
void Engine::Release(Waiter& w) {
  scheduler_.Cancel(w.deadline_timer);
  w.deadline_timer = 0;
  w.listener = nullptr;
  admitted_.fetch_sub(1);
}

void Engine::Summarise(const Flight* f, bool ok, std::string outcome,
                       size_t waiters) {
  if (options_.observer == nullptr) return;
  FlightSummary s;
  s.vin = f->key.vin;
  s.model_year = f->key.model_year;
  s.ok = ok;
  s.outcome = std::move(outcome);
  s.attempts = f->state.attempts;
  s.latency = clock_->Now() - f->state.started;
  s.waiters = waiters;
  options_.observer->OnFlightFinished(s);
}

}  // namespace engine
