// The flight lifecycle of Engine, on its loop thread: joining a flight
// (rule 5), leaving it, its completion or failure. The rules it follows
// each live in a file of their own: what each waiter is answered in
// answerer (QUEUED first, cache accounting, the snapshot fallback of
// source_policy), when a waiter must leave in waiter_deadlines (applied in
// deadlines.cc), attempts through the upstream gate in attempts.cc (with
// retry_policy and src/upstream/), the stop in drain_state; the
// thread-safe entry points and the loop in engine.cc.
#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "domain/limits.h"
#include "engine/engine.h"
#include "engine/model_year_candidates.h"
#include "engine/retry_policy.h"
#include "engine/source_policy.h"

namespace engine {
namespace {

// A batch item whose flight is expected to wait longer than this for the
// upstream rate says so in its QUEUED event.
constexpr absl::Duration kRateWaitShown = absl::Milliseconds(500);

// The QUEUED of a waiter whose flight (of `priority`) has its request
// expected at `start`; whether it is bulk held to its peak-hours share is
// asked only of a flight that waits for the rate.
Queued QueuedFor(bool coalesced, absl::Time start, absl::Time now,
                 const AttemptRunner& attempts, domain::Priority priority) {
  Queued queued;
  queued.coalesced = coalesced;
  if (start - now > kRateWaitShown) {
    queued.waiting_for_rate = true;
    queued.estimated_wait = start - now;
    queued.bulk_peak_hours = attempts.HeldToPeakShare(priority);
  }
  return queued;
}

}  // namespace

void Engine::OnSubmit(WaiterId id, coalesce::FlightKey key,
                      std::vector<vpic::Note> warnings, Waiter waiter,
                      bool stagger) {
  loop_->AssertOnLoopThread();
  const absl::Time now = clock_->Now();
  if (AnswerWithoutFlight(key, warnings, waiter, now)) return;
  const absl::Time leave_at = LeaveLivePathAt(
      waiter.source, waiter.deadline, now, options_.snapshot_fallback_margin);
  auto [f, created] = table_.Join(key, id, waiter);
  if (created) {
    StartFlight(f, id, std::move(warnings), stagger, leave_at, now);
  } else {
    JoinFlight(f, id, leave_at, now);
  }
}

bool Engine::AnswerWithoutFlight(const coalesce::FlightKey& key,
                                 const std::vector<vpic::Note>& warnings,
                                 Waiter& waiter, absl::Time now) {
  if (!drain_.loop_serving()) {
    answerer_.Fail(waiter, DrainState::ShuttingDown(), key, warnings);
    return true;
  }
  if (waiter.source == SourcePreference::kSnapshotOnly) {
    answerer_.AnswerFromSnapshot(waiter, key, warnings);
    return true;
  }
  if (auto cached = answerer_.LookupCache(key, now)) {
    answerer_.Done(waiter, std::move(cached));
    return true;
  }
  if (waiter.deadline <= now) {
    answerer_.CountMiss();
    answerer_.Fail(waiter, DeadlinePassedBeforeStartFailure(), key, warnings);
    return true;
  }
  if (options_.fleet == nullptr && attempts_.breaker().Refuses(now) &&
      table_.Find(key) == nullptr) {
    // The breaker is open and no flight runs for the key: the waiter
    // leaves the live path before one would be made (the fleet, when
    // there is one, is still asked: another replica may hold the answer).
    answerer_.CountMiss();
    answerer_.Fail(waiter, attempts_.breaker().Unreachable(now, 0), key,
                   warnings);
    return true;
  }
  return false;
}

void Engine::StartFlight(Flight* f, WaiterId id,
                         std::vector<vpic::Note> warnings, bool stagger,
                         absl::Time leave_at, absl::Time now) {
  Waiter& w = f->waiters.at(id);
  f->state.priority = w.priority;
  f->state.tenant = w.tenant;
  f->state.warnings = std::move(warnings);
  f->state.prev_delay = options_.retry_base;
  f->state.started = now;
  f->state.creator = id;  // its QUEUED is owed
  f->state.stagger = stagger;
  WatchDeadline(id, &w, leave_at);
  // In a fleet, the fleet's cache, then its lease, decide who decodes;
  // this waiter's QUEUED says so when the answer comes (fleet.cc).
  if (fleet_->Start(f->key, f->id)) return;
  answerer_.CountMiss();
  BeginAttempts(f, id, stagger);
}

void Engine::JoinFlight(Flight* f, WaiterId id, absl::Time leave_at,
                        absl::Time now) {
  answerer_.CountMiss();
  if (!Hurry(f, f->waiters.at(id))) return;
  auto it = f->waiters.find(id);
  if (it == f->waiters.end()) return;  // it left already (its deadline)
  Waiter& w = it->second;
  // Its QUEUED says whether the flight waits for the upstream rate.
  // (The rate's estimate is made once: a queued flight starts at its turn.)
  const absl::Time start = NextStart(*f, now);
  const absl::Time turn =
      f->state.phase.get<FlightPhase::Queued>() != nullptr ? start : now;
  answerer_.Queue(w, QueuedFor(true, turn, now, attempts_, f->state.priority));
  if (f->state.last_retrying) answerer_.Retry(w, *f->state.last_retrying);
  if (leave_at < start) {
    RemoveWaiter(id, LateFailure(*f, start, now));
    return;
  }
  WatchDeadline(id, &w, leave_at);
}

bool Engine::Hurry(Flight* f, const Waiter& w) {
  if (domain::MoreUrgent(w.priority, f->state.priority) == f->state.priority) {
    return true;
  }
  f->state.priority = w.priority;
  f->state.tenant = w.tenant;
  if (const auto* queued = f->state.phase.get<FlightPhase::Queued>()) {
    attempts_.Requeue(queued->ticket,
                      {f->key, f->id, f->state.priority, f->state.tenant});
    return true;
  }
  if (const auto* staggering = f->state.phase.get<FlightPhase::Staggering>()) {
    // Still in a bulk item's stagger: a person does not wait it out.
    scheduler_.Cancel(staggering->wakeup);
    f->state.phase.EndWait();
    const coalesce::FlightKey key = f->key;
    const uint64_t fid = f->id;
    EnqueueAttempt(f);
    // (The breaker may have failed it, this waiter too.)
    return table_.Find(key, fid) != nullptr;
  }
  return true;
}

void Engine::BeginAttempts(Flight* f, WaiterId creator, bool stagger) {
  const absl::Time now = clock_->Now();
  // The breaker is open: no attempt at all.
  if (attempts_.breaker().Refuses(now)) {
    FailUnreachable(f, absl::nullopt);
    return;
  }
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
      std::max(now + stagger_delay,
               attempts_.EstimatedStart(0, now, f->state.priority, f->state.tenant));
  auto it = f->waiters.find(creator);
  if (it != f->waiters.end()) {
    answerer_.Queue(it->second,
                    QueuedFor(false, start, now, attempts_, f->state.priority));
  }
  if (LeaveIfLate(f, start)) return;
  if (stagger_delay > absl::ZeroDuration()) {
    f->state.phase.Stagger(WakeUpAt(*f, clock_->Now() + stagger_delay));
  } else {
    EnqueueAttempt(f);
  }
}

retry::Scheduler::TimerId Engine::WakeUpAt(const Flight& f, absl::Time at) {
  return scheduler_.ScheduleAt(at, [this, key = f.key, fid = f.id] {
    if (Flight* g = table_.Find(key, fid)) {
      g->state.phase.EndWait();
      EnqueueAttempt(g);
    }
  });
}

void Engine::RemoveWaiter(WaiterId id, Failure failure) {
  Waiter w;
  Flight* f = table_.Leave(id, &w);
  if (f == nullptr) return;  // already answered
  answerer_.Fail(w, f->state.WithHistory(std::move(failure)), f->key,
                 f->state.warnings);
  AbandonIfEmpty(f);
}

void Engine::AbandonIfEmpty(Flight* f) {
  if (!f->waiters.empty()) return;
  Summarise(f, false, "abandoned: no caller left", 0);
  StopFlightWork(f);
  fleet_->Abandoned(f->key, f->id);
  table_.Erase(f);
}

void Engine::StopFlightWork(Flight* f) {
  if (const auto wakeup = f->state.phase.wakeup()) scheduler_.Cancel(*wakeup);
  const FlightPhase::State was = f->state.phase.Stop();
  if (const auto* q = std::get_if<FlightPhase::Queued>(&was)) {
    attempts_.Remove(q->ticket);
  } else if (const auto* sending = std::get_if<FlightPhase::Sending>(&was)) {
    if (sending->request != 0) attempts_.Leave(sending->request);
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
  result->decode_time = clock_->WallNow();
  result->document = std::move(decoded.document);
  if (!f->key.is_reference()) {
    result->model_year_candidates = LiveModelYearCandidates(
        f->key.vin, result->vehicle, domain::kMinModelYear,
        domain::LastModelYear(result->decode_time));
  }
  // (A reference answer is its document: nothing to encode.)
  if (options_.encoder && !f->key.is_reference()) {
    result->encoded = std::make_shared<const std::string>(options_.encoder(*result));
  }
  const std::shared_ptr<const DecodeResult> cache_answer =
      cache_.Insert(f->key, *result, now);
  Summarise(f, true, "done", f->waiters.size());
  StopFlightWork(f);
  fleet_->Done(f->key, f->id, *result, cache_answer);
  const int model_year_hint = f->key.model_year;
  const bool reference = f->key.is_reference();
  auto waiters = table_.Erase(f);
  std::shared_ptr<const DecodeResult> shared = std::move(result);
  // Told before the callers are answered: a caller that has its answer
  // finds it offered for comparison (rule 21).
  if (options_.observer != nullptr && !reference) {
    options_.observer->OnLiveAnswer(shared, model_year_hint);
  }
  for (auto& [id, w] : waiters) answerer_.Done(w, shared);
}

void Engine::FailFlight(Flight* f, Failure failure) {
  Summarise(f, false, failure.message, f->waiters.size());
  StopFlightWork(f);
  fleet_->Failed(f->key, f->id, failure);
  const coalesce::FlightKey key = f->key;
  const std::vector<vpic::Note> warnings = f->state.warnings;
  auto waiters = table_.Erase(f);
  for (auto& [id, w] : waiters) answerer_.Fail(w, failure, key, warnings);
}

void Engine::FailWaitingFlights(const Failure& failure) {
  std::vector<Flight*> waiting;
  table_.ForEachFlight([&](Flight* f) {
    if (!f->state.phase.sending()) waiting.push_back(f);
  });
  for (Flight* f : waiting) {
    Failure each = f->state.WithHistory(failure);
    const absl::optional<absl::Time> retry_at = f->state.phase.retry_at();
    if (retry_at && *retry_at > clock_->Now()) {
      each.retry_delay = *retry_at - clock_->Now();
    }
    FailFlight(f, std::move(each));
  }
}

void Engine::FailEverything(const Failure& failure) {
  std::vector<Flight*> all;
  table_.ForEachFlight([&](Flight* f) { all.push_back(f); });
  for (Flight* f : all) FailFlight(f, f->state.WithHistory(failure));
}

void Engine::Summarise(const Flight* f, bool ok, std::string outcome,
                       size_t waiters) {
  if (options_.observer == nullptr) return;
  FlightSummary s;
  s.vin = f->key.text();
  s.model_year = f->key.model_year;
  s.ok = ok;
  s.outcome = std::move(outcome);
  s.attempts = f->state.attempts;
  s.latency = clock_->Now() - f->state.started;
  s.waiters = waiters;
  s.tenant = f->state.tenant;
  s.priority = domain::PriorityLabel(f->state.priority);
  constexpr size_t kCallersLogged = 3;
  for (const auto& [id, w] : f->waiters) {
    if (s.callers.size() == kCallersLogged) break;
    if (w.listener != nullptr) s.callers.push_back(w.listener->Caller());
  }
  options_.observer->OnFlightFinished(s);
}

}  // namespace engine
