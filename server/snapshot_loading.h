// Loading the snapshot file (rules 19 and 21), at start and on SIGHUP: the
// load within its deadline, then the checks a file must pass before it is
// used: the pinned sha256 (--snapshot_sha256; a non-empty -wal beside the
// pinned bytes is refused too) and the golden set against the snapshot in
// use (--snapshot_golden_slack).
#ifndef VIN_SERVER_SNAPSHOT_LOADING_H_
#define VIN_SERVER_SNAPSHOT_LOADING_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "snapshot/golden.h"
#include "snapshot/snapshot.h"
#include "snapshot/snapshot_reloader.h"
#include "snapshot/snapshot_store.h"

namespace server {

// What a snapshot file must pass before it is used (rule 21).
struct SnapshotChecks {
  std::string sha256;  // --snapshot_sha256 ("" for any)
  std::shared_ptr<const std::vector<snapshot::GoldenVin>> golden;
  double slack = 0.005;
  const snapshot::SnapshotStore* current = nullptr;
};

// FAILED_PRECONDITION when `loaded` is not the pinned file, or agrees with
// the golden set by more than the slack less than the snapshot in use.
absl::Status CheckSnapshot(const snapshot::Snapshot& loaded,
                           const SnapshotChecks& c);

// The snapshot at `path` loaded within `limit`; past `timeout` (its
// deadline), DEADLINE_EXCEEDED naming --snapshot_reload_timeout.
snapshot::SnapshotReloader::Loaded LoadSnapshotFile(
    const std::string& path, const snapshot::LoadLimit& limit,
    absl::Duration timeout, const SnapshotChecks& checks);

}  // namespace server

#endif  // VIN_SERVER_SNAPSHOT_LOADING_H_
