// Turns the winning spVinDecode pass into what a live vPIC decode looks like:
// `attributes` keyed by vPIC variable name, the typed Vehicle fields, and
// one note per vPIC error code.
#ifndef VIN_SNAPSHOT_RESULT_MAPPING_H_
#define VIN_SNAPSHOT_RESULT_MAPPING_H_

#include "snapshot/decode_pass.h"
#include "snapshot/snapshot.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {

// With `explain`, fills the decode's provenance too.
SnapshotDecode MapResult(const SnapshotIndex& index, const PassResult& pass,
                         absl::string_view vin, bool explain);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_RESULT_MAPPING_H_
