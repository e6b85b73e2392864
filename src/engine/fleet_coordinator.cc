#include "engine/fleet_coordinator.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/types/optional.h"

namespace engine {
namespace {

using Key = FleetCoordinator::Key;

class Local final : public FleetCoordinator {
 public:
  bool Start(const Key&, uint64_t) override { return false; }
  void RetryScheduled(const Key&, uint64_t, const Retrying&) override {}
  void Done(const Key&, uint64_t, const DecodeResult&,
            const std::shared_ptr<const DecodeResult>&) override {}
  void Failed(const Key&, uint64_t, const Failure&) override {}
  void Abandoned(const Key&, uint64_t) override {}
};

// Another replica's decode (a reference request's document) as this one's
// cache answers it.
std::shared_ptr<DecodeResult> CacheAnswer(
    const Key& key, std::shared_ptr<const std::string> bytes) {
  auto answer = std::make_shared<DecodeResult>();
  answer->source = Source::kCache;
  if (key.is_reference()) {
    answer->document = std::move(bytes);
  } else {
    answer->vin = key.vin;
    answer->encoded = std::move(bytes);
  }
  return answer;
}

// The bytes of a result the fleet shares: its encoding, or its document.
const std::shared_ptr<const std::string>& SharedBytes(const DecodeResult& r) {
  return r.document != nullptr ? r.document : r.encoded;
}

absl::optional<Key> ParseFleetKey(const std::string& key) {
  Key out;
  absl::string_view rest = key;
  if (absl::ConsumePrefix(&rest, kFleetReferencePrefix)) {
    if (rest.empty()) return absl::nullopt;
    out.reference = std::string(rest);
    return out;
  }
  std::pair<std::string, std::string> parts =
      absl::StrSplit(key, absl::MaxSplits('|', 1));
  out.vin = parts.first;
  if (!absl::SimpleAtoi(parts.second, &out.model_year)) return absl::nullopt;
  return out;
}

class Shared final : public FleetCoordinator {
 public:
  Shared(SharedFleetOptions options, Flights* flights,
         retry::Scheduler* scheduler)
      : options_(std::move(options)),
        fleet_(options_.backend),
        flights_(flights),
        scheduler_(scheduler) {
    fleet_->OnEvent([this](FleetEvent e) { OnEvent(e); });
  }

  ~Shared() override {
    for (auto& [key, e] : entries_) scheduler_->Cancel(e.timer);
  }

  bool Start(const Key& key, uint64_t fid) override {
    // Every flight is known, also one that goes on alone while the fleet is
    // down: another replica's DONE ends it too.
    Entry& e = entries_[key];
    scheduler_->Cancel(e.timer);
    e = Entry{fid, Role::kLocal, 0};
    if (!fleet_->up()) return false;
    // The fleet's cache, then its lease, decide who decodes.
    e.role = Role::kClaiming;
    Claim(key, fid);
    return true;
  }

  void RetryScheduled(const Key& key, uint64_t fid,
                      const Retrying& retrying) override {
    const Entry* e = Find(key, fid);
    if (e == nullptr || e->role != Role::kOwner) return;
    FleetEvent event = EventOf(key, FleetEvent::Kind::kRetrying);
    event.retrying = retrying;
    fleet_->Publish(event);
  }

  void Done(const Key& key, uint64_t fid, const DecodeResult& result,
            const std::shared_ptr<const DecodeResult>& cache_answer) override {
    const Role role = Forget(key, fid);
    const std::string fleet_key = FleetKey(key);
    // Also a flight that went on alone shares what it found.
    if (SharedBytes(result) != nullptr && cache_answer != nullptr &&
        SharedBytes(*cache_answer) != nullptr) {
      fleet_->StoreResult(
          fleet_key, *SharedBytes(*cache_answer),
          key.is_reference() ? options_.reference_ttl : options_.cache_ttl);
      FleetEvent e = EventOf(key, FleetEvent::Kind::kDone);
      e.encoded = SharedBytes(result);
      e.cached = SharedBytes(*cache_answer);
      e.source = result.source;
      e.attempts = result.attempts;
      fleet_->Publish(e);
    }
    if (role == Role::kOwner) fleet_->ReleaseLease(fleet_key, Token(fid));
  }

