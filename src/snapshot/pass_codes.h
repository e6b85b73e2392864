// The end of one spVinDecode_Core pass (decode_pass.h): its vPIC error codes
// and AdditionalErrorText, and the scores spVinDecode picks the best pass by.
#ifndef VIN_SNAPSHOT_PASS_CODES_H_
#define VIN_SNAPSHOT_PASS_CODES_H_

#include "absl/strings/string_view.h"
#include "snapshot/decode_pass.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {

// Sets result->codes (ascending), result->off_road and
// result->additional_error_text from the pass's items. `wmi` and `raw_wmi`
// as for RunPass; `vehicle_type_id` is the published WMI's vehicle type (0
// when it has none).
void ComputeCodes(const SnapshotIndex& ix, absl::string_view vin,
                  const WmiInfo* wmi, const WmiInfo* raw_wmi,
                  int vehicle_type_id, PassResult* result);

// Sets result->error_value, elements_weight and patterns.
void ComputeScores(const SnapshotIndex& ix, PassResult* result);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_PASS_CODES_H_
