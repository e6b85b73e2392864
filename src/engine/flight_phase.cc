#include "engine/flight_phase.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace engine {

const char* FlightPhase::Name(Kind kind) {
  switch (kind) {
    case Kind::kIdle:
      return "idle";
    case Kind::kStaggering:
      return "staggering";
    case Kind::kQueued:
      return "queued";
    case Kind::kSending:
      return "sending";
    case Kind::kAnswered:
      return "answered";
    case Kind::kWaitingToRetry:
      return "waiting to retry";
  }
  return "?";
}

bool FlightPhase::Allowed(Kind from, Kind to) {
  switch (to) {
    case Kind::kIdle:  // a wake-up ends its wait
      return from == Kind::kStaggering || from == Kind::kWaitingToRetry;
    case Kind::kStaggering:
    case Kind::kQueued:
      return from == Kind::kIdle;
    case Kind::kSending:  // leaving the gate, then the request's start
      return from == Kind::kQueued || from == Kind::kSending;
    case Kind::kAnswered:
      return from == Kind::kSending;
    case Kind::kWaitingToRetry:
      return from == Kind::kAnswered;
  }
  return false;
}

absl::optional<FlightPhase::TimerId> FlightPhase::wakeup() const {
  if (const auto* s = get<Staggering>()) return s->wakeup;
  if (const auto* r = get<WaitingToRetry>()) return r->wakeup;
  return absl::nullopt;
}

absl::optional<absl::Time> FlightPhase::retry_at() const {
  if (const auto* r = get<WaitingToRetry>()) return r->retry_at;
  return absl::nullopt;
}

void FlightPhase::Stagger(TimerId wakeup) {
  Move(Kind::kStaggering, Staggering{wakeup});
}

void FlightPhase::EndWait() { Move(Kind::kIdle, Idle{}); }

void FlightPhase::Queue(Seq ticket) { Move(Kind::kQueued, Queued{ticket}); }

void FlightPhase::Send() { Move(Kind::kSending, Sending{}); }

void FlightPhase::Carried(RequestId request) {
  Move(Kind::kSending, Sending{request});
}

bool FlightPhase::Answer(RequestId request) {
  const Sending* s = get<Sending>();
  if (s == nullptr || s->request != request) return false;
  state_ = Answered{};
  return true;
}

void FlightPhase::AwaitRetry(TimerId wakeup, absl::Time retry_at) {
  Move(Kind::kWaitingToRetry, WaitingToRetry{wakeup, retry_at});
}

FlightPhase::State FlightPhase::Stop() { return std::exchange(state_, Idle{}); }

void FlightPhase::Move(Kind to, State next) {
#if !defined(NDEBUG) || defined(VIN_CHECK_LOOP_THREAD)
  if (!Allowed(kind(), to)) {
    std::fprintf(stderr, "a flight cannot go from %s to %s\n", Name(kind()),
                 Name(to));
    std::abort();
  }
#endif
  state_ = std::move(next);
}

}  // namespace engine
