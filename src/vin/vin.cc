#include "vin/vin.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace vin {
namespace {

// The status payload that carries a Problem (one digit).
constexpr char kProblemPayload[] = "vin.Problem";

absl::Status Invalid(Problem problem, absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(
      kProblemPayload,
      absl::Cord(
          std::string(1, static_cast<char>('0' + static_cast<int>(problem)))));
  return status;
}

constexpr size_t kVinLength = 17;
constexpr size_t kCheckDigitIndex = 8;  // position 9
constexpr size_t kModelYearIndex = 9;   // position 10

constexpr const int* kWeights = kCheckDigitWeights;

}  // namespace

int Transliterate(char c) {
  static constexpr char kLetterValues[] = "12345678012345070923456789";
  static_assert(sizeof(kLetterValues) == 26 + 1, "one value per letter");
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'Z') return kLetterValues[c - 'A'] - '0';
  return 0;
}

namespace {

bool IsNonAscii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

bool ContainsNonAscii(absl::string_view s) {
  for (char c : s) {
    if (IsNonAscii(c)) return true;
  }
  return false;
}

// "'A'" for a printable character, "non-ASCII byte 0xC3" or
// "control character 0x09" otherwise, so that the message stays readable
// whatever the input held.
std::string DescribeChar(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x80) return absl::StrFormat("non-ASCII byte 0x%02X", byte);
  if (byte < 0x20 || byte == 0x7F) {
    return absl::StrFormat("control character 0x%02X", byte);
  }
  return absl::StrCat("'", std::string(1, c), "'");
}

// Checks the character at 0-based `index` of a normalised VIN.
absl::Status CheckCharacter(char c, size_t index) {
  if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
    return absl::OkStatus();
  }
  if (c >= 'A' && c <= 'Z') {
    if (c == 'I' || c == 'O' || c == 'Q') {
      return Invalid(
          Problem::kCharacter,
          absl::StrCat("VIN position ", index + 1, " is ", DescribeChar(c),
                       ": the letters I, O and Q are never used in VINs"));
    }
    return absl::OkStatus();
  }
  return Invalid(
      Problem::kCharacter,
      absl::StrCat("VIN position ", index + 1, " is ", DescribeChar(c),
                   ": only digits and letters are allowed"));
}

std::string ModelYearMessage(char c) {
  return absl::StrCat("VIN position 10 is ", DescribeChar(c),
                      ": not a model-year code (0, U and Z are never used)");
}

std::string CheckDigitMessage(char found, char computed) {
  return absl::StrCat("check digit mismatch: VIN position 9 is ",
                      DescribeChar(found), ", the check digit computes to ",
                      DescribeChar(computed));
}

}  // namespace

Problem ProblemOf(const absl::Status& status) {
  if (status.ok()) return Problem::kNone;
  const absl::optional<absl::Cord> p = status.GetPayload(kProblemPayload);
  if (!p || p->size() != 1) return Problem::kNone;
  const int n = static_cast<unsigned char>((*p)[0]) - '0';
  if (n < 0 || n > static_cast<int>(Problem::kModelYearHint)) {
    return Problem::kNone;
  }
  return static_cast<Problem>(n);
}

std::string Normalize(absl::string_view input) {
  return absl::AsciiStrToUpper(absl::StripAsciiWhitespace(input));
}

absl::optional<std::string> BarcodeRead(absl::string_view input) {
  input = absl::StripAsciiWhitespace(input);
  if (input.size() != kVinLength + 1 || (input[0] != 'I' && input[0] != 'i')) {
    return absl::nullopt;
  }
  return absl::AsciiStrToUpper(input.substr(1));
}

char ComputeCheckDigit(absl::string_view vin17) {
  int sum = 0;
  for (size_t i = 0; i < vin17.size() && i < kVinLength; ++i) {
    sum += Transliterate(vin17[i]) * kWeights[i];
  }
  const int remainder = sum % 11;
  return remainder == 10 ? 'X' : static_cast<char>('0' + remainder);
}

// Position 10's model-year codes in order from 1980 (49 CFR 565.15(d)).
constexpr absl::string_view kModelYearCodes = "ABCDEFGHJKLMNPRSTVWXY123456789";
constexpr int kFirstCodeYear = 1980;

bool IsModelYearCode(char c) {
  return kModelYearCodes.find(c) != absl::string_view::npos;
}

