// Deadlines are per waiter (docs/DESIGN.md "Details callers rely on"): the
// one rule "a waiter leaves when its deadline comes before its flight's next
// start", with the margins that move a deadline earlier and the failures a
// leaving waiter is told. Pure functions: the engine applies them at the
// five moments a flight's next start moves (a waiter joins, attempts begin,
// the flight queues at the gate, a retry is scheduled, a pushback delays
// the queue) and when a waiter's deadline timer fires.
#ifndef VIN_ENGINE_WAITER_DEADLINES_H_
#define VIN_ENGINE_WAITER_DEADLINES_H_

#include <vector>

#include "absl/time/time.h"
#include "coalesce/flight_table.h"
#include "engine_api/types.h"
#include "upstream/upstream_budget.h"
#include "vpic/classify.h"

namespace engine {

// A LIVE_THEN_SNAPSHOT waiter with a deadline leaves the live path this
// long before it (EngineOptions::snapshot_fallback_margin's default), so
// that the snapshot's answer still arrives in time.
inline constexpr absl::Duration kSnapshotFallbackMargin =
    absl::Milliseconds(100);
// A DecodeBatch item stops this long (or a tenth of the time left, when
// shorter) before its stream's deadline, so that its terminal event is
// written before gRPC ends the stream at the deadline, where it would be
// lost.
inline constexpr absl::Duration kItemDeadlineMargin = absl::Milliseconds(100);

// When a waiter leaves the live path: at its deadline, or `margin` before
// it when it may fall back to the snapshot.
absl::Time LeaveLivePathAt(SourcePreference source, absl::Time deadline,
                           absl::Time now, absl::Duration margin);

// The time a DecodeBatch item may take, from the time `left` until its
// stream's deadline (InfiniteDuration: none).
absl::Duration ItemTimeout(absl::Duration left);

// The waiters (a WaiterId -> waiter map whose waiters have a `deadline`)
// that must leave now because their deadline falls before `start`, when
// their flight's next upstream request is expected: they would only sleep
// into their deadline.
template <typename Waiters>
std::vector<coalesce::WaiterId> MustLeaveBefore(const Waiters& waiters,
                                                absl::Time start) {
  std::vector<coalesce::WaiterId> leaving;
  for (const auto& [id, w] : waiters) {
    if (w.deadline < start) leaving.push_back(id);
  }
  return leaving;
}

// What a waiter that leaves is told: UNAVAILABLE-like, retryable, with the
// wait it would have had as the suggested delay, naming what it waited for.
// Its flight waits `wait` for a retry after `last_error`:
Failure RetryWaitFailure(int attempts, const vpic::UpstreamError& last_error,
                         absl::Duration wait);
// Its flight waits `wait` for its turn at the upstream gate, held by
// `budget` (a pushback pause, or the rate cap) or by the concurrency limit:
Failure GateWaitFailure(int attempts, absl::Duration wait,
                        const upstream::UpstreamBudget& budget,
                        absl::Time now);
// Its deadline came while its flight's request was in progress:
Failure DeadlinePassedFailure();
// Its deadline had passed when its request reached the engine:
Failure DeadlinePassedBeforeStartFailure();

}  // namespace engine

#endif  // VIN_ENGINE_WAITER_DEADLINES_H_
