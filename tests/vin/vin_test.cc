#include "vin/vin.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vin {
namespace {

TEST(Normalize, TrimsAndUpperCases) {
  struct Case {
    std::string input;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"1HGCM82633A004352", "1HGCM82633A004352"},
      {"  1hgcm82633a004352\t\n", "1HGCM82633A004352"},
      {"\r\n1g4ah59h45g118341 ", "1G4AH59H45G118341"},
      {"", ""},
      {"   ", ""},
      {"a b", "A B"},              // inner white space is kept
      {"\xC3\xA9x", "\xC3\xA9X"},  // non-ASCII bytes are left alone
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Normalize(c.input), c.want) << "input: \"" << c.input << "\"";
  }
}

TEST(CheckDigit, ComputesPosition9) {
  struct Case {
    std::string vin;
    char want;
  };
  const std::vector<Case> cases = {
      {"1HGCM82633A004352", '3'},
      {"1G4AH59H45G118341", '4'},
      {"1M8GDM9AXKP042788", 'X'},
      {"1FTMW1T88MFA00001", '8'},
      {"11111111111111111", '1'},  // the textbook example
      // Position 9 is ignored: a wrong check digit computes the same.
      {"1HGCM82643A004352", '3'},
      {"WVGZZZ5NZEW069297", 'X'},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ComputeCheckDigit(c.vin), c.want) << c.vin;
  }
}

// Each letter's value as 49 CFR 565.15(c) lists it, checked through
// position 1 (weight 8) of an otherwise all-zero VIN.
TEST(CheckDigit, TransliteratesEveryLetter) {
  const std::vector<std::pair<char, int>> values = {
      {'A', 1}, {'B', 2}, {'C', 3}, {'D', 4}, {'E', 5}, {'F', 6},
      {'G', 7}, {'H', 8}, {'J', 1}, {'K', 2}, {'L', 3}, {'M', 4},
      {'N', 5}, {'P', 7}, {'R', 9}, {'S', 2}, {'T', 3}, {'U', 4},
      {'V', 5}, {'W', 6}, {'X', 7}, {'Y', 8}, {'Z', 9}};
  for (const auto& [letter, value] : values) {
    const int remainder = 8 * value % 11;
    const char want =
        remainder == 10 ? 'X' : static_cast<char>('0' + remainder);
    EXPECT_EQ(ComputeCheckDigit(std::string(1, letter) + std::string(16, '0')),
              want)
        << letter;
  }
}

TEST(ModelYearCode, AcceptsOnlyYearCodes) {
  for (char c : std::string("ABCDEFGHJKLMNPRSTVWXY123456789")) {
    EXPECT_TRUE(IsModelYearCode(c)) << c;
  }
  for (char c : std::string("0UZIOQa-* ")) {
    EXPECT_FALSE(IsModelYearCode(c)) << c;
  }
  EXPECT_FALSE(IsModelYearCode('\0'));
}

// Position 10 repeats every 30 years: each code stands for at most two
// years between 1980 and 2028, and the hint must be one of them.
TEST(ModelYearsOf, EveryCodeRepeatsEveryThirtyYears) {
  const struct {
    char code;
    std::vector<int> years;
  } cases[] = {{'A', {1980, 2010}}, {'Y', {2000}},       {'1', {2001}},
               {'9', {2009}},       {'M', {1991, 2021}}, {'W', {1998, 2028}},
               {'X', {1999}},       {'0', {}},           {'U', {}}};
  for (const auto& c : cases) {
    EXPECT_EQ(ModelYearsOf(c.code, 1980, 2028), c.years) << c.code;
  }
  EXPECT_EQ(ModelYearsOf('A', 1980, 2100),
            (std::vector<int>{1980, 2010, 2040, 2070, 2100}));
  EXPECT_EQ(ModelYearsOf('A', 1981, 2039), (std::vector<int>{2010}));
}

