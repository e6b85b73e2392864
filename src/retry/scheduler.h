// The one scheduler that holds every pending wake-up in the process: retry
// wake-ups, first-attempt staggers and waiter deadlines (DESIGN rule 4).
//
// A min-heap of timed callbacks driven by the engine's loop, which sleeps in
// its I/O poll until NextWakeup(). Cancelling is O(1): the entry is dropped
// from the index and skipped when it reaches the top of the heap.
//
// Not thread-safe: owned and driven by the engine's loop thread. Callbacks
// run on that thread inside RunDue() and may schedule or cancel timers.
#ifndef VIN_RETRY_SCHEDULER_H_
#define VIN_RETRY_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "retry/clock.h"

namespace retry {

class Scheduler {
 public:
  using TimerId = uint64_t;  // never 0
  using Callback = std::function<void()>;

  explicit Scheduler(const Clock* clock);

  TimerId ScheduleAt(absl::Time when, Callback callback);
  TimerId ScheduleAfter(absl::Duration delay, Callback callback);
  // Returns whether the timer was still pending. Unknown or fired ids are a
  // no-op, so owners may cancel unconditionally.
  bool Cancel(TimerId id);

  // The earliest pending wake-up, if any.
  absl::optional<absl::Time> NextWakeup();
  // Runs, in time order, every callback due at the clock's current time,
  // including ones scheduled as already due by callbacks it runs. Returns
  // how many ran.
  int RunDue();

  size_t pending() const { return callbacks_.size(); }
  const Clock* clock() const { return clock_; }

 private:
  struct Entry {
    absl::Time when;
    TimerId id;  // ties run in scheduling order
    bool operator>(const Entry& o) const {
      return when != o.when ? when > o.when : id > o.id;
    }
  };
  void DropCancelledTop();
  void CompactIfSparse();

  const Clock* clock_;
  TimerId next_id_ = 1;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  absl::flat_hash_map<TimerId, Callback> callbacks_;
};

}  // namespace retry

#endif  // VIN_RETRY_SCHEDULER_H_
