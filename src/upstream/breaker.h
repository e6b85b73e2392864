// The circuit breaker in front of vPIC (DESIGN rule 13): stop calling an
// endpoint that cannot answer.
//
// Closed, it counts upstream requests that failed in a row in a way that
// says vPIC is unreachable or broken (Health::kBroken); `failures` of them
// open it. Open, no request may start until the cool-down has passed; then
// the next request that wants to start is the one probe (half open), and
// every other is refused until the probe's answer: an answer from vPIC
// closes the breaker, a failure (or a probe that never got its answer)
// opens it again with a longer cool-down. The first cool-down is
// `cooldown`; each reopening draws the next one with decorrelated jitter
// whose floor is the previous cool-down, next = min(max,
// prev + u * 2 * prev), u in [0, 1): always at least as long as the last,
// never in step with another process's, capped at `cooldown_max`.
// Closing resets it.
//
// While open, answers of requests that started before it opened change
// nothing: only the probe decides.
//
// In a fleet (rule 13), another replica's breaker moves this one too:
// OpenedElsewhere opens it without failures of its own (or, open, makes it
// wait at least the other's cool-down), ClosedElsewhere closes it, and
// ProbeTaken hands the probe back when another replica probes instead.
//
// Pure and not thread-safe: time is passed in (the engine's monotonic
// clock); the engine's loop owns it.
#ifndef VIN_UPSTREAM_BREAKER_H_
#define VIN_UPSTREAM_BREAKER_H_

#include <cstdint>
#include <functional>

#include "absl/random/random.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "domain/failure.h"

namespace upstream {

struct BreakerOptions {
  // Failures in a row that open it; <= 0 turns the breaker off.
  int failures = 5;
  absl::Duration cooldown = absl::Seconds(5);
  absl::Duration cooldown_max = absl::Minutes(2);
};

enum class BreakerState { kClosed = 0, kOpen = 1, kHalfOpen = 2 };
const char* Name(BreakerState s);  // "closed", "open", "half_open"

using Health = domain::UpstreamHealth;

class Breaker {
 public:
  // Returns a value in [0, 1). Injected by tests only; empty: real
  // randomness.
  using Uniform = std::function<double()>;

  explicit Breaker(BreakerOptions options, Uniform uniform = {});

  enum class Permit {
    kGo,       // closed: send
    kProbe,    // the cool-down has passed: this request is the probe
    kRefused,  // open, or half open with the probe under way
  };
  // May a request start at `now`? kProbe makes the breaker half open; the
  // caller reports the probe's end with OnResult(probe = true) or
  // OnProbeLost.
  Permit Ask(absl::Time now);

  struct Transition {
    BreakerState from;
    BreakerState to;
  };
  // A request ended at `now` with `health`; `probe` when it was the probe.
  absl::optional<Transition> OnResult(absl::Time now, Health health,
                                      bool probe);
  // The probe ended without an answer (nobody waited for it any more, or it
  // never left): the breaker is open again with the cool-down it had, and
  // the next request may probe at once.
  absl::optional<Transition> OnProbeLost(absl::Time now);

  // Another replica's breaker opened at `since` (this clock's time), and
  // nobody may probe before `cooldown` from `now`. Closed: it opens (a
  // transition). Open: the probe waits at least that long, and the
  // cool-down is at least that. Half open: its own probe decides.
  absl::optional<Transition> OpenedElsewhere(absl::Time now, absl::Time since,
                                             absl::Duration cooldown);
  // Another replica's probe was answered: it closes.
  absl::optional<Transition> ClosedElsewhere();
  // Half open, the probe turned out to be another replica's, for `wait`
  // more: open again, and the next probe may come after that wait.
  absl::optional<Transition> ProbeTaken(absl::Time now, absl::Duration wait);

  BreakerState state() const { return state_; }
  bool enabled() const { return options_.failures > 0; }
  // When it last opened from closed: since when vPIC is unreachable
  // (InfinitePast while closed).
  absl::Time unreachable_since() const { return unreachable_since_; }
  // Open: when the probe may go. Half open: InfiniteFuture.
  absl::Time next_probe_at() const { return next_probe_at_; }
  // The current cool-down (the wait the probe's failure would at least
  // bring).
  absl::Duration cooldown() const { return cooldown_; }
  int failures_in_a_row() const { return failures_; }
  uint64_t probes() const { return probes_; }

 private:
  Transition Open(absl::Time now, absl::Duration cooldown);
  Transition Close();
  double Draw();

  const BreakerOptions options_;
  Uniform uniform_;
  absl::BitGen gen_;
  BreakerState state_ = BreakerState::kClosed;
  int failures_ = 0;  // broken answers in a row, while closed
  absl::Duration cooldown_;
  absl::Time unreachable_since_ = absl::InfinitePast();
  absl::Time next_probe_at_ = absl::InfinitePast();
  uint64_t probes_ = 0;
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_BREAKER_H_