TEST(CheckModelYearHint, AcceptsOnlyTheYearsPosition10Allows) {
  const std::string ford = "1FTMW1T88MFA00001";  // 'M': 1991 or 2021
  EXPECT_TRUE(CheckModelYearHint(ford, 0, 1980, 2028).ok());
  EXPECT_TRUE(CheckModelYearHint(ford, 2021, 1980, 2028).ok());
  EXPECT_TRUE(CheckModelYearHint(ford, 1991, 1980, 2028).ok());
  int accepted = 0;
  for (int y = 1980; y <= 2100; ++y) {
    accepted += CheckModelYearHint(ford, y, 1980, 2028).ok() ? 1 : 0;
  }
  EXPECT_EQ(accepted, 2) << "of 121 years, two are this VIN's";
  const absl::Status s = CheckModelYearHint(ford, 2020, 1980, 2028);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("1991 or 2021"));
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("'M'"));
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("2020"));
}

TEST(CheckModelYearHint, WithoutAYearCodeAnyYearInTheRange) {
  // Accepted under WARN only: position 10 is 'Z', which is no year code.
  const std::string european = "WVGZZZ5NZZW069297";
  EXPECT_TRUE(CheckModelYearHint(european, 1980, 1980, 2028).ok());
  EXPECT_TRUE(CheckModelYearHint(european, 2014, 1980, 2028).ok());
  EXPECT_TRUE(CheckModelYearHint(european, 2028, 1980, 2028).ok());
  const absl::Status s = CheckModelYearHint(european, 2029, 1980, 2028);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              testing::HasSubstr("between 1980 and 2028"));
  EXPECT_FALSE(CheckModelYearHint(european, 1979, 1980, 2028).ok());
}

struct ValidateCase {
  std::string name;
  std::string input;
  CheckDigitPolicy policy;
  // Expected on success.
  std::string want_vin;
  std::vector<std::string> want_warning_codes;
  // Expected on failure (empty: success expected). The whole message.
  std::string want_error;
};

