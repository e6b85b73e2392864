// vPIC ErrorCode numbers and their texts, as the live API words them. The
// snapshot has no ErrorCode table, so the texts are transcribed here.
#ifndef VIN_SNAPSHOT_VPIC_CODES_H_
#define VIN_SNAPSHOT_VPIC_CODES_H_

#include <string>

namespace snapshot {

namespace code {
inline constexpr int kClean = 0;
inline constexpr int kCheckDigit = 1;
// Rule 21's corrections (vPIC's spVinDecode_ErrorCode): one correction, the
// check digit assumed right (3); several in one position (4); in several
// positions (5).
inline constexpr int kCorrected = 3;
inline constexpr int kCorrectedSeveral = 4;
inline constexpr int kErrorsInPositions = 5;
inline constexpr int kIncompleteVin = 6;              // a partial VIN ('*')
inline constexpr int kManufacturerNotRegistered = 7;  // unknown WMI
inline constexpr int kNoDetailedData = 8;
inline constexpr int kGlider = 9;
inline constexpr int kOffRoad = 10;
inline constexpr int kIncorrectModelYear = 11;
inline constexpr int kModelYearMismatch = 12;
inline constexpr int kUnusedPositions = 14;
inline constexpr int kInvalidCharacters = 400;
}  // namespace code

// "VIN decoded clean. Check Digit (9th position) is correct" for 0, ...
std::string VpicErrorText(int code);

// vPIC's AdditionalErrorText for codes 4 and 5 (how to read PossibleValues),
// "" for others.
std::string VpicErrorHelp(int code);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_VPIC_CODES_H_
