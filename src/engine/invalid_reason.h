// The ErrorInfo reason of a request refused by local validation (rule 1):
// which rule of vin::Validate or vin::CheckModelYearHint it broke.
#ifndef VIN_ENGINE_INVALID_REASON_H_
#define VIN_ENGINE_INVALID_REASON_H_

#include "absl/status/status.h"
#include "domain/error_reason.h"

namespace engine {

// INVALID_VIN_LENGTH ... INVALID_MODEL_YEAR for an error of those
// functions; INVALID_VIN for another non-OK status.
domain::ErrorReason InvalidReasonOf(const absl::Status& status);

}  // namespace engine

#endif  // VIN_ENGINE_INVALID_REASON_H_