TEST(Validate, Table) {
  const auto kEnforce = CheckDigitPolicy::kEnforce;
  const auto kWarn = CheckDigitPolicy::kWarn;
  const std::vector<ValidateCase> cases = {
      // Valid VINs from DESIGN.md.
      {"honda accord",
       "1HGCM82633A004352",
       kEnforce,
       "1HGCM82633A004352",
       {},
       ""},
      {"buick", "1G4AH59H45G118341", kEnforce, "1G4AH59H45G118341", {}, ""},
      {"check digit X",
       "1M8GDM9AXKP042788",
       kEnforce,
       "1M8GDM9AXKP042788",
       {},
       ""},
      {"ford f-150",
       "1FTMW1T88MFA00001",
       kEnforce,
       "1FTMW1T88MFA00001",
       {},
       ""},
      {"valid under warn has no warnings",
       "1HGCM82633A004352",
       kWarn,
       "1HGCM82633A004352",
       {},
       ""},
      {"normalised",
       "  1hgcm82633a004352 \t",
       kEnforce,
       "1HGCM82633A004352",
       {},
       ""},

      // Check digit.
      {"wrong check digit",
       "1HGCM82643A004352",
       kEnforce,
       "",
       {},
       "check digit mismatch: VIN position 9 is '4', the check digit "
       "computes to '3'"},
      {"wrong check digit, warn",
       "1HGCM82643A004352",
       kWarn,
       "1HGCM82643A004352",
       {"check_digit"},
       ""},
      {"european",
       "WVGZZZ5NZEW069297",
       kEnforce,
       "",
       {},
       "check digit mismatch: VIN position 9 is 'Z', the check digit "
       "computes to 'X'"},
      {"european, warn",
       "wvgzzz5nzew069297",
       kWarn,
       "WVGZZZ5NZEW069297",
       {"check_digit"},
       ""},

      // Empty and length.
      {"empty", "", kEnforce, "", {}, "VIN is empty"},
      {"only spaces", "  \t ", kWarn, "", {}, "VIN is empty"},
      {"16 characters",
       "5VCD6JF38H207075",
       kEnforce,
       "",
       {},
       "VIN must be 17 characters, got 16"},
      {"16 characters, warn",
       "5VCD6JF38H207075",
       kWarn,
       "",
       {},
       "VIN must be 17 characters, got 16"},
      {"18 characters",
       "1HGCM82633A0043521",
       kEnforce,
       "",
       {},
       "VIN must be 17 characters, got 18"},
      {"17 characters with utf-8 E acute is 18 bytes",
       "1HGCM82633A00435\xC3\x89",
       kEnforce,
       "",
       {},
       "VIN must be 17 characters, got 18 bytes, some of them non-ASCII "
       "(only digits and letters are allowed)"},

      // Characters.
      {"letter I",
       "1HGCI82633A004352",
       kEnforce,
       "",
       {},
       "VIN position 5 is 'I': the letters I, O and Q are never used in VINs"},
      {"letter O, lower case",
       "1hgcm82633a0o4352",
       kEnforce,
       "",
       {},
       "VIN position 13 is 'O': the letters I, O and Q are never used in "
       "VINs"},
      {"letter Q, warn",
       "Q1HGCM8263A004352",
       kWarn,
       "",
       {},
       "VIN position 1 is 'Q': the letters I, O and Q are never used in VINs"},
      {"dash",
       "1H-CM82633A004352",
       kEnforce,
       "",
       {},
       "VIN position 3 is '-': only digits and letters are allowed"},
      {"inner space",
       "1HGCM826 3A004352",
       kEnforce,
       "",
       {},
       "VIN position 9 is ' ': only digits and letters are allowed"},
      {"control character",
       std::string("1HGCM8263\0A004352", 17),
       kEnforce,
       "",
       {},
       "VIN position 10 is control character 0x00: only digits and letters "
       "are allowed"},
      {"non-ASCII in 17 bytes",
       "1HGCM82633A0043\xC3\x89",
       kEnforce,
       "",
       {},
       "VIN position 16 is non-ASCII byte 0xC3: only digits and letters are "
       "allowed"},
      {"first bad character wins",
       "1H-CM8I633A004352",
       kEnforce,
       "",
       {},
       "VIN position 3 is '-': only digits and letters are allowed"},

      // Model-year code (position 10).
      {"year code U",
       "1HGCM8263UA004352",
       kEnforce,
       "",
       {},
       "VIN position 10 is 'U': not a model-year code (0, U and Z are never "
       "used)"},
      {"year code Z",
       "1HGCM8263ZA004352",
       kEnforce,
       "",
       {},
       "VIN position 10 is 'Z': not a model-year code (0, U and Z are never "
       "used)"},
      {"year code 0",
       "1HGCM82630A004352",
       kEnforce,
       "",
       {},
       "VIN position 10 is '0': not a model-year code (0, U and Z are never "
       "used)"},
      // 1HGCM8263UA004352 also fails the check digit: the year code is
      // checked first, and under WARN both are reported, in that order.
      {"year code U, warn",
       "1HGCM8263UA004352",
       kWarn,
       "1HGCM8263UA004352",
       {"model_year", "check_digit"},
       ""},
  };

  for (const ValidateCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<ValidatedVin> got = Validate(c.input, c.policy);
    if (!c.want_error.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(std::string(got.status().message()), c.want_error);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->vin, c.want_vin);
    std::vector<std::string> codes;
    for (const Warning& w : got->warnings) codes.push_back(w.code);
    EXPECT_EQ(codes, c.want_warning_codes);
  }
}

// Under WARN the warning carries the same text the error would.
TEST(Validate, WarningTextMatchesError) {
  for (const std::string vin :
       {"1HGCM82643A004352", "WVGZZZ5NZEW069297", "1HGCM8263UA004352"}) {
    SCOPED_TRACE(vin);
    absl::StatusOr<ValidatedVin> enforced =
        Validate(vin, CheckDigitPolicy::kEnforce);
    absl::StatusOr<ValidatedVin> warned =
        Validate(vin, CheckDigitPolicy::kWarn);
    ASSERT_FALSE(enforced.ok());
    ASSERT_TRUE(warned.ok()) << warned.status();
    ASSERT_FALSE(warned->warnings.empty());
    EXPECT_EQ(warned->warnings.front().message,
              std::string(enforced.status().message()));
  }
}

