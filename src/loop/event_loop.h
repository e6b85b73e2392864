// The engine's event loop (DESIGN rule 4, docs/DESIGN.md "Threads and locks"):
// one thread runs it, and it owns what that thread waits on: tasks posted from
// other threads, the one scheduler of timed wake-ups, the clock, and the
// I/O sources (file descriptors watched with epoll: libcurl's sockets, and
// any other source registered with it).
//
// Post() and Wakeup() are thread-safe. Everything else is for the loop's
// thread only: the thread that calls RunOnce() (checked in debug builds).
// Handlers and tasks run inside RunOnce() and may post, watch, unwatch and
// schedule freely.
#ifndef VIN_LOOP_EVENT_LOOP_H_
#define VIN_LOOP_EVENT_LOOP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "retry/clock.h"
#include "retry/scheduler.h"

namespace loop {

class EventLoop {
 public:
  // What a watched descriptor is ready for (or wanted for, in Watch()).
  enum Events : uint32_t {
    kReadable = 1,
    kWritable = 2,
    kError = 4,  // reported only: an error or hang-up on the descriptor
  };
  using IoHandler = std::function<void(uint32_t events)>;
  using Task = std::function<void()>;

  // `clock` (not owned; null: the real clock) drives both schedulers. A
  // source whose timeouts are real time (libcurl) needs the real clock.
  static absl::StatusOr<std::unique_ptr<EventLoop>> Create(
      const retry::Clock* clock = nullptr);
  ~EventLoop();

  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // ---- Any thread ----
  // Runs `task` on the loop, in posting order, in its next turn (waking a
  // RunOnce() that waits).
  void Post(Task task);
  // Makes a waiting (or the next) RunOnce() return at once.
  void Wakeup();
  bool has_posted() const;

  // ---- The loop's thread ----
  const retry::Clock* clock() const { return clock_; }
  // The product's wake-ups: retries, staggers, waiter deadlines, leases.
  retry::Scheduler& scheduler() { return scheduler_; }
  // The I/O sources' own timers (libcurl's timeout callback), apart so that
  // the product's pending wake-ups can be counted alone.
  retry::Scheduler& io_timers() { return io_timers_; }

  // Watches `fd` for `events` (kReadable | kWritable), replacing an earlier
  // watch of it; `handler` gets what it is ready for.
  absl::Status Watch(int fd, uint32_t events, IoHandler handler);
  // Stops watching `fd`; a handler not yet run for it in this turn is not.
  void Unwatch(int fd);
  size_t watched() const { return watches_.size(); }

  // One turn: waits until a descriptor is ready, a task is posted, a timer
  // is due, or `max_wait` passes (never, when something is ready already);
  // then runs ready I/O handlers, posted tasks, and due timers. Binds the
  // loop to the calling thread.
  void RunOnce(absl::Duration max_wait);

  // Debug and sanitizer builds (VIN_CHECK_LOOP_THREAD): aborts unless called
  // on the loop's thread (once bound). A no-op in release builds.
  void AssertOnLoopThread() const;

 private:
  struct Watch_ {
    uint64_t generation = 0;
    IoHandler handler;
  };
  EventLoop(const retry::Clock* clock, int epoll_fd, int wake_fd);
  absl::Duration WaitFor(absl::Duration max_wait);
  void RunPosted();

  const retry::Clock* const clock_;
  const int epoll_fd_;
  const int wake_fd_;  // an eventfd: Post() and Wakeup() write it
  retry::Scheduler scheduler_;
  retry::Scheduler io_timers_;
  absl::flat_hash_map<int, Watch_> watches_;  // loop thread
  uint64_t next_generation_ = 1;
  std::thread::id thread_;  // bound by the first RunOnce()

  mutable absl::Mutex mu_;  // protects posted_; a leaf lock
  std::vector<Task> posted_ ABSL_GUARDED_BY(mu_);
  // Whether the eventfd was written since the loop last took posted_: a
  // task posted behind another one needs no write of its own.
  bool wake_pending_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace loop

#endif  // VIN_LOOP_EVENT_LOOP_H_
