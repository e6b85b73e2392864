// Parsing of vPIC DecodeVinValues JSON answers.
#ifndef VIN_VPIC_PARSE_H_
#define VIN_VPIC_PARSE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vpic/vehicle.h"

namespace vpic {

// Parses the body of a DecodeVinValues answer (format=json) into the first
// result's vehicle and notes. Values are trimmed ("TRUCK " -> "TRUCK");
// empty values are left out. Numeric typed fields that do not parse stay 0
// (their text is still in `attributes`). ErrorCode may be a comma list
// ("1,8"); each code becomes one note whose message is the matching item of
// ErrorText ("1 - Check Digit ..." split on "; ", the "N - " prefix removed).
//
// Returns INVALID_ARGUMENT (message saying what is wrong) when the body is
// not vPIC JSON: not JSON, not an object, no `Results` array, an empty
// `Results`, or a first result that is not an object of strings/nulls.
// Callers classify that as a retryable `bad_response`.
absl::StatusOr<Decoded> ParseDecodeVinValues(absl::string_view body);

}  // namespace vpic

#endif  // VIN_VPIC_PARSE_H_
