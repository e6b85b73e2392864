#include "engine/model_year_candidates.h"

#include "vin/vin.h"

namespace engine {

std::vector<domain::ModelYearCandidate> LiveModelYearCandidates(
    absl::string_view vin17, const domain::Vehicle& vehicle, int first,
    int last) {
  if (vin17.size() != 17 || vehicle.model_year == 0) return {};
  auto text = vehicle.attributes.find("AdditionalErrorText");
  if (text == vehicle.attributes.end() ||
      text->second.find(domain::kModelYearMayBeIncorrect) ==
          std::string::npos) {
    return {};
  }
  const std::vector<int> years = vin::ModelYearsOf(vin17[9], first, last);
  int other = 0;
  bool found = false;
  for (int y : years) {
    if (y == vehicle.model_year) {
      found = true;
    } else if (y == vehicle.model_year - 30 || y == vehicle.model_year + 30) {
      other = y;
    }
  }
  if (!found || other == 0) return {};
  return {{vehicle.model_year, domain::year_rule::kVpic, true},
          {other, domain::year_rule::kOtherCycle, false}};
}

}  // namespace engine
