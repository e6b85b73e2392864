#include "upstream/breaker.h"

#include <algorithm>
#include <utility>

namespace upstream {

const char* Name(BreakerState s) {
  switch (s) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

Breaker::Breaker(BreakerOptions options, Uniform uniform)
    : options_(options),
      uniform_(std::move(uniform)),
      cooldown_(options.cooldown) {}

double Breaker::Draw() {
  if (uniform_) return uniform_();
  return absl::Uniform(gen_, 0.0, 1.0);
}

Breaker::Permit Breaker::Ask(absl::Time now) {
  switch (state_) {
    case BreakerState::kClosed:
      return Permit::kGo;
    case BreakerState::kHalfOpen:
      return Permit::kRefused;
    case BreakerState::kOpen:
      if (now < next_probe_at_) return Permit::kRefused;
      state_ = BreakerState::kHalfOpen;
      next_probe_at_ = absl::InfiniteFuture();
      ++probes_;
      return Permit::kProbe;
  }
  return Permit::kGo;
}

Breaker::Transition Breaker::Open(absl::Time now, absl::Duration cooldown) {
  const Transition t{state_, BreakerState::kOpen};
  if (state_ == BreakerState::kClosed) unreachable_since_ = now;
  state_ = BreakerState::kOpen;
  cooldown_ = cooldown;
  next_probe_at_ = now + cooldown;
  failures_ = 0;
  return t;
}

absl::optional<Breaker::Transition> Breaker::OnResult(absl::Time now,
                                                      Health health,
                                                      bool probe) {
  if (!enabled() || health == Health::kNeutral) {
    if (probe && state_ == BreakerState::kHalfOpen) return OnProbeLost(now);
    return absl::nullopt;
  }
  switch (state_) {
    case BreakerState::kClosed:
      if (health == Health::kAnswered) {
        failures_ = 0;
        return absl::nullopt;
      }
      if (++failures_ < options_.failures) return absl::nullopt;
      return Open(now, options_.cooldown);
    case BreakerState::kOpen:
      return absl::nullopt;  // a request from before it opened
    case BreakerState::kHalfOpen: {
      if (!probe) return absl::nullopt;
      if (health == Health::kBroken) {
        const absl::Duration grown =
            cooldown_ + cooldown_ * (2 * Draw());
        return Open(now, std::min(options_.cooldown_max,
                                  std::max(cooldown_, grown)));
      }
      return Close();
    }
  }
  return absl::nullopt;
}

Breaker::Transition Breaker::Close() {
  const Transition t{state_, BreakerState::kClosed};
  state_ = BreakerState::kClosed;
  failures_ = 0;
  cooldown_ = options_.cooldown;
  unreachable_since_ = absl::InfinitePast();
  next_probe_at_ = absl::InfinitePast();
  return t;
}

absl::optional<Breaker::Transition> Breaker::OpenedElsewhere(
    absl::Time now, absl::Time since, absl::Duration cooldown) {
  if (!enabled()) return absl::nullopt;
  switch (state_) {
    case BreakerState::kClosed: {
      const Transition t = Open(now, cooldown);
      unreachable_since_ = std::min(since, now);
      return t;
    }
    case BreakerState::kOpen:
      cooldown_ = std::max(cooldown_, cooldown);
      next_probe_at_ = std::max(next_probe_at_, now + cooldown);
      unreachable_since_ = std::min(unreachable_since_, since);
      return absl::nullopt;
    case BreakerState::kHalfOpen:
      return absl::nullopt;
  }
  return absl::nullopt;
}

absl::optional<Breaker::Transition> Breaker::ClosedElsewhere() {
  if (state_ == BreakerState::kClosed) return absl::nullopt;
  return Close();
}

absl::optional<Breaker::Transition> Breaker::ProbeTaken(absl::Time now,
                                                        absl::Duration wait) {
  if (state_ != BreakerState::kHalfOpen) return absl::nullopt;
  const Transition t{state_, BreakerState::kOpen};
  state_ = BreakerState::kOpen;
  next_probe_at_ = now + wait;
  --probes_;  // it was not this process's
  return t;
}

absl::optional<Breaker::Transition> Breaker::OnProbeLost(absl::Time now) {
  if (state_ != BreakerState::kHalfOpen) return absl::nullopt;
  const Transition t{state_, BreakerState::kOpen};
  state_ = BreakerState::kOpen;
  next_probe_at_ = now;
  return t;
}

}  // namespace upstream
