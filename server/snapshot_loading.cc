#include "server/snapshot_loading.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace server {

absl::Status CheckSnapshot(const snapshot::Snapshot& loaded,
                           const SnapshotChecks& c) {
  const snapshot::SnapshotInfo& info = loaded.info();
  if (!c.sha256.empty() && info.sha256 != c.sha256) {
    return absl::FailedPreconditionError(
        absl::StrCat("the snapshot ", info.path, " has sha256 ", info.sha256,
                     ", not the pinned --snapshot_sha256 ", c.sha256,
                     ": refused, the snapshot in use stays"));
  }
  if (!c.sha256.empty()) {
    // The file is in WAL mode: SQLite also reads what a -wal beside it
    // holds, which the hash does not cover. Pinned, it must be empty.
    struct stat wal;
    if (stat((info.path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the snapshot ", info.path, " has a non-empty ", info.path,
          "-wal beside it, whose changes --snapshot_sha256 does not cover: "
          "refused, the snapshot in use stays"));
    }
  }
  if (c.golden == nullptr || c.golden->empty() || c.current == nullptr) {
    return absl::OkStatus();
  }
  const std::shared_ptr<const snapshot::Snapshot> current =
      c.current->Current();
  if (current == nullptr || current->info().sha256 == info.sha256) {
    return absl::OkStatus();
  }
  const int year = static_cast<int>(
      absl::ToCivilYear(absl::Now(), absl::UTCTimeZone()).year());
  const snapshot::GoldenScore now =
      snapshot::ScoreGolden(*current, *c.golden, year);
  const snapshot::GoldenScore next =
      snapshot::ScoreGolden(loaded, *c.golden, year);
  if (next.share() < now.share() - c.slack) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the snapshot %s agrees with %d of %d golden VINs, the one in use "
        "with %d (more than --snapshot_golden_slack %.1f points less): "
        "refused, the snapshot in use stays; for example %s",
        info.path, next.agreed, next.checked, now.agreed, c.slack * 100,
        next.first_miss));
  }
  return absl::OkStatus();
}

snapshot::SnapshotReloader::Loaded LoadSnapshotFile(
    const std::string& path, const snapshot::LoadLimit& limit,
    absl::Duration timeout, const SnapshotChecks& checks) {
  if (path.empty()) {
    return absl::FailedPreconditionError(
        "no snapshot file to reload: the server was started without "
        "--snapshot_path");
  }
  auto loaded = snapshot::Snapshot::Load(path, limit);
  if (absl::IsDeadlineExceeded(loaded.status())) {
    return absl::DeadlineExceededError(absl::StrCat(
        "loading the snapshot ", path, " took longer than ",
        absl::FormatDuration(timeout), " (--snapshot_reload_timeout)"));
  }
  if (!loaded.ok()) return loaded;
  if (absl::Status st = CheckSnapshot(**loaded, checks); !st.ok()) return st;
  return loaded;
}

}  // namespace server