TEST(Validate, CheckDigitWarningNamesPosition9) {
  absl::StatusOr<ValidatedVin> got =
      Validate("WVGZZZ5NZEW069297", CheckDigitPolicy::kWarn);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->warnings.size(), 1u);
  EXPECT_EQ(got->warnings[0].code, "check_digit");
  EXPECT_EQ(got->warnings[0].message,
            "check digit mismatch: VIN position 9 is 'Z', the check digit "
            "computes to 'X'");
}

// Rule 18: a partial VIN is checked for what can be checked.
TEST(ValidatePartial, ChecksWhatAPartialVinHas) {
  auto ok = ValidatePartial(" 5uxwx7c5*ba ", CheckDigitPolicy::kEnforce);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->vin, "5UXWX7C5*BA");
  EXPECT_TRUE(IsPartial(ok->vin));
  EXPECT_TRUE(ValidatePartial("5UX", CheckDigitPolicy::kEnforce).ok());
  EXPECT_TRUE(
      ValidatePartial("5UXWX7C5*B*******", CheckDigitPolicy::kEnforce).ok())
      << "17 with '*': no check digit to check";
  struct Case {
    const char* vin;
    Problem problem;
    const char* says;
  };
  for (const Case& c : {
           Case{"5U", Problem::kLength, "at least its 3-character WMI"},
           Case{"5U*WX7C5*BA", Problem::kCharacter, "WMI (positions 1-3)"},
           Case{"5UXWX7C5*IA", Problem::kCharacter, "position 10 is 'I'"},
           Case{"5UXWX7C5*BA#", Problem::kCharacter, "position 12"},
           Case{"5UXWX7C5*UA", Problem::kModelYearCode,
                "not a model-year code"},
           Case{"5UXWX7C5*BA********", Problem::kLength, "17 characters"},
       }) {
    auto bad = ValidatePartial(c.vin, CheckDigitPolicy::kEnforce);
    ASSERT_FALSE(bad.ok()) << c.vin;
    EXPECT_EQ(ProblemOf(bad.status()), c.problem) << c.vin;
    EXPECT_NE(bad.status().message().find(c.says), absl::string_view::npos)
        << c.vin << ": " << bad.status().message();
  }
  // Under WARN a partial VIN's bad year code is a warning.
  auto warned = ValidatePartial("5UXWX7C5*UA", CheckDigitPolicy::kWarn);
  ASSERT_TRUE(warned.ok());
  ASSERT_EQ(warned->warnings.size(), 1u);
  EXPECT_EQ(warned->warnings[0].code, "model_year");
  // A whole VIN is checked as Validate checks it (its check digit too).
  EXPECT_EQ(
      ProblemOf(ValidatePartial("1FTMW1T88MFA00002", CheckDigitPolicy::kEnforce)
                    .status()),
      Problem::kCheckDigit);
  EXPECT_TRUE(
      ValidatePartial("1FTMW1T88MFA00001", CheckDigitPolicy::kEnforce).ok());
  EXPECT_FALSE(IsPartial("1FTMW1T88MFA00001"));
}

}  // namespace
}  // namespace vin

// Rule 21: a windshield or door-jamb barcode prints an I before the VIN.
TEST(BarcodeRead, AnEighteenCharacterReadWithALeadingIIsTheSeventeenAfterIt) {
  EXPECT_EQ(vin::BarcodeRead("I1FTMW1T88MFA00001"), "1FTMW1T88MFA00001");
  EXPECT_EQ(vin::BarcodeRead("  i1ftmw1t88mfa00001 "), "1FTMW1T88MFA00001");
  EXPECT_FALSE(vin::BarcodeRead("1FTMW1T88MFA00001").has_value());    // 17
  EXPECT_FALSE(vin::BarcodeRead("X1FTMW1T88MFA00001").has_value());   // no I
  EXPECT_FALSE(vin::BarcodeRead("II1FTMW1T88MFA00001").has_value());  // 19
  // What follows is then validated as any VIN is: no O or Q changed.
  EXPECT_EQ(vin::BarcodeRead("I1FTMW1T88MFAOOOO1"), "1FTMW1T88MFAOOOO1");
}