  void Failed(const Key& key, uint64_t fid, const Failure& failure) override {
    if (failure.reason == FailureReason::kShuttingDown ||
        failure.reason == FailureReason::kCancelled) {
      // This replica stops; another one may take the flight over.
      Abandoned(key, fid);
      return;
    }
    if (Forget(key, fid) != Role::kOwner) return;
    FleetEvent e = EventOf(key, FleetEvent::Kind::kFailed);
    e.failure = failure;
    fleet_->Publish(e);
    fleet_->ReleaseLease(e.key, Token(fid));
  }

  void Abandoned(const Key& key, uint64_t fid) override {
    if (Forget(key, fid) != Role::kOwner) return;
    const FleetEvent e = EventOf(key, FleetEvent::Kind::kAbandoned);
    // Released first, so that the replica the event wakes finds it free.
    fleet_->ReleaseLease(e.key, Token(fid));
    fleet_->Publish(e);
  }

 private:
  // A flight's place in the fleet.
  enum class Role {
    kLocal,     // this replica decodes it alone (the fleet was down)
    kClaiming,  // asking the fleet for its cached result or its lease
    kOwner,     // this replica holds the lease: it asks vPIC
    kRemote,    // another replica does: its events are relayed
  };
  struct Entry {
    uint64_t fid = 0;
    Role role = Role::kLocal;
    retry::Scheduler::TimerId timer = 0;  // renewal, or the next look
  };

  Entry* Find(const Key& key, uint64_t fid) {
    auto it = entries_.find(key);
    return it != entries_.end() && it->second.fid == fid ? &it->second : nullptr;
  }

  // The flight is over here: its timer stops. Returns the role it had
  // (kLocal when unknown).
  Role Forget(const Key& key, uint64_t fid) {
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.fid != fid) return Role::kLocal;
    const Role role = it->second.role;
    scheduler_->Cancel(it->second.timer);
    entries_.erase(it);
    return role;
  }

  std::string Token(uint64_t fid) const {
    return absl::StrCat(fleet_->replica(), ":", fid);
  }

  FleetEvent EventOf(const Key& key, FleetEvent::Kind kind) const {
    FleetEvent e;
    e.kind = kind;
    e.key = FleetKey(key);
    e.origin = fleet_->replica();
    return e;
  }

  void Claim(const Key& key, uint64_t fid) {
    fleet_->ClaimFlight(FleetKey(key), Token(fid), options_.lease,
                        [this, key, fid](FleetBackend::Claim claim) {
                          OnClaim(key, fid, std::move(claim));
                        });
  }

  void OnClaim(const Key& key, uint64_t fid, FleetBackend::Claim claim) {
    using Kind = FleetBackend::Claim::Kind;
    Entry* e = Find(key, fid);
    if (e == nullptr ||
        (e->role != Role::kClaiming && e->role != Role::kRemote)) {
      // Its callers left meanwhile: a lease it got goes back at once.
      if (claim.kind == Kind::kOwner) {
        fleet_->ReleaseLease(FleetKey(key), Token(fid));
      }
      return;
    }
    const bool first = e->role == Role::kClaiming;
    switch (claim.kind) {
      case Kind::kCached: {
        Forget(key, fid);
        auto answer = CacheAnswer(key, std::move(claim.cached));
        flights_->Remember(key, answer);
        flights_->AnswerFromFleet(key, fid, std::move(answer), first);
        return;
      }
      case Kind::kTaken:
        e->role = Role::kRemote;
        ScheduleTimer(key, e);
        if (first) flights_->DecodedElsewhere(key, fid);
        return;
      case Kind::kOwner:
      case Kind::kUnavailable:
        e->role = claim.kind == Kind::kOwner ? Role::kOwner : Role::kLocal;
        if (e->role == Role::kOwner) ScheduleTimer(key, e);
        flights_->DecodeHere(key, fid, first);
        return;
    }
  }

