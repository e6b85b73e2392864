// The fleet's part in a flight (DESIGN "Beyond one machine", README "Running
// a fleet"): a new flight first asks the fleet for a finished decode and for
// the flight's lease. The replica that gets the lease decodes, renews the
// lease while the flight lives, and tells the others how it went (RETRYING,
// then DONE, FAILED, or ABANDONED when its callers all left); the others
// relay those events to their own waiters, and try to take the lease over
// from time to time, so that a replica that dies leaves no waiter behind.
// Whenever the fleet does not answer in time, a flight goes on alone: a lost
// lease costs one duplicate request, never a wrong answer or a failed decode.
//
// The coordinator owns each flight's fleet role and lease timer; the engine
// owns the flights and their waiters, and hears what the fleet decided
// through FleetCoordinator::Flights. Without a fleet, LocalFleet() decides
// nothing: every flight decodes here. Loop thread only; the Flights callbacks
// run on it, never inside the call that caused them.
#ifndef VIN_ENGINE_FLEET_COORDINATOR_H_
#define VIN_ENGINE_FLEET_COORDINATOR_H_

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "engine_api/fleet_backend.h"
#include "engine_api/types.h"
#include "retry/scheduler.h"

namespace engine {

class FleetCoordinator {
 public:
  using Key = coalesce::FlightKey;

  // What the fleet decided for a flight, told to its engine. `fid` tells a
  // flight from a later one of the same key; a callback for a flight that
  // is gone is to be ignored.
  class Flights {
   public:
    virtual ~Flights() = default;
    // This replica decodes it. `first`: the answer to the flight's own claim
    // (its creator's QUEUED is still owed, and it is a cache miss); else it
    // is taken over from a replica that stopped renewing its lease.
    virtual void DecodeHere(const Key& key, uint64_t fid, bool first) = 0;
    // Another replica decodes it: the answer to the flight's own claim (a
    // cache miss; its creator is told QUEUED, coalesced with a flight
    // elsewhere). Later looks that find it still taken are not told.
    virtual void DecodedElsewhere(const Key& key, uint64_t fid) = 0;
    // The flight ends with an answer another replica made: a shared-cache
    // hit, or the owner's DONE. `hit`: counted as a cache hit.
    virtual void AnswerFromFleet(const Key& key, uint64_t fid,
                                 std::shared_ptr<const DecodeResult> answer,
                                 bool hit) = 0;
    // The owner's RETRYING, for this replica's waiters.
    virtual void RelayRetrying(const Key& key, uint64_t fid,
                               const Retrying& retrying) = 0;
    // The owner's FAILED: the flight fails here too.
    virtual void RelayFailed(const Key& key, uint64_t fid,
                             const Failure& failure) = 0;
    // Another replica's finished decode, to keep in this replica's cache
    // (whether or not a flight of it is here).
    virtual void Remember(const Key& key,
                          std::shared_ptr<const DecodeResult> answer) = 0;
    // Another replica's breaker opened or closed (rule 13: the breaker is
    // the fleet's).
    virtual void BreakerElsewhere(const FleetEvent& event) = 0;
  };

  virtual ~FleetCoordinator() = default;

  // A new flight. True: the fleet decides who decodes it, and says so later
  // through Flights (DecodeHere, DecodedElsewhere or AnswerFromFleet);
  // false: it decodes here, now.
  virtual bool Start(const Key& key, uint64_t fid) = 0;
  // The flight decoding here is retrying.
  virtual void RetryScheduled(const Key& key, uint64_t fid,
                              const Retrying& retrying) = 0;
  // The flight ends here with `result` (`cache_answer`: the same as the
  // cache answers it). Shared with the fleet also by a flight that went on
  // alone.
  virtual void Done(const Key& key, uint64_t fid, const DecodeResult& result,
                    const std::shared_ptr<const DecodeResult>& cache_answer) = 0;
  // The flight fails here (SHUTTING_DOWN or CANCELLED: this replica stops,
  // and another one may take the flight over).
  virtual void Failed(const Key& key, uint64_t fid, const Failure& failure) = 0;
  // Its callers here all left.
  virtual void Abandoned(const Key& key, uint64_t fid) = 0;
};

// No fleet: Start() is always false, and the rest does nothing.
std::unique_ptr<FleetCoordinator> LocalFleet();

struct SharedFleetOptions {
  FleetBackend* backend = nullptr;  // attached to the loop; not owned
  // A flight's lease: renewed every third of it by its owner; the other
  // replicas look again every half of it.
  absl::Duration lease = absl::Seconds(5);
  absl::Duration cache_ttl = absl::Hours(24);  // of results stored
  absl::Duration reference_ttl = absl::Hours(24);  // of reference answers
};
// Over a fleet backend, on `scheduler`'s loop. Subscribes to the backend's
// events. `flights` and `scheduler` are not owned and outlive it.
std::unique_ptr<FleetCoordinator> SharedFleet(SharedFleetOptions options,
                                              FleetCoordinator::Flights* flights,
                                              retry::Scheduler* scheduler);

}  // namespace engine

#endif  // VIN_ENGINE_FLEET_COORDINATOR_H_