std::vector<int> ModelYearsOf(char code, int first, int last) {
  std::vector<int> years;
  const size_t i = kModelYearCodes.find(code);
  if (i == absl::string_view::npos) return years;
  const int cycle = static_cast<int>(kModelYearCodes.size());  // 30
  for (int y = kFirstCodeYear + static_cast<int>(i); y <= last; y += cycle) {
    if (y >= first) years.push_back(y);
  }
  return years;
}

absl::Status CheckModelYearHint(absl::string_view vin17, int year, int first,
                                int last) {
  if (year == 0) return absl::OkStatus();
  const char code =
      vin17.size() > kModelYearIndex ? vin17[kModelYearIndex] : '\0';
  if (!IsModelYearCode(code)) {
    if (year >= first && year <= last) return absl::OkStatus();
    return Invalid(Problem::kModelYearHint,
                   absl::StrCat("model_year must be 0 (no hint) or between ",
                                first, " and ", last, ", got ", year));
  }
  const std::vector<int> years = ModelYearsOf(code, first, last);
  for (int y : years) {
    if (y == year) return absl::OkStatus();
  }
  return Invalid(
      Problem::kModelYearHint,
      absl::StrCat(
          "model_year ", year, " does not fit this VIN: position 10 is ",
          DescribeChar(code), ", which stands for ",
          years.empty() ? std::string("no year") : absl::StrJoin(years, " or "),
          " (between ", first, " and ", last, "); send one of those, or 0"));
}

absl::StatusOr<ValidatedVin> Validate(absl::string_view input,
                                      CheckDigitPolicy policy) {
  ValidatedVin result;
  result.vin = Normalize(input);
  const std::string& vin = result.vin;

  if (vin.empty()) return Invalid(Problem::kLength, "VIN is empty");

  if (vin.size() != kVinLength) {
    std::string message =
        absl::StrCat("VIN must be 17 characters, got ", vin.size());
    if (ContainsNonAscii(vin)) {
      absl::StrAppend(&message,
                      " bytes, some of them non-ASCII (only digits and "
                      "letters are allowed)");
    }
    return Invalid(Problem::kLength, message);
  }

  for (size_t i = 0; i < vin.size(); ++i) {
    absl::Status status = CheckCharacter(vin[i], i);
    if (!status.ok()) return status;
  }

  const char year_code = vin[kModelYearIndex];
  if (!IsModelYearCode(year_code)) {
    std::string message = ModelYearMessage(year_code);
    if (policy == CheckDigitPolicy::kEnforce) {
      return Invalid(Problem::kModelYearCode, message);
    }
    result.warnings.push_back({"model_year", std::move(message)});
  }

  const char found = vin[kCheckDigitIndex];
  const char computed = ComputeCheckDigit(vin);
  if (found != computed) {
    std::string message = CheckDigitMessage(found, computed);
    if (policy == CheckDigitPolicy::kEnforce) {
      return Invalid(Problem::kCheckDigit, message);
    }
    result.warnings.push_back({"check_digit", std::move(message)});
  }

  return result;
}

bool IsPartial(absl::string_view normalized) {
  return normalized.size() < kVinLength ||
         normalized.find('*') != absl::string_view::npos;
}

absl::StatusOr<ValidatedVin> ValidatePartial(absl::string_view input,
                                             CheckDigitPolicy policy) {
  ValidatedVin result;
  result.vin = Normalize(input);
  const std::string& vin = result.vin;
  if (!IsPartial(vin) || vin.size() > kVinLength) return Validate(vin, policy);
  if (vin.size() < 3) {
    return Invalid(Problem::kLength,
                   absl::StrCat("a partial VIN has at least its 3-character "
                                "WMI, got ",
                                vin.size(), " characters"));
  }
  for (size_t i = 0; i < vin.size(); ++i) {
    if (vin[i] == '*') {
      if (i < 3) {
        return Invalid(Problem::kCharacter,
                       absl::StrCat("VIN position ", i + 1,
                                    " is '*': a partial VIN's WMI "
                                    "(positions 1-3) must be known"));
      }
      continue;
    }
    absl::Status status = CheckCharacter(vin[i], i);
    if (!status.ok()) return status;
  }
  if (vin.size() > kModelYearIndex && vin[kModelYearIndex] != '*' &&
      !IsModelYearCode(vin[kModelYearIndex])) {
    std::string message = ModelYearMessage(vin[kModelYearIndex]);
    if (policy == CheckDigitPolicy::kEnforce) {
      return Invalid(Problem::kModelYearCode, message);
    }
    result.warnings.push_back({"model_year", std::move(message)});
  }
  return result;
}

}  // namespace vin