  void ScheduleTimer(const Key& key, Entry* e) {
    const bool owner = e->role == Role::kOwner;
    const absl::Duration every = options_.lease / (owner ? 3 : 2);
    const uint64_t fid = e->fid;
    e->timer = scheduler_->ScheduleAfter(every, [this, key, fid] {
      Entry* g = Find(key, fid);
      if (g == nullptr) return;
      g->timer = 0;
      if (g->role == Role::kOwner) {
        fleet_->RenewLease(FleetKey(key), Token(fid), options_.lease);
        ScheduleTimer(key, g);
      } else if (g->role == Role::kRemote) {
        Claim(key, fid);  // its answer schedules the next look
      }
    });
  }

  void OnEvent(const FleetEvent& event) {
    if (event.kind == FleetEvent::Kind::kBreakerOpened ||
        event.kind == FleetEvent::Kind::kBreakerClosed) {
      flights_->BreakerElsewhere(event);
      return;
    }
    const absl::optional<Key> key = ParseFleetKey(event.key);
    if (!key) return;
    std::shared_ptr<DecodeResult> cached;
    if (event.kind == FleetEvent::Kind::kDone) {
      // Every replica keeps the fleet's decodes in its own cache too, so
      // that repeats are answered without a trip to Redis.
      cached = CacheAnswer(*key, event.cached);
      flights_->Remember(*key, cached);
    }
    auto it = entries_.find(*key);
    if (it == entries_.end()) return;
    const uint64_t fid = it->second.fid;
    const Role role = it->second.role;
    switch (event.kind) {
      case FleetEvent::Kind::kDone: {
        // Whoever decoded it, the flight here is over. A flight still asking
        // the fleet was started after that decode ended, as far as its
        // callers can tell: it gets the cache answer the claim would have.
        Forget(*key, fid);
        if (role == Role::kOwner) {
          fleet_->ReleaseLease(event.key, Token(fid));
        }
        if (role == Role::kClaiming) {
          flights_->AnswerFromFleet(*key, fid, std::move(cached), true);
          return;
        }
        auto answer = CacheAnswer(*key, event.encoded);
        answer->source = event.source;
        answer->attempts = event.attempts;
        flights_->AnswerFromFleet(*key, fid, std::move(answer), false);
        return;
      }
      case FleetEvent::Kind::kRetrying:
        if (role != Role::kRemote) return;
        flights_->RelayRetrying(*key, fid, event.retrying);
        return;
      case FleetEvent::Kind::kFailed:
        if (role != Role::kRemote) return;
        Forget(*key, fid);
        flights_->RelayFailed(*key, fid, event.failure);
        return;
      case FleetEvent::Kind::kAbandoned:
        if (role != Role::kRemote) return;
        scheduler_->Cancel(it->second.timer);
        it->second.timer = 0;
        Claim(*key, fid);
        return;
      case FleetEvent::Kind::kBreakerOpened:
      case FleetEvent::Kind::kBreakerClosed:
        return;  // (above)
    }
  }

  const SharedFleetOptions options_;
  FleetBackend* const fleet_;
  Flights* const flights_;
  retry::Scheduler* const scheduler_;
  absl::flat_hash_map<Key, Entry> entries_;
};

}  // namespace

std::unique_ptr<FleetCoordinator> LocalFleet() {
  return std::make_unique<Local>();
}

std::unique_ptr<FleetCoordinator> SharedFleet(SharedFleetOptions options,
                                              FleetCoordinator::Flights* flights,
                                              retry::Scheduler* scheduler) {
  return std::make_unique<Shared>(std::move(options), flights, scheduler);
}

}  // namespace engine
