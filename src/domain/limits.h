// The limits of a request, one definition for the server and vinctl
// (docs/DESIGN.md "Limits").
#ifndef VIN_DOMAIN_LIMITS_H_
#define VIN_DOMAIN_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace domain {

// A model-year hint is 0 (none) or a year in [kMinModelYear, kMaxModelYear]:
// 17-character VINs began with model year 1981 (1980 is vPIC's first).
inline constexpr int kMinModelYear = 1980;
inline constexpr int kMaxModelYear = 2100;
// A DecodeBatch item's request_id, in bytes; a longer one fails its item
// (INVALID_REQUEST), echoed cut to this length.
inline constexpr size_t kMaxRequestIdBytes = 128;
// One request message (a DecodeBatch item, a unary request), in bytes.
inline constexpr size_t kMaxMessageBytes = 64 * 1024;

// OK for a valid model-year hint, else INVALID_ARGUMENT naming `field` and
// the range. (The server also checks the hint against the VIN's position
// 10 and the year: vin::CheckModelYearHint with LastModelYear.)
absl::Status CheckModelYear(int year, absl::string_view field = "model_year");

// The latest model-year hint the server accepts at `now`: next year + 1
// (a model year may be sold from the year before it; one more year of
// slack), in UTC.
int LastModelYear(absl::Time now);

}  // namespace domain

#endif  // VIN_DOMAIN_LIMITS_H_
