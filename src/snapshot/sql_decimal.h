// The arithmetic of vPIC's Conversion formulas ("#x# / 16.387064"), done the
// way vPIC's SQL Server does it on decimal literals, so that a converted
// value reads like the live API's (3.5 L -> "213.58310433156" CI, "3500.0" CC).
#ifndef VIN_SNAPSHOT_SQL_DECIMAL_H_
#define VIN_SNAPSHOT_SQL_DECIMAL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace snapshot {

// `x op constant` for op '*' or '/', with SQL Server's decimal result
// precision and scale (multiplication: scale s1 + s2; division: scale
// max(6, s1 + p2 + 1), rounded half away from zero). Returns "0" when an
// operand is not a decimal literal or on division by zero, as vPIC's
// spVinDecode does when the formula fails.
std::string ApplyDecimalFormula(absl::string_view x, char op,
                                absl::string_view constant);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SQL_DECIMAL_H_
