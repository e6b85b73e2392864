// Which decoders may answer a request (the source preference): the server's
// default, the snapshot as a labelled fallback once the live path has
// failed for good (the margin a fallback needs before a deadline is in
// waiter_deadlines.h). Pure functions, and the building of a snapshot answer.
#ifndef VIN_ENGINE_SOURCE_POLICY_H_
#define VIN_ENGINE_SOURCE_POLICY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "engine/result_cache.h"
#include "engine_api/types.h"
#include "snapshot/snapshot.h"

namespace engine {

// The preference a request gets: its own, else the server's default, else
// LIVE_THEN_SNAPSHOT while a snapshot is loaded and LIVE_ONLY otherwise.
SourcePreference ResolveSource(SourcePreference requested,
                               SourcePreference server_default,
                               bool snapshot_loaded);

// Whether a waiter whose live decode ended with `reason` is answered from
// the snapshot instead: LIVE_THEN_SNAPSHOT, and the live path failed for
// good (upstream unavailable or rejecting, or the deadline near); never on
// cancellation or shutdown.
bool SnapshotAnswersAfter(SourcePreference source, FailureReason reason);

// Whether a waiter whose live decode ended with `reason` is answered from a
// stale cache entry, when there is one (rule 15): LIVE_ONLY or
// LIVE_THEN_SNAPSHOT (it is a real vPIC answer, so before the snapshot),
// and the live path failed for good (vPIC unavailable: the breaker, retries
// exhausted or refused, a token after the deadline; or the deadline). Not
// after a rejection (vPIC answered), a cancellation or shutdown.
bool StaleAnswersAfter(SourcePreference source, FailureReason reason);

// A stale cache answer `age` old standing in for a live decode that failed
// with `failure`: source CACHE, its original decode_time, the attempts the
// live path made, and a `stale` note with its age and the reason (and
// kUnreachableNote when the breaker was open). With an
// encoder, re-encoded (the bytes read back with `decoder` when the answer
// is only bytes); null when those bytes do not read back.
std::shared_ptr<const DecodeResult> StaleAnswer(
    const DecodeResult& cached, absl::Duration age, const Failure& failure,
    const ResultEncoder& encoder, const ResultDecoder& decoder);

// The snapshot's answer for `key` (source SNAPSHOT, a `live_failure` note
// when it stands in for `live_failure`, a failed live decode), or nullptr
// when the snapshot cannot decode the VIN. `wall_now` gives the answer's
// decode_time and the reference year of the model-year rules.
std::shared_ptr<const DecodeResult> SnapshotAnswer(
    const snapshot::Snapshot& snap, const coalesce::FlightKey& key,
    const std::vector<vpic::Note>& warnings, const Failure* live_failure,
    absl::Time wall_now, const ResultEncoder& encoder, bool explain = false);

}  // namespace engine

#endif  // VIN_ENGINE_SOURCE_POLICY_H_
