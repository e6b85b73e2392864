// The flight lifecycle of Engine, on its loop thread: joining a flight,
// leaving it, its completion or failure, and the answer of each waiter.
// The rules it follows each live in a file of their own: attempts through
// the upstream gate in attempts.cc (with retry_policy and src/upstream/),
// deadlines in deadlines.cc, the source preference and the snapshot
// fallback in source_policy; the thread-safe entry points and the loop in
// engine.cc.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/engine.h"
#include "engine/retry_policy.h"
#include "engine/source_policy.h"

namespace engine {
namespace {

// A batch item whose flight is expected to wait longer than this for the
// upstream rate says so in its QUEUED event.
constexpr absl::Duration kRateWaitShown = absl::Milliseconds(500);

// The QUEUED of a waiter whose flight's request is expected at `start`.
Queued QueuedFor(bool coalesced, absl::Time start, absl::Time now) {
  Queued queued;
  queued.coalesced = coalesced;
  if (start - now > kRateWaitShown) {
    queued.waiting_for_rate = true;
    queued.estimated_wait = start - now;
  }
  return queued;
}

}  // namespace

void Engine::OnSubmit(WaiterId id, coalesce::FlightKey key,
                      std::vector<vpic::Note> warnings, Waiter waiter,
                      bool stagger) {
  const absl::Time now = clock_->Now();
  if (loop_shutting_down_) {
    Failure f{FailureReason::kShuttingDown,
              "the server is shutting down; try again later", true};
    AnswerAfterFailure(waiter, f, key, warnings);
    return;
  }
  if (waiter.source == SourcePreference::kSnapshotOnly) {
    waiter.listener->OnQueued({});
    if (auto answer = SnapshotAnswerFor(key, warnings, 0, "")) {
      waiter.listener->OnDone(std::move(answer));
      Release(waiter);
    } else {
      AnswerAfterFailure(waiter,
                     {FailureReason::kNoSnapshot,
                      "the offline vPIC snapshot could not decode this VIN",
                      false},
                     key, warnings);
    }
    return;
  }
  if (auto cached = cache_.Lookup(key, now)) {
    metrics_->cache_hits.Add();
    waiter.listener->OnQueued({});
    waiter.listener->OnDone(std::move(cached));
    Release(waiter);
    return;
  }
  if (waiter.deadline <= now) {
    metrics_->cache_misses.Add();
    AnswerAfterFailure(waiter,
                   {FailureReason::kDeadlineExceeded,
                    "the deadline passed before the decode started", true},
                   key, warnings);
    return;
  }
  DecodeListener* listener = waiter.listener;
  const absl::Time deadline = waiter.deadline;
  const absl::Time leave_at = LeaveLivePathAt(
      waiter.source, deadline, now, options_.snapshot_fallback_margin);
  auto [f, created] = table_.Join(key, id, waiter);
  Waiter& w = f->waiters.at(id);
  if (created) {
    f->state.warnings = std::move(warnings);
    f->state.prev_delay = options_.retry_base;
    f->state.started = now;
    f->state.claimer = id;  // its QUEUED is owed
    WatchDeadline(id, &w, leave_at);
    if (FleetActive()) {
      // The fleet's cache, then its lease, decide who decodes; this waiter's
      // QUEUED says so when the answer comes (fleet.cc).
      f->state.fleet = FleetRole::kClaiming;
      f->state.stagger = stagger;
      ClaimFleetFlight(f);
      return;
    }
    metrics_->cache_misses.Add();
    BeginAttempts(f, id, stagger);
    return;
  }
  metrics_->cache_misses.Add();
  metrics_->coalesced_waiters.Add();
  // When the flight's upstream request is expected to start at the earliest:
  // at its retry wake-up or at its turn at the gate.
  const absl::Time start = f->state.ticket != 0
                               ? gate_.EstimatedStart(f->state.ticket, now)
                               : now;
  listener->OnQueued(QueuedFor(true, start, now));
  if (f->state.last_retrying) listener->OnRetrying(*f->state.last_retrying);
  // A waiter whose deadline falls before the flight's next attempt leaves
  // at once: it would only sleep into its deadline.
  if (f->state.wakeup != 0 && leave_at < f->state.retry_at) {
    RemoveWaiter(id, RetryWaitFailure(*f, now));
    return;
  }
  if (leave_at < start) {
    RemoveWaiter(id, GateWaitFailure(*f, start, now));
    return;
  }
  WatchDeadline(id, &w, leave_at);
}

void Engine::BeginAttempts(Flight* f, WaiterId creator, bool stagger) {
  const absl::Time now = clock_->Now();
  // The retry budget counts the first attempts callers asked for when
  // they ask, also while they wait for the rate cap: a backlog sent in
  // batches would otherwise leave no budget for one failed batch.
  budget_->RecordFirstAttempts(now, 1);
  const absl::Duration stagger_delay =
      stagger ? jitter_.Stagger() : absl::ZeroDuration();
  // When the flight's upstream request is expected to start at the earliest:
  // after its stagger and the flights queued ahead of it. Flights still in
  // their stagger are not counted: they may go after it. So the estimate is
  // a lower bound, and a waiter that leaves for it could not have been
  // served.
  const absl::Time start =
      std::max(now + stagger_delay, gate_.EstimatedStart(0, now));
  auto it = f->waiters.find(creator);
  if (it != f->waiters.end() && f->state.claimer == creator) {
    f->state.claimer = 0;
    it->second.listener->OnQueued(QueuedFor(false, start, now));
  }
  std::vector<WaiterId> leaving;
  for (const auto& [id, w] : f->waiters) {
    if (w.deadline < start) leaving.push_back(id);
  }
  const bool all_leave = leaving.size() == f->waiters.size();
  // The last one out abandons the flight.
  for (WaiterId id : leaving) RemoveWaiter(id, GateWaitFailure(*f, start, now));
  if (all_leave) return;
  if (stagger_delay > absl::ZeroDuration()) {
    const uint64_t fid = f->id;
    const coalesce::FlightKey key = f->key;
    f->state.wakeup = scheduler_.ScheduleAfter(stagger_delay, [this, key, fid] {
      if (Flight* g = table_.Find(key, fid)) {
        g->state.wakeup = 0;
        EnqueueAttempt(g);
      }
    });
  } else {
    EnqueueAttempt(f);
  }
}

void Engine::RemoveWaiter(WaiterId id, Failure failure) {
  Waiter w;
  Flight* f = table_.Leave(id, &w);
  if (f == nullptr) return;  // already answered
  if (f->state.claimer == id) {  // every waiter's first event is QUEUED
    f->state.claimer = 0;
    w.listener->OnQueued({});
  }
  if (failure.attempts == 0) failure.attempts = f->state.attempts;
  if (!failure.last_error && f->state.last_retrying) {
    failure.last_error = f->state.last_retrying->error;
  }
  AnswerAfterFailure(w, failure, f->key, f->state.warnings);
  AbandonIfEmpty(f);
}

void Engine::AbandonIfEmpty(Flight* f) {
  if (!f->waiters.empty()) return;
  Summarise(f, false, "abandoned: no caller left", 0);
  StopFlightWork(f);
  FleetAbandoned(f);
  table_.Erase(f);
}

void Engine::StopFlightWork(Flight* f) {
  scheduler_.Cancel(f->state.wakeup);
  f->state.wakeup = 0;
  DetachFromRequest(f);
  gate_.Remove(f->state.ticket);
  f->state.ticket = 0;
  scheduler_.Cancel(f->state.fleet_timer);
  f->state.fleet_timer = 0;
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
  result->decode_time = clock_->WallNow();
  if (options_.encoder) {
    result->encoded = std::make_shared<const std::string>(options_.encoder(*result));
  }
  const std::shared_ptr<const DecodeResult> cache_answer =
      cache_.Insert(f->key, *result, now);
  Summarise(f, true, "done", f->waiters.size());
  StopFlightWork(f);
  FleetDone(f, *result, cache_answer);
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
  FleetFailed(f, failure);
  const coalesce::FlightKey key = f->key;
  const std::vector<vpic::Note> warnings = f->state.warnings;
  const WaiterId claimer = f->state.claimer;
  auto waiters = table_.Erase(f);
  for (auto& [id, w] : waiters) {
    if (id == claimer) w.listener->OnQueued({});
    AnswerAfterFailure(w, failure, key, warnings);
  }
}

void Engine::FailWaitingFlights(const Failure& failure) {
  std::vector<Flight*> waiting;
  table_.ForEachFlight([&](Flight* f) {
    if (f->state.request == 0) waiting.push_back(f);
  });
  for (Flight* f : waiting) {
    Failure each = failure;
    each.attempts = f->state.attempts;
    if (f->state.last_retrying) each.last_error = f->state.last_retrying->error;
    if (f->state.retry_at > clock_->Now()) {
      each.retry_delay = f->state.retry_at - clock_->Now();
    }
    FailFlight(f, std::move(each));
  }
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
}

void Engine::AnswerAfterFailure(Waiter& w, const Failure& failure,
                                const coalesce::FlightKey& key,
                                const std::vector<vpic::Note>& warnings) {
  if (SnapshotAnswersAfter(w.source, failure.reason)) {
    if (auto answer =
            SnapshotAnswerFor(key, warnings, failure.attempts, failure.message)) {
      w.listener->OnDone(std::move(answer));
      Release(w);
      return;
    }
  }
  w.listener->OnFailed(failure);
  Release(w);
}

std::shared_ptr<const DecodeResult> Engine::SnapshotAnswerFor(
    const coalesce::FlightKey& key, const std::vector<vpic::Note>& warnings,
    int attempts, const std::string& live_failure) {
  if (options_.snapshots == nullptr) return nullptr;
  std::shared_ptr<const snapshot::Snapshot> snap =
      options_.snapshots->Current();
  if (snap == nullptr) return nullptr;
  return SnapshotAnswer(*snap, key, warnings, attempts, live_failure,
                        clock_->WallNow(), options_.encoder);
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
  constexpr size_t kCallersLogged = 3;
  for (const auto& [id, w] : f->waiters) {
    if (s.callers.size() == kCallersLogged) break;
    if (w.listener != nullptr) s.callers.push_back(w.listener->Caller());
  }
  options_.observer->OnFlightFinished(s);
}

}  // namespace engine
