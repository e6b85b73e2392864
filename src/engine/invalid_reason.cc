#include "engine/invalid_reason.h"

#include "vin/vin.h"

namespace engine {

domain::ErrorReason InvalidReasonOf(const absl::Status& status) {
  using R = domain::ErrorReason;
  switch (vin::ProblemOf(status)) {
    case vin::Problem::kLength:
      return R::kInvalidVinLength;
    case vin::Problem::kCharacter:
      return R::kInvalidVinCharacter;
    case vin::Problem::kModelYearCode:
      return R::kInvalidVinModelYearCode;
    case vin::Problem::kCheckDigit:
      return R::kInvalidVinCheckDigit;
    case vin::Problem::kModelYearHint:
      return R::kInvalidModelYear;
    case vin::Problem::kNone:
      break;
  }
  return R::kInvalidVin;
}

}  // namespace engine
