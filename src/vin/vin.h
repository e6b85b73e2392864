// VIN normalisation and local validation (49 CFR 565). Pure functions, safe
// to call from any thread.
#ifndef VIN_VIN_VIN_H_
#define VIN_VIN_VIN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace vin {

enum class CheckDigitPolicy { kEnforce, kWarn };

// A remark produced by local validation under the WARN policy.
struct Warning {
  std::string code;     // "check_digit" or "model_year"
  std::string message;  // human-readable, names the position and character
};

struct ValidatedVin {
  std::string vin;                // normalised, 17 characters (partial: 3-17)
  std::vector<Warning> warnings;  // empty under ENFORCE
};

// Which rule an error of Validate or CheckModelYearHint broke, so that
// callers can name it without reading the message (the ErrorInfo reasons
// INVALID_VIN_LENGTH ... INVALID_MODEL_YEAR).
enum class Problem {
  kNone,           // OK, or a status these functions did not make
  kLength,         // empty, or not 17 characters (partial: not 3-17)
  kCharacter,      // I, O, Q, or not a digit or letter (partial: or '*')
  kModelYearCode,  // position 10 is no model-year code
  kCheckDigit,     // position 9 is not the computed check digit
  kModelYearHint,  // a hint position 10 cannot mean
};
Problem ProblemOf(const absl::Status& status);

// Whether `c` is a digit or an upper-case ASCII letter: what a normalised
// input may hold before the VIN rules are applied (I, O and Q included), as
// the snapshot's decoder and its corrections read it.
inline constexpr bool IsDigitOrUpper(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
}

// Trims surrounding ASCII white space and upper-cases ASCII letters.
std::string Normalize(absl::string_view input);

// 49 CFR 565.15(c): the weight of each position in the check-digit sum.
inline constexpr int kCheckDigitWeights[17] = {8, 7, 6, 5, 4, 3, 2, 10, 0,
                                               9, 8, 7, 6, 5, 4, 3, 2};
// 49 CFR 565.15(c): the numeric value a VIN character stands for
// (A1..H8 J1..N5 P7 R9 S2..Z9); I, O and Q are never VIN characters and
// count as 0, like anything else that is not one.
int Transliterate(char c);

// The check digit ('0'..'9' or 'X') for a 17-character VIN whose characters
// are all VIN characters (digits and letters except I, O, Q). Position 9 is
// ignored.
char ComputeCheckDigit(absl::string_view vin17);

// Whether c may stand in position 10 as a model-year code
// (ABCDEFGHJKLMNPRSTVWXY123456789).
bool IsModelYearCode(char c);

// The model years position-10 code `code` can stand for between `first`
// and `last` (inclusive), oldest first: the codes repeat every 30 years
// ('A' is 1980, 2010, 2040...). Empty for a character that is no
// model-year code.
std::vector<int> ModelYearsOf(char code, int first, int last);

// DESIGN rule 19: a model-year hint (`year`, 0 for none) must be a year
// that position 10 of `vin17` (a validated, normalised VIN) can mean,
// between `first` and `last`; when position 10 is no year code (accepted
// under the WARN policy), any year in that range. INVALID_ARGUMENT names
// the years the VIN allows.
absl::Status CheckModelYearHint(absl::string_view vin17, int year, int first,
                                int last);

// Normalises `input` and checks, in order: not empty, length 17, only VIN
// characters (digits, letters except I, O, Q), the position-10 model-year
// code, and the position-9 check digit. Failures are INVALID_ARGUMENT whose
// message names the rule broken (and the position and character). Under
// kWarn, a check-digit or model-year-code mismatch is not an error: it is
// returned as a warning and the VIN is accepted.
absl::StatusOr<ValidatedVin> Validate(absl::string_view input,
                                      CheckDigitPolicy policy);

// Rule 21: the VIN of an input read from a windshield or door-jamb barcode,
// which prints an 'I' before the 17 characters: for an input of 18
// characters (normalised) whose first is 'I', the 17 after it. Nullopt for
// any other input (never a VIN: 'I' is no VIN character).
absl::optional<std::string> BarcodeRead(absl::string_view input);

// A partial VIN (DESIGN rule 18): '*' for each unknown position, or fewer
// than 17 characters, as vPIC decodes them.
bool IsPartial(absl::string_view normalized);

// Validate, for an input that may be a partial VIN: normalises it and
// checks what can be checked: 3 to 17 characters, the WMI (positions 1-3)
// known, VIN characters or '*', and position 10's model-year code when it
// is there (under kEnforce). A partial VIN has no check digit to check. An
// input that is no partial VIN is checked as Validate checks it.
absl::StatusOr<ValidatedVin> ValidatePartial(absl::string_view input,
                                             CheckDigitPolicy policy);

}  // namespace vin

#endif  // VIN_VIN_VIN_H_
