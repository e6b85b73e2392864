// What a flight is doing now (DESIGN rules 3, 5, 7 and 9), as a type: one
// phase at a time, each with the data only it has, so that a flight cannot
// hold a stagger's wake-up and a place at the gate at once, nor a retry time
// outside a retry wait.
//
//   Idle -Stagger-> Staggering -EndWait-> Idle -Queue-> Queued
//   Queued -Send-> Sending -Answer-> Answered -AwaitRetry-> WaitingToRetry
//   WaitingToRetry -EndWait-> Idle -Queue-> ...     any -Stop-> Idle
//
// Idle is a flight with no work of its own under way: just made, waiting
// for the fleet's word, decoded by another replica (whose events it
// relays), or between a wake-up and its queueing. Answered is the moment
// between its request's answer and what the engine makes of it (done,
// failed, or a retry wait).
//
// A transition from a phase it does not start from is a bug of the engine:
// builds with checks (debug, sanitizers) abort naming it; others make the
// transition anyway, as the fields this replaces were written.
//
// Not thread-safe: part of a flight, owned by the engine's loop thread.
#ifndef VIN_ENGINE_FLIGHT_PHASE_H_
#define VIN_ENGINE_FLIGHT_PHASE_H_

#include <cstddef>
#include <variant>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "retry/scheduler.h"
#include "upstream/upstream_gate.h"
#include "vpic/upstream_client.h"

namespace engine {

class FlightPhase {
 public:
  using TimerId = retry::Scheduler::TimerId;
  using Seq = upstream::UpstreamGate::Seq;
  using RequestId = vpic::UpstreamClient::RequestId;

  struct Idle {};
  // A batch item's first attempt waits a random moment (rule 7).
  struct Staggering {
    TimerId wakeup = 0;
  };
  // At the upstream gate, for a token and a slot (rules 9, 17).
  struct Queued {
    Seq ticket = 0;
  };
  // In an upstream request: `request` is 0 from leaving the gate until the
  // request has started (within one call of the runner).
  struct Sending {
    RequestId request = 0;
  };
  struct Answered {};
  // Its retry wakes up at `retry_at` (rule 3).
  struct WaitingToRetry {
    TimerId wakeup = 0;
    absl::Time retry_at;
  };
  using State =
      std::variant<Idle, Staggering, Queued, Sending, Answered, WaitingToRetry>;
  // The phases by name, in State's order.
  enum class Kind {
    kIdle,
    kStaggering,
    kQueued,
    kSending,
    kAnswered,
    kWaitingToRetry,
  };
  static constexpr size_t kKinds = 6;
  static const char* Name(Kind kind);
  // Whether a flight may go from `from` to `to` (Stop aside: it ends any
  // phase).
  static bool Allowed(Kind from, Kind to);

  Kind kind() const { return static_cast<Kind>(state_.index()); }
  const State& state() const { return state_; }
  template <typename Phase>
  const Phase* get() const {
    return std::get_if<Phase>(&state_);
  }
  // The phase's wake-up timer (staggering, waiting to retry), if any.
  absl::optional<TimerId> wakeup() const;
  // Waiting to retry: when.
  absl::optional<absl::Time> retry_at() const;
  // Whether its request is in progress (it waits for vPIC's answer, not to
  // send).
  bool sending() const { return kind() == Kind::kSending; }

  // ---- Transitions ----
  void Stagger(TimerId wakeup);  // Idle -> Staggering
  // The wake-up fired or was cancelled: Staggering, WaitingToRetry -> Idle.
  void EndWait();
  void Queue(Seq ticket);  // Idle -> Queued
  void Send();             // Queued -> Sending (no request yet)
  // Sending -> Sending: its request started as `request`.
  void Carried(RequestId request);
  // Sending `request` -> Answered; false (and no change) when the flight is
  // not waiting for that request (it left it, or is in another phase).
  bool Answer(RequestId request);
  void AwaitRetry(TimerId wakeup, absl::Time retry_at);  // Answered -> ...
  // Any -> Idle: returns the phase it leaves, whose work (a timer, a place
  // at the gate, a request) the caller undoes.
  State Stop();

 private:
  void Move(Kind to, State next);

  State state_;
};

}  // namespace engine

#endif  // VIN_ENGINE_FLIGHT_PHASE_H_
