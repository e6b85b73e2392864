#include "snapshot/snapshot_store.h"

#include <utility>

namespace snapshot {

SnapshotStore::SnapshotStore(std::shared_ptr<const Snapshot> snapshot)
    : current_(std::move(snapshot)) {}

absl::Status SnapshotStore::Reload(const std::string& path) {
  absl::MutexLock reload_lock(&reload_mu_);
  absl::StatusOr<std::shared_ptr<const Snapshot>> loaded = Snapshot::Load(path);
  if (!loaded.ok()) return loaded.status();
  Swap(*std::move(loaded));
  return absl::OkStatus();
}

void SnapshotStore::Swap(std::shared_ptr<const Snapshot> snapshot) {
  std::shared_ptr<const Snapshot> old;
  {
    absl::MutexLock lock(&mu_);
    old = std::exchange(current_, std::move(snapshot));
  }
  // `old` is released here, outside the lock: if this was its last user,
  // freeing a whole index does not stall readers.
}

std::shared_ptr<const Snapshot> SnapshotStore::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

}  // namespace snapshot
