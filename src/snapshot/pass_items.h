// The items of one spVinDecode_Core pass (decode_pass.h) that come from no
// pattern: the WMI's (vehicle type, manufacturer, its id, the model year),
// the make (from the winning model, else the WMI's only make), and the
// Conversion rules' results.
#ifndef VIN_SNAPSHOT_PASS_ITEMS_H_
#define VIN_SNAPSHOT_PASS_ITEMS_H_

#include "snapshot/decode_pass.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {

// Adds the WMI's items. Returns the vehicle type id the pass's warnings read:
// the WMI's when it names a vehicle type, else 0.
int AddWmiItems(const SnapshotIndex& ix, const WmiInfo& wmi,
                PassResult* result);

// Make from the winning model; without a model, the WMI's make when it has
// exactly one.
void AddMake(const SnapshotIndex& ix, const WmiInfo& wmi, PassResult* result);

// Each Conversion whose source element has a value and whose target has
// none, best source first.
void ApplyConversions(const SnapshotIndex& ix, PassResult* result);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_PASS_ITEMS_H_
