// Runs reloads of the snapshot off the thread that asks for them (main's
// signal thread), one at a time, each within a time limit and cancellable.
//
// Request() never blocks. It starts a reload; while one is pending (asked
// for, not started) it joins that one; while one is in progress it folds
// into one more after it, since the file may have changed after the
// running load opened it: any number of requests during a reload make one
// more. A reload runs `load` on a thread of its own with a LoadLimit
// whose deadline is `timeout` after it starts; the reloader's own thread
// waits for it and calls `done` with
//   - what `load` returned, when it returned by the deadline;
//   - DEADLINE_EXCEEDED at the deadline, whether or not the load has
//     noticed it: the load is abandoned (its limit cancelled, its result
//     dropped if it ever comes);
//   - CANCELLED when Stop() comes first.
// `done` runs on the reloader's thread, one call at a time, never after
// Stop() has returned. A reload waits for the thread of an abandoned one to
// end (a load notices its limit within milliseconds), so that two loads
// never hold memory at once.
//
// Thread-safe: Request() and Stop() may be called from any thread but
// `done`'s.
#ifndef VIN_SNAPSHOT_SNAPSHOT_RELOADER_H_
#define VIN_SNAPSHOT_SNAPSHOT_RELOADER_H_

#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "snapshot/load_limit.h"
#include "snapshot/snapshot.h"

namespace snapshot {

class SnapshotReloader {
 public:
  using Loaded = absl::StatusOr<std::shared_ptr<const Snapshot>>;
  // Loads the snapshot within the limit. Runs on a thread that an abandoned
  // load does not join: it must own whatever it uses (capture by value).
  using LoadFn = std::function<Loaded(const LoadLimit&)>;
  using DoneFn = std::function<void(Loaded)>;

  SnapshotReloader(LoadFn load, DoneFn done, absl::Duration timeout);
  ~SnapshotReloader();  // Stop()
  SnapshotReloader(const SnapshotReloader&) = delete;
  SnapshotReloader& operator=(const SnapshotReloader&) = delete;

  enum class Requested {
    kStarted,  // a reload starts now (once an abandoned load has ended)
    kFolded,   // joins the pending reload, or one more after the running one
    kStopped,  // Stop() was called: nothing happens
  };
  Requested Request();

  // Cancels the reload in progress (`done` gets CANCELLED), forgets a
  // folded one, and joins the reloader's thread; then waits up to
  // `load_wait` for the thread of a cancelled or abandoned load to end.
  // Later calls return at once.
  void Stop(absl::Duration load_wait = absl::Seconds(2));

 private:
  struct Shared;  // with the load threads, which may outlive the reloader

  void Run();
  // Starts `load_` on a thread of its own; returns its limit.
  std::shared_ptr<LoadLimit> StartLoad();

  const LoadFn load_;
  const DoneFn done_;
  const absl::Duration timeout_;
  const std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SNAPSHOT_RELOADER_H_
