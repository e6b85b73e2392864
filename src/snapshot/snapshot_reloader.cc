#include "snapshot/snapshot_reloader.h"

#include <cstdint>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/optional.h"

namespace snapshot {

struct SnapshotReloader::Shared {
  // Protects every field below.
  absl::Mutex mu;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  // A reload was asked for and has not started.
  bool pending ABSL_GUARDED_BY(mu) = false;
  // A reload has started and its outcome is not known yet.
  bool busy ABSL_GUARDED_BY(mu) = false;
  // The number of the latest load; an older load's result is dropped.
  uint64_t attempt ABSL_GUARDED_BY(mu) = 0;
  // What the latest load returned, until the reloader takes it.
  absl::optional<Loaded> result ABSL_GUARDED_BY(mu);
  // The latest load's limit, for Stop() to cancel.
  std::shared_ptr<LoadLimit> limit ABSL_GUARDED_BY(mu);
  // Load threads that have not ended, abandoned ones included.
  int loads_running ABSL_GUARDED_BY(mu) = 0;
};

SnapshotReloader::SnapshotReloader(LoadFn load, DoneFn done,
                                   absl::Duration timeout)
    : load_(std::move(load)),
      done_(std::move(done)),
      timeout_(timeout),
      shared_(std::make_shared<Shared>()),
      thread_([this] { Run(); }) {}

SnapshotReloader::~SnapshotReloader() { Stop(); }

SnapshotReloader::Requested SnapshotReloader::Request() {
  Shared& s = *shared_;
  absl::MutexLock lock(&s.mu);
  if (s.stopping) return Requested::kStopped;
  const bool folded = s.busy || s.pending;
  s.pending = true;
  return folded ? Requested::kFolded : Requested::kStarted;
}

void SnapshotReloader::Stop(absl::Duration load_wait) {
  Shared& s = *shared_;
  {
    absl::MutexLock lock(&s.mu);
    if (s.stopping) return;  // stopped before: waited then
    s.stopping = true;
    s.pending = false;
    if (s.limit != nullptr) s.limit->Cancel();
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&s.mu);
  auto ended = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    return s.loads_running == 0;
  };
  s.mu.AwaitWithTimeout(absl::Condition(&ended), load_wait);
}

std::shared_ptr<LoadLimit> SnapshotReloader::StartLoad() {
  Shared& s = *shared_;
  auto limit = std::make_shared<LoadLimit>(absl::Now() + timeout_);
  uint64_t attempt;
  {
    absl::MutexLock lock(&s.mu);
    attempt = ++s.attempt;
    s.result.reset();
    s.limit = limit;
    ++s.loads_running;
  }
  std::thread([shared = shared_, load = load_, limit, attempt] {
    Loaded loaded = load(*limit);
    // `loaded`, when dropped, is freed after the lock is released.
    absl::MutexLock lock(&shared->mu);
    if (shared->attempt == attempt) shared->result = std::move(loaded);
    --shared->loads_running;
  }).detach();
  return limit;
}

void SnapshotReloader::Run() {
  Shared& s = *shared_;
  for (;;) {
    {
      absl::MutexLock lock(&s.mu);
      // Asked for, and no abandoned load still holding its memory.
      auto ready = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        return s.stopping || (s.pending && s.loads_running == 0);
      };
      s.mu.Await(absl::Condition(&ready));
      if (s.stopping) return;
      s.pending = false;
      s.busy = true;
    }
    const std::shared_ptr<LoadLimit> limit = StartLoad();
    Loaded outcome;
    {
      absl::MutexLock lock(&s.mu);
      auto finished = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        return s.stopping || s.result.has_value();
      };
      s.mu.AwaitWithDeadline(absl::Condition(&finished), limit->deadline());
      if (s.result.has_value()) {
        outcome = *std::move(s.result);
        s.result.reset();
      } else if (s.stopping) {
        outcome = absl::CancelledError(
            "the snapshot reload was cancelled: the server is stopping");
      } else {
        outcome = absl::DeadlineExceededError(
            absl::StrCat("the snapshot reload ran past its time limit of ",
                         absl::FormatDuration(timeout_), " and was abandoned"));
      }
      // A load still running stops, and its result will be dropped.
      limit->Cancel();
      ++s.attempt;
      s.limit = nullptr;
      s.busy = false;
    }
    done_(std::move(outcome));
  }
}

}  // namespace snapshot
