// The engine's circuit breaker (DESIGN rule 13), on its loop: whether a
// flight may send, the failure it gets when it may not, the breaker's
// transitions from each request's health, the probe at the gate, and the
// breaker shared by a fleet (the other replicas' events, the probe's lease).
#include "engine/shared_breaker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/retry_policy.h"

namespace engine {

SharedBreaker::SharedBreaker(Options options, const retry::Clock* clock,
                             metrics::ServiceMetrics* metrics,
                             EngineObserver* observer, Effects* effects)
    : options_(std::move(options)),
      clock_(clock),
      metrics_(metrics),
      observer_(observer),
      effects_(effects),
      breaker_(options_.breaker, options_.uniform) {
  metrics_->upstream_breaker_state.Set(0);
}

bool SharedBreaker::Refuses(absl::Time now) const {
  switch (breaker_.state()) {
    case upstream::BreakerState::kClosed:
      return false;
    case upstream::BreakerState::kHalfOpen:
      return true;
    case upstream::BreakerState::kOpen:
      return now < breaker_.next_probe_at();
  }
  return false;
}

absl::Time SharedBreaker::WallUnreachableSince(absl::Time now) const {
  return clock_->WallNow() - (now - breaker_.unreachable_since());
}

Failure SharedBreaker::Unreachable(absl::Time now, int attempts) const {
  const absl::Duration wait =
      breaker_.state() == upstream::BreakerState::kOpen
          ? std::max(absl::ZeroDuration(), breaker_.next_probe_at() - now)
          : breaker_.cooldown();  // the probe is out: at least this more
  const absl::Time since = WallUnreachableSince(now);
  Failure f{FailureReason::kUpstreamUnavailable,
            absl::StrCat(
                domain::kUnreachableSince, domain::UtcSeconds(since),
                " (the circuit breaker is open after ",
                options_.breaker.failures, " failed requests in a row",
                opened_by_.empty() ? "" : " on another replica of the fleet",
                ", the last: ", DescribeUpstreamError(last_broken_),
                "); the next probe of vPIC is in ", absl::FormatDuration(wait)),
            true,
            attempts,
            last_broken_,
            wait};
  f.detail = domain::ErrorReason::kBreakerOpen;
  f.unreachable_since = since;
  return f;
}

// ---- The gate's side ----

SharedBreaker::Permit SharedBreaker::Ask(absl::Time now) {
  return breaker_.Ask(now);
}

void SharedBreaker::Probing(Seq place, uint64_t flight_id) {
  NoteBreaker(upstream::Breaker::Transition{upstream::BreakerState::kOpen,
                                            upstream::BreakerState::kHalfOpen});
  probe_place_ = place;
  probe_flight_ = flight_id;
  if (options_.fleet != nullptr && options_.fleet->up()) {
    // One probe for the fleet: it waits here until the claim's answer.
    const uint64_t claim = ++claims_;
    probe_claim_ = claim;
    options_.fleet->ClaimProbe(
        options_.probe_hold,
        [this, claim](FleetBackend::ProbeClaim answer) {
          OnProbeClaim(claim, answer);
        });
  }
}

void SharedBreaker::LeftGate(Seq seq) {
  // The probe left before it was sent: the next flight may probe.
  if (seq == probe_place_) LoseProbe();
}

bool SharedBreaker::Sends(uint64_t flight_id) {
  if (probe_place_ == 0 || flight_id != probe_flight_) return false;
  probe_place_ = 0;
  probe_flight_ = 0;
  return true;
}

void SharedBreaker::ProbeLost() { LoseProbe(); }

void SharedBreaker::OnAnswer(const vpic::RequestOutcome& answer, bool probe) {
  if (answer.health == vpic::UpstreamHealth::kBroken) {
    last_broken_ = answer.outcomes.front().error;
  }
  if (probe) {
    metrics_->upstream_breaker_probes[answer.health ==
                                      vpic::UpstreamHealth::kAnswered]
        .Add();
  }
  const auto t = breaker_.OnResult(clock_->Now(), answer.health, probe);
  NoteBreaker(t);
  if (probe) {
    EndProbe(t && t->to == upstream::BreakerState::kOpen &&
             breaker_.next_probe_at() > clock_->Now());
  }
}

void SharedBreaker::NoteBreaker(
    absl::optional<upstream::Breaker::Transition> t, Cause cause,
    const std::string& by) {
  if (!t) return;
  metrics_->upstream_breaker_state.Set(static_cast<double>(t->to));
  metrics_->upstream_breaker_transitions[static_cast<size_t>(t->to)].Add();
  if (t->from == upstream::BreakerState::kClosed) {
    opened_by_ = cause == Cause::kFleet ? by : "";
  }
  if (observer_ != nullptr) {
    const absl::Time now = clock_->Now();
    const absl::Time since = t->to == upstream::BreakerState::kClosed
                                 ? absl::InfinitePast()
                                 : WallUnreachableSince(now);
    observer_->OnBreakerChanged(
        {t->from, t->to, cause, by, since,
         t->to == upstream::BreakerState::kOpen ? breaker_.next_probe_at() - now
                                                : absl::ZeroDuration(),
         DescribeUpstreamError(last_broken_)});
  }
  if (cause == Cause::kHere) ShareBreaker(*t);
  if (t->to == upstream::BreakerState::kClosed) {
    // The backlog resumes from a fraction of the rate, climbing back as
    // after a pushback.
    effects_->Closed();
  } else if (t->from == upstream::BreakerState::kClosed ||
             cause == Cause::kProbeElsewhere) {
    // Every flight that waits to send leaves the live path (after a probe
    // of this replica's failed or was lost, none waits: every flight but
    // the probe was refused meanwhile; when the probe is another
    // replica's, this one's would-be probe leaves).
    effects_->Refusing();
  }
}

void SharedBreaker::ShareBreaker(const upstream::Breaker::Transition& t) {
  if (options_.fleet == nullptr) return;
  const absl::Time now = clock_->Now();
  FleetEvent e;
  e.origin = options_.fleet->replica();
  switch (t.to) {
    case upstream::BreakerState::kHalfOpen:
      return;  // the probe's claim says it (Enqueue)
    case upstream::BreakerState::kClosed:
      e.kind = FleetEvent::Kind::kBreakerClosed;
      break;
    case upstream::BreakerState::kOpen:
      // A probe lost before its answer taught nothing.
      if (t.from == upstream::BreakerState::kHalfOpen &&
          breaker_.next_probe_at() <= now) {
        return;
      }
      e.kind = FleetEvent::Kind::kBreakerOpened;
      e.breaker.unreachable_since = WallUnreachableSince(now);
      e.breaker.cooldown = breaker_.next_probe_at() - now;
      e.breaker.last_error = last_broken_;
      break;
  }
  options_.fleet->Publish(e);
}

void SharedBreaker::FromFleet(const FleetEvent& e) {
  const absl::Time now = clock_->Now();
  if (e.kind == FleetEvent::Kind::kBreakerOpened) {
    if (breaker_.state() == upstream::BreakerState::kClosed) {
      last_broken_ = e.breaker.last_error;
    }
    const absl::Time since =
        now - (clock_->WallNow() - e.breaker.unreachable_since);
    NoteBreaker(breaker_.OpenedElsewhere(now, since, e.breaker.cooldown),
                Cause::kFleet, e.origin);
    return;
  }
  if (e.kind != FleetEvent::Kind::kBreakerClosed) return;
  // A probe of this replica's still at the gate, or still claiming, goes
  // as an ordinary request; one under way counts as one when it ends.
  probe_place_ = 0;
  probe_flight_ = 0;
  probe_claim_ = 0;
  NoteBreaker(breaker_.ClosedElsewhere(), Cause::kFleet, e.origin);
}

void SharedBreaker::OnProbeClaim(uint64_t claim,
                                 FleetBackend::ProbeClaim answer) {
  using Kind = FleetBackend::ProbeClaim::Kind;
  if (claim != probe_claim_) {
    // The probe left, or the breaker closed, meanwhile.
    if (answer.kind == Kind::kMine) options_.fleet->ReleaseProbe();
    return;
  }
  probe_claim_ = 0;
  switch (answer.kind) {
    case Kind::kMine:
      probe_held_ = true;
      return;  // it starts at the end of this turn
    case Kind::kUnavailable:
      return;  // the fleet cannot tell: this replica probes alone
    case Kind::kTaken:
      // Another replica probes: this one's flight leaves like any other
      // while open, and the breaker waits for that probe's news.
      probe_place_ = 0;
      probe_flight_ = 0;
      NoteBreaker(breaker_.ProbeTaken(clock_->Now(), answer.wait),
                  Cause::kProbeElsewhere);
      return;
  }
}

void SharedBreaker::LoseProbe() {
  probe_place_ = 0;
  probe_flight_ = 0;
  probe_claim_ = 0;
  NoteBreaker(breaker_.OnProbeLost(clock_->Now()));
  EndProbe(false);
}

void SharedBreaker::EndProbe(bool reopened) {
  if (options_.fleet == nullptr) return;
  if (reopened) {
    // Nobody in the fleet probes before the new cool-down ends.
    options_.fleet->HoldProbe(breaker_.next_probe_at() - clock_->Now());
  } else if (probe_held_) {
    options_.fleet->ReleaseProbe();
  }
  probe_held_ = false;
}

}  // namespace engine
