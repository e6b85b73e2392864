#include "retry/scheduler.h"

#include <utility>

namespace retry {

Scheduler::Scheduler(const Clock* clock) : clock_(clock) {}

Scheduler::TimerId Scheduler::ScheduleAt(absl::Time when, Callback callback) {
  const TimerId id = next_id_++;
  heap_.push(Entry{when, id});
  callbacks_.emplace(id, std::move(callback));
  return id;
}

Scheduler::TimerId Scheduler::ScheduleAfter(absl::Duration delay,
                                            Callback callback) {
  return ScheduleAt(clock_->Now() + delay, std::move(callback));
}

bool Scheduler::Cancel(TimerId id) {
  const bool erased = callbacks_.erase(id) > 0;
  if (erased) CompactIfSparse();
  return erased;
}

void Scheduler::DropCancelledTop() {
  while (!heap_.empty() && !callbacks_.contains(heap_.top().id)) heap_.pop();
}

// Cancelled entries stay in the heap until they reach the top. Rebuild it
// when they outnumber the live ones, so that memory follows live timers.
void Scheduler::CompactIfSparse() {
  if (heap_.size() < 1024 || heap_.size() < 2 * callbacks_.size()) return;
  std::vector<Entry> live;
  live.reserve(callbacks_.size());
  while (!heap_.empty()) {
    if (callbacks_.contains(heap_.top().id)) live.push_back(heap_.top());
    heap_.pop();
  }
  heap_ = decltype(heap_)(std::greater<Entry>(), std::move(live));
}

absl::optional<absl::Time> Scheduler::NextWakeup() {
  DropCancelledTop();
  if (heap_.empty()) return absl::nullopt;
  return heap_.top().when;
}

int Scheduler::RunDue() {
  int ran = 0;
  const absl::Time now = clock_->Now();
  for (;;) {
    DropCancelledTop();
    if (heap_.empty() || heap_.top().when > now) break;
    const TimerId id = heap_.top().id;
    heap_.pop();
    auto it = callbacks_.find(id);
    Callback callback = std::move(it->second);
    callbacks_.erase(it);
    callback();
    ++ran;
  }
  return ran;
}

}  // namespace retry
