// An injectable source of the current time.
#ifndef VIN_RETRY_CLOCK_H_
#define VIN_RETRY_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace retry {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  // The process-wide real clock (absl::Now()).
  static const Clock* Real();
};

// A clock that moves only when told to. Not thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}
  absl::Time Now() const override { return now_; }
  void Advance(absl::Duration d) { now_ += d; }

 private:
  absl::Time now_;
};

}  // namespace retry

#endif  // VIN_RETRY_CLOCK_H_
