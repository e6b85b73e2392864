// Rule 21: a snapshot update that cannot regress. The golden set is a list
// of VINs with the make, model and model year vPIC gives them
// ("VIN,Make,Model,ModelYear" lines; '#' starts a comment); a snapshot is
// scored by how many of them it decodes to the same three (SameValue). A
// reload whose score is lower than the current snapshot's by more than
// --snapshot_golden_slack is refused (server/server.cc).
//
// Pure functions.
#ifndef VIN_SNAPSHOT_GOLDEN_H_
#define VIN_SNAPSHOT_GOLDEN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "snapshot/snapshot.h"

namespace snapshot {

struct GoldenVin {
  std::string vin;
  std::string make;
  std::string model;
  int model_year = 0;
};

// The set in `text`; INVALID_ARGUMENT naming the first bad line.
absl::StatusOr<std::vector<GoldenVin>> ParseGolden(absl::string_view text);

struct GoldenScore {
  int checked = 0;
  int agreed = 0;
  // The share that agreed (1 for an empty set).
  double share() const {
    return checked == 0 ? 1.0 : static_cast<double>(agreed) / checked;
  }
  // One of those that did not, for the log ("VIN: want X, got Y").
  std::string first_miss;
};

// Decodes each VIN of `set` with `snap` (the reference year as the engine
// uses it) and counts those whose make, model and model year agree.
GoldenScore ScoreGolden(const Snapshot& snap, const std::vector<GoldenVin>& set,
                        int reference_year);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_GOLDEN_H_
