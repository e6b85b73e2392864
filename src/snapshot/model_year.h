// NHTSA's model-year rules (vPIC fVinModelYear2 and the pass plan of
// spVinDecode), with the reference year as a parameter instead of the clock.
#ifndef VIN_SNAPSHOT_MODEL_YEAR_H_
#define VIN_SNAPSHOT_MODEL_YEAR_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {

// Whether NHTSA applies the position-7 year rule: passenger cars (vehicle
// type 2), MPVs (7) and light trucks (type 3 with truck type 1).
bool IsCarMpvOrLightTruck(const WmiInfo* wmi);

// fVinModelYear2: the year position 10 stands for. `year` is 0 when
// position 10 is not a model-year code. When not `conclusive`, the VIN could
// also be 30 years older (the 2010-2039 cycle is assumed first).
struct VinYear {
  int year = 0;
  bool conclusive = false;
};
VinYear VinModelYear(absl::string_view vin17, const WmiInfo* wmi,
                     int reference_year);

// One spVinDecode_Core pass to run: its model year (0 = none: every schema
// of the WMI applies) and its flags.
struct PlannedPass {
  int number = 0;  // vPIC's pass number: 2 (hint), 3, 4 (the older cycle)
  int year = 0;
  bool conclusive = true;
  bool error12 = false;  // the year differs from the caller's hint
};

// How many Wmi_VinSchema links of `wmi` cover `year`.
int LinksCovering(const SnapshotIndex& index, const WmiInfo* wmi, int year);

// The passes spVinDecode starts with, before any hint pass result is known.
// `hint` is the caller's model year (0 = none). If the plan holds a hint
// pass (number 2), the caller runs it first and runs the others only when
// it found no pattern (code 8) and position 10 gave a year: see
// NeedsFallbackAfterHint().
std::vector<PlannedPass> PlanPasses(const SnapshotIndex& index,
                                    absl::string_view vin17,
                                    const WmiInfo* wmi, int hint,
                                    int reference_year);
bool NeedsFallbackAfterHint(const std::vector<PlannedPass>& plan,
                            bool hint_pass_found_nothing);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_MODEL_YEAR_H_
