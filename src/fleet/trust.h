// What a replica believes of what it reads from Redis (DESIGN rule 19:
// bytes from Redis are checked like bytes from disk). Anyone who can reach
// Redis can write to it, so a cached result is answered only when it
// parses as a result, names the VIN of its key (and, sealed, was written
// for that very key; unsealed, has no model year contradicting the key's
// hint), is younger than --cache_ttl, and, with the fleet's secret, is
// signed for its key (fleet/seal.h). An event is acted on only when it
// parses (a DONE's results too, naming the key's VIN) and, with the
// secret, is signed for the channel, fresh (issued within
// kEventMaxSkew of this replica's clock) and not seen before; its
// durations and counts are then cut to this replica's limits
// (fleet/event_bounds.h). What fails is named by a Rejection: the label
// of vin_fleet_rejected_total{what}.
//
// CheckCachedResult is a pure function. EventChecks keeps the MACs of the
// events it accepted lately (to refuse them replayed): one owner, the
// fleet's loop.
#ifndef VIN_FLEET_TRUST_H_
#define VIN_FLEET_TRUST_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine_api/fleet_backend.h"
#include "fleet/event_bounds.h"
#include "fleet/seal.h"

namespace fleet {

enum class Rejection {
  kResultUnparsable,    // not a result (or larger than kMaxValueBytes)
  kResultWrongVin,      // a result of another VIN
  kResultWrongKey,      // sealed for another key, or of another model year
  kResultExpired,       // decoded longer ago than --cache_ttl
  kResultFuture,        // decoded later than now (beyond kEventMaxSkew)
  kResultUnsigned,      // with the secret: no MAC
  kResultBadSignature,  // with the secret: a MAC that does not match
  kEventUnparsable,     // not a FleetEvent this replica can act on
  kEventWrongVin,       // a DONE whose result is of another VIN
  kEventWrongChannel,   // sealed for another channel
  kEventUnsigned,
  kEventBadSignature,
  // With the secret: issued too long ago, or in the future; a DONE whose
  // result is decoded in the future (beyond kEventMaxSkew).
  kEventStale,
  kEventReplayed,  // with the secret: an event accepted before, again
};
inline constexpr size_t kRejections = 14;

// The label value: "result_unparsable", "event_bad_signature", ...
const char* RejectionName(Rejection r);
bool IsEventRejection(Rejection r);

// The largest value (a cached result, an event) a replica reads.
inline constexpr size_t kMaxValueBytes = size_t{1} << 20;
// A signed event issued further than this from this replica's clock (either
// way) is stale; its MAC is remembered for twice as long.
inline constexpr absl::Duration kEventMaxSkew = absl::Seconds(30);

// A result from its bytes (the server's decoder; engine::ResultDecoder's
// contract): false when they do not parse.
using ResultReader =
    std::function<bool(const std::string&, engine::DecodeResult*)>;

struct Trust {
  std::shared_ptr<const FleetSecret> secret;  // null: values are unsigned
  ResultReader read_result;                   // required
  FleetLimits limits;
};

// A value believed (`value`), or why not.
template <typename T>
struct Verdict {
  absl::optional<T> value;
  Rejection rejected = Rejection::kResultUnparsable;  // without a value
  std::string why;                                    // without a value
};

// The cached result `stored`, read at `redis_key` for the flight
// `fleet_key` ("VIN|YEAR") at `now` (wall clock): its bytes without the
// seal, or why they are not believed.
Verdict<std::string> CheckCachedResult(const std::string& stored,
                                       const std::string& redis_key,
                                       const std::string& fleet_key,
                                       absl::Time now, const Trust& trust);

class EventChecks {
 public:
  explicit EventChecks(const Trust* trust) : trust_(trust) {}  // not owned

  // The event `message` of `channel`, received at `now` (wall clock),
  // checked and clamped; or why it is not believed.
  Verdict<engine::FleetEvent> Check(const std::string& message,
                                    const std::string& channel, absl::Time now);

 private:
  // With the secret: the seal is signed for `channel`, fresh and new
  // (then remembered): OK, else why not.
  Verdict<bool> CheckSigned(const Opened& opened, const std::string& channel,
                            absl::Time now);

  const Trust* const trust_;
  // MACs of the signed events accepted within 2 x kEventMaxSkew, oldest
  // first, and the same as a set.
  std::deque<std::pair<absl::Time, std::string>> seen_order_;
  absl::flat_hash_set<std::string> seen_;
};

}  // namespace fleet

#endif  // VIN_FLEET_TRUST_H_
