#include "snapshot/vpic_codes.h"

#include "absl/strings/str_cat.h"

namespace snapshot {

std::string VpicErrorText(int c) {
  switch (c) {
    case code::kClean:
      return "VIN decoded clean. Check Digit (9th position) is correct";
    case code::kCheckDigit:
      return "Check Digit (9th position) does not calculate properly";
    case code::kCorrected:
      return "VIN corrected, error in one position (assuming Check Digit is "
             "correct)";
    case code::kCorrectedSeveral:
      return "VIN corrected, error in one position only (indicated by ! in "
             "Suggested VIN), multiple matches found";
    case code::kErrorsInPositions:
      return "VIN has errors in few positions";
    case code::kIncompleteVin:
      return "Incomplete VIN";
    case code::kManufacturerNotRegistered:
      return "Manufacturer is not registered with NHTSA for sale or "
             "importation in the U.S. for use on U.S roads; Please contact "
             "the manufacturer directly for more information";
    case code::kNoDetailedData:
      return "No detailed data available currently";
    case code::kGlider:
      return "Glider: the vehicle is a glider kit";
    case code::kOffRoad:
      return "Off-road vehicle: may not be decoded as an on-road vehicle";
    case code::kIncorrectModelYear:
      return "Incorrect Model Year, decoded data may not be accurate";
    case code::kModelYearMismatch:
      return "Model Year decoded from the VIN differs from the Model Year "
             "provided";
    case code::kUnusedPositions:
      return "Unable to provide information for some of the characters in "
             "the VIN, based on the manufacturer submission.";
    case code::kInvalidCharacters:
      return "Invalid Characters Present";
    default:
      return absl::StrCat("vPIC error code ", c);
  }
}

std::string VpicErrorHelp(int c) {
  switch (c) {
    case code::kCorrectedSeveral:
      return "In the Possible values section, the Numeric value before the : "
             "indicates the position in error and the values after the : "
             "indicate the possible values that are allowed in this position.";
    case code::kErrorsInPositions:
      return "The error positions are indicated by ! in Suggested VIN. In the "
             "Possible values section, each pair of parenthesis indicate "
             "information about each error position in VIN . The Numeric value "
             "before the : indicates the position in error and the values "
             "after the : indicate the possible values that are allowed in "
             "this position";
    default:
      return "";
  }
}

}  // namespace snapshot
