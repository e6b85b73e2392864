// When a snapshot load must stop: at its deadline, or once cancelled (a
// SIGTERM while a reload runs).
//
// Thread-safe: the loading threads check it while any thread may Cancel().
// The loader checks it between its steps, every few thousand SQLite VM
// instructions (Db's progress handler) and every MiB it hashes, so a load
// that passes its deadline or is cancelled ends within milliseconds.
#ifndef VIN_SNAPSHOT_LOAD_LIMIT_H_
#define VIN_SNAPSHOT_LOAD_LIMIT_H_

#include <atomic>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace snapshot {

class LoadLimit {
 public:
  // No deadline; not cancelled until Cancel().
  LoadLimit() = default;
  explicit LoadLimit(absl::Time deadline) : deadline_(deadline) {}
  LoadLimit(const LoadLimit&) = delete;
  LoadLimit& operator=(const LoadLimit&) = delete;

  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  absl::Time deadline() const { return deadline_; }

  // OK while the load may go on; CANCELLED after Cancel(), else
  // DEADLINE_EXCEEDED once the deadline has passed.
  absl::Status Check() const {
    if (cancelled_.load(std::memory_order_relaxed)) {
      return absl::CancelledError("the snapshot load was cancelled");
    }
    if (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_) {
      return absl::DeadlineExceededError(
          "the snapshot load ran past its deadline");
    }
    return absl::OkStatus();
  }

 private:
  const absl::Time deadline_ = absl::InfiniteFuture();
  std::atomic<bool> cancelled_{false};
};

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_LOAD_LIMIT_H_
