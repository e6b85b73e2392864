// Turns the winning spVinDecode pass into what a live vPIC decode looks like:
// `attributes` keyed by vPIC variable name, the typed Vehicle fields, and
// one note per vPIC error code; or only the values (MapValues), for parity.
#ifndef VIN_SNAPSHOT_RESULT_MAPPING_H_
#define VIN_SNAPSHOT_RESULT_MAPPING_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/optional.h"
#include "snapshot/decode_pass.h"
#include "snapshot/snapshot.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {

// The pass's values as vPIC prints them, one per element in variable-name
// order (a multi-valued element's values joined with "; " in rank order),
// and the make's and model's ids. With `provenance`, where each value came
// from is appended to it.
struct MappedValues {
  std::vector<std::pair<uint16_t, std::string>> by_slot;  // (slot, value)
  absl::optional<std::string> make_id;
  absl::optional<std::string> model_id;
};
MappedValues MapValues(const SnapshotIndex& index, const PassResult& pass,
                       absl::string_view vin,
                       std::vector<domain::FieldSource>* provenance);

// With `explain`, fills the decode's provenance too.
SnapshotDecode MapResult(const SnapshotIndex& index, const PassResult& pass,
                         absl::string_view vin, bool explain);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_RESULT_MAPPING_H_
