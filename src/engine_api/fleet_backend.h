// What the replicas of a fleet share (DESIGN "Beyond one machine"), as the
// engine sees it: the cache of finished decodes, one flight per VIN (a
// lease, and the owner's events for the other replicas' waiters); the same
// for vPIC's reference requests (rule 18), whose result bytes are vPIC's
// JSON document. The
// engine works without one; fleet::RedisFleet is the implementation.
//
// The engine attaches it to its loop first; from then on every call is made
// on the loop's thread and never blocks, and every callback runs there, in a
// later turn of the loop (never inside the call that gave it). The engine
// detaches it, on the loop, before the loop goes.
#ifndef VIN_ENGINE_API_FLEET_BACKEND_H_
#define VIN_ENGINE_API_FLEET_BACKEND_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "domain/decode_key.h"
#include "engine_api/types.h"
#include "loop/event_loop.h"
#include "upstream/upstream_budget.h"
#include "vpic/reference.h"

namespace engine {

// An event of a flight, from the replica that owns it to the others; or of
// the circuit breaker, from the replica whose breaker moved (rule 13).
struct FleetEvent {
  enum class Kind {
    kDone,       // `encoded` holds the result as its owner's callers got it
    kRetrying,   // `retrying`
    kFailed,     // `failure`
    kAbandoned,  // the owner's callers all left: another replica may take it
    kBreakerOpened,  // `breaker`: every replica's breaker opens
    kBreakerClosed,  // vPIC answered the probe: every replica's closes
  };
  // The breaker as the replica that opened it saw it.
  struct Breaker {
    absl::Time unreachable_since = absl::InfinitePast();  // wall clock
    absl::Duration cooldown;  // before anyone may probe, from the event on
    vpic::UpstreamError last_error;
  };
  Kind kind = Kind::kDone;
  std::string key;     // FleetKey(); empty for the breaker's kinds
  std::string origin;  // the publishing replica
  std::shared_ptr<const std::string> encoded;
  // kDone: the result as a cache answer (source CACHE, attempts 0), the
  // bytes the shared cache holds. For a reference request both are its
  // document.
  std::shared_ptr<const std::string> cached;
  Source source = Source::kVpic;
  int attempts = 0;
  Retrying retrying;
  Failure failure;
  Breaker breaker;
};

// The fleet-wide name of a flight's key: "VIN|YEAR" for a decode,
// "vpic:" and the request for a reference request (rule 18).
inline std::string FleetKey(const std::string& vin, int model_year) {
  return absl::StrCat(vin, "|", model_year);
}
inline constexpr absl::string_view kFleetReferencePrefix = "vpic:";
inline std::string FleetKey(const domain::DecodeKey& key) {
  return key.is_reference() ? absl::StrCat(kFleetReferencePrefix, key.reference)
                            : FleetKey(key.vin, key.model_year);
}

// Whether `bytes` read from outside (another replica, Redis) are a
// reference answer: vPIC's JSON document (vpic::CheckReferenceDocument).
inline bool IsReferenceDocument(absl::string_view bytes) {
  return vpic::CheckReferenceDocument(bytes).ok();
}

class FleetBackend {
 public:
  struct Claim {
    enum class Kind {
      kCached,       // a replica decoded it: `cached` is the cache answer
      kOwner,        // this replica holds the lease: it asks vPIC
      kTaken,        // another replica holds it: wait for its events
      kUnavailable,  // Redis did not answer: go on alone
    };
    Kind kind = Kind::kUnavailable;
    std::shared_ptr<const std::string> cached;
  };

  virtual ~FleetBackend() = default;

  // Binds the backend to `loop` (not owned): its I/O and timers become the
  // loop's. Once, before any other call.
  virtual void Attach(loop::EventLoop* loop) = 0;
  // Lets go of the loop: what is still waiting fails now, inside the call;
  // nothing runs on the loop afterwards.
  virtual void Detach() = 0;

  // The shared cache's answer for `key`, else the lease (taken with `token`
  // for `lease`) if it is free or already ours, else that it is taken.
  virtual void ClaimFlight(const std::string& key, const std::string& token,
                           absl::Duration lease,
                           std::function<void(Claim)> done) = 0;
  virtual void RenewLease(const std::string& key, const std::string& token,
                          absl::Duration lease) = 0;
  virtual void ReleaseLease(const std::string& key,
                            const std::string& token) = 0;
  // Stores a finished decode (its cache answer's bytes, a reference
  // request's document) for `ttl`.
  virtual void StoreResult(const std::string& key, std::string cached,
                           absl::Duration ttl) = 0;
  virtual void Publish(const FleetEvent& event) = 0;

  // The breaker's probe (rule 13): one for the whole fleet, a lease named
  // after this replica. `hold`: how long it lasts unless released.
  struct ProbeClaim {
    enum class Kind {
      kMine,         // free, or this replica's already: it probes
      kTaken,        // another replica's, for `wait` more
      kUnavailable,  // Redis did not answer: the replica decides alone
    };
    Kind kind = Kind::kUnavailable;
    absl::Duration wait;
  };
  virtual void ClaimProbe(absl::Duration hold,
                          std::function<void(ProbeClaim)> done) = 0;
  // Keeps the probe this replica's for `hold` from now, whoever held it: its
  // probe failed, and nobody may probe again before the new cool-down ends.
  virtual void HoldProbe(absl::Duration hold) = 0;
  // Lets go of the probe if it is this replica's.
  virtual void ReleaseProbe() = 0;
  // Where other replicas' events go (set once, before any is published).
  virtual void OnEvent(std::function<void(FleetEvent)> handler) = 0;
  // This replica's name, to tell its own events from the others'.
  virtual const std::string& replica() const = 0;
  virtual bool up() const = 0;

  // The fleet's shared upstream budget (rules 9 and 10 across replicas),
  // on the loop the backend is attached to. `now` is the engine's monotonic
  // clock.
  virtual std::unique_ptr<upstream::UpstreamBudget> MakeBudget(
      const upstream::BudgetOptions& options,
      std::function<absl::Time()> now) = 0;
};

}  // namespace engine

#endif  // VIN_ENGINE_API_FLEET_BACKEND_H_
