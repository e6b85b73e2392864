// Deadlines of Engine's waiters, on its loop thread (the deadline rules of
// DESIGN.md): each waiter leaves its flight at its deadline (a margin
// earlier when it may fall back to the snapshot), or at once when its
// flight's next attempt, a retry wake-up or its turn at the upstream rate,
// would come after it; what it is told names what it waited for and when
// that would have come.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/engine.h"
#include "engine/retry_policy.h"

namespace engine {

void Engine::WatchDeadline(WaiterId id, Waiter* w, absl::Time leave_at) {
  w->deadline = leave_at;
  if (leave_at == absl::InfiniteFuture()) return;
  w->deadline_timer = scheduler_.ScheduleAt(leave_at, [this, id] {
    Flight* f = table_.FlightOf(id);
    if (f == nullptr) return;
    const absl::Time now = clock_->Now();
    if (f->state.ticket != 0) {
      RemoveWaiter(id, GateWaitFailure(
                           *f, gate_.EstimatedStart(f->state.ticket, now), now));
    } else {
      RemoveWaiter(id, {FailureReason::kDeadlineExceeded,
                        "the deadline passed while vPIC was being asked", true});
    }
  });
}

Failure Engine::RetryWaitFailure(const Flight& f, absl::Time now) const {
  Failure failure{FailureReason::kUpstreamUnavailable, "", true,
                  f.state.attempts};
  failure.retry_delay = f.state.retry_at - now;
  failure.last_error = f.state.last_retrying->error;
  failure.message = absl::StrCat(
      "vPIC is failing (", DescribeUpstreamError(*failure.last_error),
      "); its next attempt, in ", absl::FormatDuration(failure.retry_delay),
      ", falls after this call's deadline");
  return failure;
}

Failure Engine::GateWaitFailure(const Flight& f, absl::Time start,
                                absl::Time now) const {
  Failure failure{FailureReason::kUpstreamUnavailable, "", true,
                  f.state.attempts};
  failure.retry_delay = std::max(absl::ZeroDuration(), start - now);
  const double rate = budget_->EffectiveRatePerMinute();
  const std::string why =
      budget_->PausedUntil() > now
          ? absl::StrCat("vPIC asked this server to pause (HTTP 429) for ",
                         absl::FormatDuration(budget_->PausedUntil() - now))
          : rate > 0 ? absl::StrFormat("this server sends vPIC at most %.0f "
                                       "requests per minute (--upstream_rate)",
                                       rate)
                     : std::string("upstream requests are at their "
                                   "concurrency limit");
  failure.message = absl::StrCat(
      "waiting for its turn to ask vPIC: ", why, "; its request would start in ",
      absl::FormatDuration(failure.retry_delay),
      ", after this call's deadline");
  return failure;
}

}  // namespace engine
