// One flight of the engine's table (DESIGN rule 5), beside its waiters: its
// phase (flight_phase.h) and what it knows, grouped by when it is set.
//
// Not thread-safe: owned by the engine's loop thread.
#ifndef VIN_ENGINE_FLIGHT_STATE_H_
#define VIN_ENGINE_FLIGHT_STATE_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "coalesce/flight_table.h"
#include "domain/priority.h"
#include "engine/flight_phase.h"
#include "engine_api/types.h"
#include "upstream/upstream_gate.h"
#include "vpic/vehicle.h"

namespace engine {

struct FlightState {
  FlightPhase phase;

  // Set when the flight is made, from its first waiter.
  std::vector<vpic::Note> warnings;  // local validation notes
  absl::Time started;
  // The waiter that created the flight. While the fleet decides who decodes
  // it, its QUEUED waits for that answer (coalesced or not), with its
  // stagger request.
  coalesce::WaiterId creator = 0;
  bool stagger = false;
  // Rule 17: the most urgent priority among its waiters, and the tenant it
  // counts for (the first waiter's of that priority).
  domain::Priority priority = domain::Priority::kInteractive;
  std::string tenant{domain::kDefaultTenant};

  // Kept across its attempts.
  int attempts = 0;
  absl::Duration prev_delay;  // the jitter's `prev`
  // Its place at the gate, which its retries keep (0 before its first).
  upstream::UpstreamGate::Seq place = 0;
  absl::optional<Retrying> last_retrying;

  // `failure` with what it leaves unset filled in from the flight: the
  // attempts made (when 0) and the last upstream error (when none).
  Failure WithHistory(Failure failure) const {
    if (failure.attempts == 0) failure.attempts = attempts;
    if (!failure.last_error && last_retrying) {
      failure.last_error = last_retrying->error;
    }
    return failure;
  }
};

}  // namespace engine

#endif  // VIN_ENGINE_FLIGHT_STATE_H_
