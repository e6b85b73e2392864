// Parsing of vPIC DecodeVinValues JSON answers.
#ifndef VIN_VPIC_PARSE_H_
#define VIN_VPIC_PARSE_H_

#include <string>
#include <vector>

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

// One result of a DecodeVINValuesBatch answer.
struct BatchResult {
  std::string vin;  // its `VIN` field, trimmed and upper-cased
  // Parsed exactly as a DecodeVinValues result is; an error when this
  // result alone is malformed.
  absl::StatusOr<Decoded> decoded;
};

// Parses the body of a DecodeVINValuesBatch answer: one result per VIN, in
// the order vPIC sent them (callers match them by `vin`, not by position).
// Results without a VIN field are left out. Returns INVALID_ARGUMENT when
// the body as a whole is not vPIC JSON (as ParseDecodeVinValues does).
absl::StatusOr<std::vector<BatchResult>> ParseDecodeVinValuesBatch(
    absl::string_view body);

}  // namespace vpic

#endif  // VIN_VPIC_PARSE_H_
