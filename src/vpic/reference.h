// vPIC's reference requests (DESIGN rule 18): every vehicles endpoint but
// the VIN decodes (GetAllMakes, GetModelsForMake, DecodeWMI, ...). The engine
// asks vPIC for JSON and keeps the document as vPIC sent it; callers render
// it in the format they asked.
#ifndef VIN_VPIC_REFERENCE_H_
#define VIN_VPIC_REFERENCE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace vpic {

// The URL of reference request `reference` (DecodeKey::reference: a path
// below /api/vehicles/ with its query) on `base_url` (vPIC's
// .../api/vehicles), asking for JSON.
std::string ReferenceUrl(absl::string_view base_url,
                         absl::string_view reference);

// Whether `body` is a vPIC reference answer: a JSON object whose "Results"
// is an array of objects and whose "Count" is a number; anything else (a
// maintenance page, a truncated body) is not, and is retried as a decode's
// bad answer is. An empty Results is an answer ("nothing matches").
absl::Status CheckReferenceDocument(absl::string_view body);

}  // namespace vpic

#endif  // VIN_VPIC_REFERENCE_H_
