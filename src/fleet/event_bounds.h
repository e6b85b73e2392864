// The bounds of what another replica may tell this one (DESIGN rule 19:
// durations from Redis are clamped to the flags): an event's durations,
// counts and texts beyond this replica's own limits are cut to them, so
// that a forged or confused event can delay callers no longer than this
// replica would itself. And the syntax of a flight's fleet key.
//
// Pure functions: any thread.
#ifndef VIN_FLEET_EVENT_BOUNDS_H_
#define VIN_FLEET_EVENT_BOUNDS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine_api/fleet_backend.h"

namespace fleet {

struct FleetLimits {
  // A breaker event's cool-down (--breaker_cooldown_max).
  absl::Duration breaker_cooldown_max = absl::Minutes(2);
  // A pushback's pause in the shared budget (--retry_after_max).
  absl::Duration pause_max = absl::Seconds(60);
  // A RETRYING event's next delay and a FAILED event's suggested wait: the
  // longest this replica itself would tell (the largest of --retry_cap,
  // --retry_after_max and --breaker_cooldown_max).
  absl::Duration delay_max = absl::Minutes(2);
  // How long another replica may hold the breaker's probe (the longest of
  // --breaker_cooldown_max and 2 x --attempt_timeout + 1 s).
  absl::Duration probe_hold_max = absl::Minutes(2);
  // A cached result older than this (--cache_ttl) is not answered.
  absl::Duration cache_ttl = absl::Hours(24);
  // Nor a reference answer older than this (--reference_ttl).
  absl::Duration reference_ttl = absl::Hours(24);
};

// Attempts an event may report; more is cut to this.
inline constexpr int kMaxReportedAttempts = 1000;
// An event's texts (messages, error kinds, the origin), in bytes.
inline constexpr size_t kMaxEventTextBytes = 1024;

// Cuts `e`'s durations to `limits` (negative ones to zero), its counts to
// [0, kMaxReportedAttempts], its texts to kMaxEventTextBytes (on a UTF-8
// boundary), and a breaker's "unreachable since" to [now - 1 day, now]
// (`now`: this replica's wall clock). Returns whether anything was cut.
bool ClampEvent(const FleetLimits& limits, absl::Time now,
                engine::FleetEvent* e);

// `d` within [0, max].
absl::Duration ClampDuration(absl::Duration d, absl::Duration max);

// A flight's fleet key, "VIN|YEAR" or "vpic:REQUEST" (engine::FleetKey),
// taken apart.
struct FleetKeyParts {
  std::string vin;
  int model_year = 0;
  std::string reference;  // a reference request (rule 18); "" for a VIN
};
// A reference request's key, in bytes: the gateway's are far shorter (each
// argument at most 100 bytes before percent-encoding).
inline constexpr size_t kMaxReferenceKeyBytes = 4096;
// INVALID_ARGUMENT unless the VIN is 17 of 0-9 and A-Z but I, O, Q (or a
// partial VIN) and the year 0 or a model year (domain/limits.h); or, after
// "vpic:", a request of at most kMaxReferenceKeyBytes printable ASCII
// characters without spaces, starting with a letter (an endpoint's name).
absl::StatusOr<FleetKeyParts> ParseFleetKey(absl::string_view key);

}  // namespace fleet

#endif  // VIN_FLEET_EVENT_BOUNDS_H_
