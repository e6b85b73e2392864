// An injectable source of the current time, below every module that reads
// one (the retry scheduler and the engine's loop, the cache file).
//
// Now() is monotonic: every timer, deadline, rate and window of the engine is
// measured with it, so that a wall-clock step (NTP, a VM resume) can neither
// fire wake-ups early nor stall them. WallNow() is calendar time, for what
// callers see as a date (decode_time) and for HTTP dates (Retry-After).
#ifndef VIN_CLOCKS_CLOCK_H_
#define VIN_CLOCKS_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace clocks {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, as an absl::Time on an arbitrary epoch: only differences
  // and comparisons with other Now() values mean anything.
  virtual absl::Time Now() const = 0;
  // Calendar time (absl::Now() for the real clock).
  virtual absl::Time WallNow() const = 0;
  // The process-wide real clock: steady_clock for Now(), absl::Now() for
  // WallNow().
  static const Clock* Real();
};

// A clock that moves only when told to; both readings move together.
// Thread-safe, so that a test may advance it while another thread reads it.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  absl::Time WallNow() const override { return Now(); }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace clocks

#endif  // VIN_CLOCKS_CLOCK_H_
