// The engine's side of fleet mode (the rule is FleetCoordinator's,
// fleet_coordinator.h): what a flight does when the fleet has decided who
// decodes it. Loop thread only.
#include <algorithm>
#include <utility>

#include "engine/engine.h"

namespace engine {

void Engine::DecodeHere(const coalesce::FlightKey& key, uint64_t fid,
                        bool first) {
  Flight* f = table_.Find(key, fid);
  if (f == nullptr) return;
  if (first) {
    answerer_.CountMiss();
    BeginAttempts(f, f->state.creator, f->state.stagger);
    return;
  }
  // Taken over from a replica that stopped renewing its lease.
  budget_->RecordFirstAttempts(clock_->Now(), 1);
  EnqueueAttempt(f);
}

void Engine::DecodedElsewhere(const coalesce::FlightKey& key, uint64_t fid) {
  Flight* f = table_.Find(key, fid);
  if (f == nullptr) return;
  answerer_.CountMiss();
  auto creator = f->waiters.find(f->state.creator);
  if (creator == f->waiters.end()) return;
  Queued queued;
  queued.coalesced = true;  // with a flight on another replica
  answerer_.Queue(creator->second, queued);
}

void Engine::AnswerFromFleet(const coalesce::FlightKey& key, uint64_t fid,
                             std::shared_ptr<const DecodeResult> answer,
                             bool hit) {
  Flight* f = table_.Find(key, fid);
  if (f == nullptr) return;
  if (hit) answerer_.CountHit();
  Summarise(f, true, answer->source == Source::kCache ? "done (fleet cache)"
                                                       : "done (fleet)",
            f->waiters.size());
  StopFlightWork(f);
  auto waiters = table_.Erase(f);
  for (auto& [id, w] : waiters) answerer_.Done(w, answer);
}

void Engine::RelayRetrying(const coalesce::FlightKey& key, uint64_t fid,
                           const Retrying& retrying) {
  Flight* f = table_.Find(key, fid);
  if (f == nullptr) return;
  f->state.last_retrying = retrying;
  for (auto& [id, w] : f->waiters) answerer_.Retry(w, retrying);
}

void Engine::RelayFailed(const coalesce::FlightKey& key, uint64_t fid,
                         const Failure& failure) {
  Flight* f = table_.Find(key, fid);
  if (f == nullptr) return;
  f->state.attempts = failure.attempts;
  FailFlight(f, failure);
}

void Engine::Remember(const coalesce::FlightKey& key,
                      std::shared_ptr<const DecodeResult> answer) {
  cache_.InsertAnswer(key, std::move(answer), clock_->Now());
}

void Engine::BreakerElsewhere(const FleetEvent& event) {
  // Whoever published it, a cool-down is never longer than this replica's
  // own longest (DESIGN rule 19; the fleet backend cuts it already).
  FleetEvent e = event;
  e.breaker.cooldown = std::clamp(e.breaker.cooldown, absl::ZeroDuration(),
                                  options_.breaker.cooldown_max);
  attempts_.breaker().FromFleet(e);
}

}  // namespace engine
