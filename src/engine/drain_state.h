// The graceful stop (docs/DESIGN.md "Stopping"): one state, in one place.
//
// A stop has two sides. Callers' threads must refuse new work as soon as
// Drain() or Shutdown() is called (`Request*`, `admits`: atomic, any
// thread). The engine's loop changes its own phase when the posted stop
// task runs (`Enter`, `loop_*`: loop thread only), so that work posted
// before the stop is still handled in order. Both sides are one enum: the
// loop stops starting upstream requests exactly when it stops admitting
// work.
//
// The SHUTTING_DOWN failure every stopped decode gets is built here only.
#ifndef VIN_ENGINE_DRAIN_STATE_H_
#define VIN_ENGINE_DRAIN_STATE_H_

#include <atomic>
#include <string>

#include "absl/strings/string_view.h"
#include "engine_api/types.h"

namespace engine {

class DrainState {
 public:
  enum class Phase {
    kServing,   // admits work, starts upstream requests
    kDraining,  // Drain(): no new work or upstream request; requests in
                // flight may finish
    kStopped,   // Shutdown(): every waiter failed
  };

  // ---- Any thread ----
  // Whether Submit may admit a request.
  bool admits() const { return requested_.load() == Phase::kServing; }
  // Marks the stop asked for. Returns whether this call moved the phase
  // forward (a second Shutdown() is a no-op; Drain() after Shutdown() too).
  bool Request(Phase phase) {
    Phase current = requested_.load();
    while (current < phase) {
      if (requested_.compare_exchange_weak(current, phase)) return true;
    }
    return false;
  }

  // ---- Loop thread ----
  void Enter(Phase phase) {
    if (loop_ < phase) loop_ = phase;
  }
  Phase loop_phase() const { return loop_; }
  // Work that reaches the loop is admitted, and upstream requests (first
  // attempts and retries) start, only while serving.
  bool loop_serving() const { return loop_ == Phase::kServing; }

  // The failure of a decode the stop ends (retryable). `detail` says what
  // it was waiting for, e.g. vPIC's last answer; may be empty.
  static Failure ShuttingDown(absl::string_view detail = {}, int attempts = 0);

 private:
  std::atomic<Phase> requested_{Phase::kServing};
  Phase loop_ = Phase::kServing;
};

}  // namespace engine

#endif  // VIN_ENGINE_DRAIN_STATE_H_
