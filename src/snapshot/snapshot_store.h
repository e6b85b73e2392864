// Holds the current Snapshot and swaps in a new one without a restart.
//
// Thread-safe: Current() and Reload() may be called from any thread. A
// decode takes Current() once and keeps the shared_ptr for its duration, so
// a Reload() that swaps in a new snapshot never disturbs it: the old snapshot
// is freed when its last in-flight decode lets go. Loading happens outside
// the lock; only the pointer swap holds it.
#ifndef VIN_SNAPSHOT_SNAPSHOT_STORE_H_
#define VIN_SNAPSHOT_SNAPSHOT_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "snapshot/snapshot.h"

namespace snapshot {

class SnapshotStore {
 public:
  // An empty store: Current() is null until a Reload() succeeds.
  SnapshotStore() = default;
  // A store that starts with `snapshot` (may be null).
  explicit SnapshotStore(std::shared_ptr<const Snapshot> snapshot);

  // Loads `path` and makes it current. On failure the current snapshot stays
  // and the load error is returned. Concurrent reloads are serialised, so the
  // last one to finish wins.
  absl::Status Reload(const std::string& path) ABSL_LOCKS_EXCLUDED(reload_mu_);

  // Makes `snapshot` current (tests, or a caller that loaded it itself).
  void Swap(std::shared_ptr<const Snapshot> snapshot) ABSL_LOCKS_EXCLUDED(mu_);

  // The current snapshot, or null when none is loaded.
  std::shared_ptr<const Snapshot> Current() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Serialises Reload() calls, so that loads do not run twice at once.
  absl::Mutex reload_mu_;
  // Protects current_ (held only to copy or swap the pointer).
  mutable absl::Mutex mu_;
  std::shared_ptr<const Snapshot> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SNAPSHOT_STORE_H_
