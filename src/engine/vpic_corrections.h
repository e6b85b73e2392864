// Rule 21: an invalid VIN answered on vPIC's paths as vPIC answers it: the
// snapshot's decode of the VIN as it stands, plus vPIC's correction fields
// made from the suggestions (vPIC's spVinDecode_ErrorCode is the model).
#ifndef VIN_ENGINE_VPIC_CORRECTIONS_H_
#define VIN_ENGINE_VPIC_CORRECTIONS_H_

#include <string>
#include <vector>

#include "domain/decode_result.h"

namespace engine {

// Adds to `r` (the decode of `vin17`, an invalid VIN) what vPIC adds for
// `suggestions` (VINs one character from `vin17`, best first), when there
// are any:
//  - one: code 3, SuggestedVIN the corrected VIN, PossibleValues "(14:0)";
//  - several in one position: code 4, SuggestedVIN the VIN with '!' there,
//    PossibleValues "(8:12)", and vPIC's help in AdditionalErrorText;
//  - in several positions: code 5, '!' at each, a group for each in
//    position order ("(8:12)(12:AB)"), vPIC's help likewise.
// The notes stay in ascending code order; `r.encoded` is left alone.
void AddVpicCorrections(const std::string& vin17,
                        const std::vector<std::string>& suggestions,
                        domain::DecodeResult* r);

}  // namespace engine

#endif  // VIN_ENGINE_VPIC_CORRECTIONS_H_
