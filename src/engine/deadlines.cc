// Deadlines of Engine's waiters, on its loop thread: the rule of
// waiter_deadlines.h applied to flights. Each waiter leaves its flight at
// its deadline (a margin earlier when it may fall back to the snapshot), or
// at once when its flight's next start, a retry wake-up or its turn at the
// upstream gate, would come after it.
#include <utility>

#include "engine/engine.h"
#include "engine/waiter_deadlines.h"

namespace engine {

void Engine::WatchDeadline(WaiterId id, Waiter* w, absl::Time leave_at) {
  w->deadline = leave_at;
  if (leave_at == absl::InfiniteFuture()) return;
  w->deadline_timer = scheduler_.ScheduleAt(leave_at, [this, id] {
    Flight* f = table_.FlightOf(id);
    if (f == nullptr) return;
    const absl::Time now = clock_->Now();
    RemoveWaiter(id, f->state.phase.get<FlightPhase::Queued>() != nullptr
                         ? LateFailure(*f, NextStart(*f, now), now)
                         : DeadlinePassedFailure());
  });
}

absl::Time Engine::NextStart(const Flight& f, absl::Time now) const {
  if (const absl::optional<absl::Time> retry_at = f.state.phase.retry_at()) {
    return *retry_at;
  }
  if (const auto* queued = f.state.phase.get<FlightPhase::Queued>()) {
    return attempts_.EstimatedStart(queued->ticket, now);
  }
  return now;
}

Failure Engine::LateFailure(const Flight& f, absl::Time start,
                            absl::Time now) const {
  const absl::optional<absl::Time> retry_at = f.state.phase.retry_at();
  if (retry_at && f.state.last_retrying) {
    return RetryWaitFailure(f.state.attempts, f.state.last_retrying->error,
                            *retry_at - now);
  }
  return GateWaitFailure(f.state.attempts, start - now, *budget_, now);
}

void Engine::RemoveWaiters(const std::vector<WaiterId>& ids,
                           const Failure& failure) {
  for (WaiterId id : ids) RemoveWaiter(id, failure);
}

bool Engine::LeaveIfLate(Flight* f, absl::Time start) {
  const std::vector<WaiterId> leaving = MustLeaveBefore(f->waiters, start);
  if (leaving.empty()) return false;
  const bool all_leave = leaving.size() == f->waiters.size();
  // The last one out abandons the flight, and with it its wake-up or its
  // place at the gate.
  RemoveWaiters(leaving, LateFailure(*f, start, clock_->Now()));
  return all_leave;
}

}  // namespace engine
