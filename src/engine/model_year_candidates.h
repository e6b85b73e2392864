// Rule 21: the model years a live vPIC answer leaves open.
#ifndef VIN_ENGINE_MODEL_YEAR_CANDIDATES_H_
#define VIN_ENGINE_MODEL_YEAR_CANDIDATES_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "domain/provenance.h"
#include "domain/vehicle.h"

namespace engine {

// When vPIC's AdditionalErrorText says the model year may be incorrect
// (domain::kModelYearMayBeIncorrect) and position 10 of `vin17` stands for
// vPIC's year and a year 30 years from it (both between `first` and
// `last`): both, vPIC's first with the rule "vpic". Else none.
std::vector<domain::ModelYearCandidate> LiveModelYearCandidates(
    absl::string_view vin17, const domain::Vehicle& vehicle, int first,
    int last);

}  // namespace engine

#endif  // VIN_ENGINE_MODEL_YEAR_CANDIDATES_H_
