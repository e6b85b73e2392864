// Fleet mode of Engine, on its loop thread (README "Running a fleet"): a new
// flight first asks the fleet (FleetBackend, Redis) for a finished decode
// and for the flight's lease. The replica that gets the lease decodes and
// tells the others how it went (RETRYING, then DONE, FAILED, or ABANDONED
// when its callers all left); the others relay those events to their own
// waiters, and try to take the lease over from time to time, so that a
// replica that dies leaves no waiter behind. Whenever Redis does not answer
// in time, a flight goes on alone: a lost lease costs one duplicate
// request, never a wrong answer or a failed decode.
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/engine.h"

namespace engine {
namespace {

// Another replica's decode as this one's cache answers it.
std::shared_ptr<DecodeResult> CacheAnswer(const std::string& vin,
                                          std::shared_ptr<const std::string> bytes) {
  auto answer = std::make_shared<DecodeResult>();
  answer->vin = vin;
  answer->source = Source::kCache;
  answer->encoded = std::move(bytes);
  return answer;
}

absl::optional<coalesce::FlightKey> ParseFleetKey(const std::string& key) {
  std::pair<std::string, std::string> parts =
      absl::StrSplit(key, absl::MaxSplits('|', 1));
  coalesce::FlightKey out;
  out.vin = parts.first;
  if (!absl::SimpleAtoi(parts.second, &out.model_year)) return absl::nullopt;
  return out;
}

}  // namespace

bool Engine::FleetActive() const {
  return options_.fleet != nullptr && options_.encoder && options_.fleet->up();
}

std::string Engine::FleetToken(uint64_t flight_id) const {
  return absl::StrCat(options_.fleet->replica(), ":", flight_id);
}

std::string Engine::FleetToken(const Flight& f) const { return FleetToken(f.id); }

FleetEvent Engine::EventOf(const Flight& f, FleetEvent::Kind kind) const {
  FleetEvent e;
  e.kind = kind;
  e.key = FleetKey(f.key.vin, f.key.model_year);
  e.origin = options_.fleet->replica();
  return e;
}

void Engine::ClaimFleetFlight(Flight* f) {
  const coalesce::FlightKey key = f->key;
  const uint64_t fid = f->id;
  options_.fleet->ClaimFlight(
      FleetKey(key.vin, key.model_year), FleetToken(*f), options_.fleet_lease,
      [handle = handle_, this, key, fid](FleetBackend::Claim claim) {
        handle->Post([this, key, fid, claim = std::move(claim)]() mutable {
          OnClaim(key, fid, std::move(claim));
        });
      });
}

void Engine::OnClaim(const coalesce::FlightKey& key, uint64_t fid,
                     FleetBackend::Claim claim) {
  Flight* f = table_.Find(key, fid);
  if (f == nullptr || (f->state.fleet != FleetRole::kClaiming &&
                       f->state.fleet != FleetRole::kRemote)) {
    // Its callers left meanwhile: a lease it got goes back at once.
    if (claim.kind == FleetBackend::Claim::Kind::kOwner) {
      options_.fleet->ReleaseLease(FleetKey(key.vin, key.model_year),
                                   FleetToken(fid));
    }
    return;
  }
  const bool first = f->state.fleet == FleetRole::kClaiming;
  using Kind = FleetBackend::Claim::Kind;
  if (first) {
    if (claim.kind == Kind::kCached) {
      answerer_.CountHit();
    } else {
      answerer_.CountMiss();
    }
  }
  switch (claim.kind) {
    case Kind::kCached: {
      auto answer = CacheAnswer(key.vin, std::move(claim.cached));
      cache_.InsertAnswer(key, answer, clock_->Now());
      AnswerFromFleet(f, std::move(answer));
      return;
    }
    case Kind::kTaken:
      f->state.fleet = FleetRole::kRemote;
      if (first && f->waiters.count(f->state.creator) != 0) {
        metrics_->coalesced_waiters.Add();
        Queued queued;
        queued.coalesced = true;  // with a flight on another replica
        answerer_.Queue(f->waiters.at(f->state.creator), queued);
      }
      ScheduleFleetTimer(f);
      return;
    case Kind::kOwner:
    case Kind::kUnavailable:
      f->state.fleet =
          claim.kind == Kind::kOwner ? FleetRole::kOwner : FleetRole::kLocal;
      if (f->state.fleet == FleetRole::kOwner) ScheduleFleetTimer(f);
      if (first) {
        BeginAttempts(f, f->state.creator, f->state.stagger);
      } else {
        // Taken over from a replica that stopped renewing its lease.
        budget_->RecordFirstAttempts(clock_->Now(), 1);
        EnqueueAttempt(f);
      }
      return;
  }
}

void Engine::ScheduleFleetTimer(Flight* f) {
  const bool owner = f->state.fleet == FleetRole::kOwner;
  const absl::Duration every = options_.fleet_lease / (owner ? 3 : 2);
  const coalesce::FlightKey key = f->key;
  const uint64_t fid = f->id;
  f->state.fleet_timer = scheduler_.ScheduleAfter(every, [this, key, fid] {
    Flight* g = table_.Find(key, fid);
    if (g == nullptr) return;
    g->state.fleet_timer = 0;
    if (g->state.fleet == FleetRole::kOwner) {
      options_.fleet->RenewLease(FleetKey(key.vin, key.model_year),
                                 FleetToken(*g), options_.fleet_lease);
      ScheduleFleetTimer(g);
    } else if (g->state.fleet == FleetRole::kRemote) {
      ClaimFleetFlight(g);  // its answer schedules the next look
    }
  });
}

void Engine::OnFleetEvent(const FleetEvent& e) {
  const absl::optional<coalesce::FlightKey> key = ParseFleetKey(e.key);
  if (!key) return;
  std::shared_ptr<DecodeResult> cached;
  if (e.kind == FleetEvent::Kind::kDone) {
    // Every replica keeps the fleet's decodes in its own cache too, so that
    // repeats are answered without a trip to Redis.
    cached = CacheAnswer(key->vin, e.cached);
    cache_.InsertAnswer(*key, cached, clock_->Now());
  }
  Flight* f = table_.Find(*key);
  if (f == nullptr) return;
  switch (e.kind) {
    case FleetEvent::Kind::kDone: {
      // Whoever decoded it, the flight here is over. A flight still asking
      // the fleet was started after that decode ended, as far as its
      // callers can tell: it gets the cache answer the claim would have.
      if (f->state.fleet == FleetRole::kClaiming) {
        answerer_.CountHit();
        f->state.fleet = FleetRole::kLocal;  // the claim's answer is moot
        AnswerFromFleet(f, std::move(cached));
        return;
      }
      auto answer = std::make_shared<DecodeResult>();
      answer->vin = key->vin;
      answer->source = e.source;
      answer->attempts = e.attempts;
      answer->encoded = e.encoded;
      AnswerFromFleet(f, std::move(answer));
      return;
    }
    case FleetEvent::Kind::kRetrying:
      if (f->state.fleet != FleetRole::kRemote) return;
      f->state.last_retrying = e.retrying;
      for (auto& [id, w] : f->waiters) w.listener->OnRetrying(e.retrying);
      return;
    case FleetEvent::Kind::kFailed:
      if (f->state.fleet != FleetRole::kRemote) return;
      f->state.attempts = e.failure.attempts;
      FailFlight(f, e.failure);
      return;
    case FleetEvent::Kind::kAbandoned:
      if (f->state.fleet != FleetRole::kRemote) return;
      scheduler_.Cancel(f->state.fleet_timer);
      f->state.fleet_timer = 0;
      ClaimFleetFlight(f);
      return;
  }
}

void Engine::AnswerFromFleet(Flight* f,
                             std::shared_ptr<const DecodeResult> answer) {
  Summarise(f, true, answer->source == Source::kCache ? "done (fleet cache)"
                                                       : "done (fleet)",
            f->waiters.size());
  StopFlightWork(f);
  if (f->state.fleet == FleetRole::kOwner) {
    options_.fleet->ReleaseLease(FleetKey(f->key.vin, f->key.model_year),
                                 FleetToken(*f));
  }
  auto waiters = table_.Erase(f);
  for (auto& [id, w] : waiters) answerer_.Done(w, answer);
}

void Engine::FleetDone(Flight* f, const DecodeResult& result,
                       const std::shared_ptr<const DecodeResult>& cache_answer) {
  if (options_.fleet == nullptr || result.encoded == nullptr) return;
  const std::string key = FleetKey(f->key.vin, f->key.model_year);
  // Also a flight that went on alone shares what it found.
  if (cache_answer == nullptr || cache_answer->encoded == nullptr) return;
  options_.fleet->StoreResult(key, *cache_answer->encoded, options_.cache_ttl);
  FleetEvent e = EventOf(*f, FleetEvent::Kind::kDone);
  e.encoded = result.encoded;
  e.cached = cache_answer->encoded;
  e.source = result.source;
  e.attempts = result.attempts;
  options_.fleet->Publish(e);
  if (f->state.fleet == FleetRole::kOwner) {
    options_.fleet->ReleaseLease(key, FleetToken(*f));
  }
}

void Engine::FleetFailed(Flight* f, const Failure& failure) {
  if (f->state.fleet != FleetRole::kOwner) return;
  if (failure.reason == FailureReason::kShuttingDown ||
      failure.reason == FailureReason::kCancelled) {
    // This replica stops; another one may take the flight over.
    FleetAbandoned(f);
    return;
  }
  FleetEvent e = EventOf(*f, FleetEvent::Kind::kFailed);
  e.failure = failure;
  options_.fleet->Publish(e);
  options_.fleet->ReleaseLease(e.key, FleetToken(*f));
}

void Engine::FleetAbandoned(Flight* f) {
  if (f->state.fleet != FleetRole::kOwner) return;
  f->state.fleet = FleetRole::kLocal;  // told once
  const FleetEvent e = EventOf(*f, FleetEvent::Kind::kAbandoned);
  // Released first, so that the replica the event wakes finds it free.
  options_.fleet->ReleaseLease(e.key, FleetToken(*f));
  options_.fleet->Publish(e);
}

void Engine::FleetRetrying(Flight* f, const Retrying& retrying) {
  if (f->state.fleet != FleetRole::kOwner) return;
  FleetEvent e = EventOf(*f, FleetEvent::Kind::kRetrying);
  e.retrying = retrying;
  options_.fleet->Publish(e);
}

}  // namespace engine
