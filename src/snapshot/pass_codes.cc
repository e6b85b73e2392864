#include "snapshot/pass_codes.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "snapshot/model_year.h"
#include "snapshot/vpic_codes.h"
#include "vin/vin.h"

namespace snapshot {
namespace {

using Source = PassItem::Source;

// A set of ASCII characters, tested in constant time.
class CharSet {
 public:
  constexpr explicit CharSet(const char* chars) : bits_{} {
    for (; *chars != '\0'; ++chars) {
      const auto c = static_cast<unsigned char>(*chars);
      bits_[c / 64] |= uint64_t{1} << (c % 64);
    }
  }
  constexpr bool Has(char ch) const {
    const auto c = static_cast<unsigned char>(ch);
    return c < 128 && ((bits_[c / 64] >> (c % 64)) & 1) != 0;
  }

 private:
  uint64_t bits_[2];
};

constexpr CharSet kDigits("0123456789");
constexpr CharSet kVinChars("0123456789ABCDEFGHJKLMNPRSTUVWXYZ");
constexpr CharSet kYearChars("123456789ABCDEFGHJKLMNPRSTVWXY");
constexpr CharSet kCheckDigitChars("0123456789X*");

// vPIC fVINCheckDigit2: '?' when a position holds a character its rule
// forbids (digits only from position 13 or 14 on), else the check digit.
char VpicCheckDigit(absl::string_view vin, bool car_mpv_lt) {
  const bool low_volume = vin[2] == '9';
  for (int i = 1; i <= 17; ++i) {
    const char c = vin[i - 1];
    const CharSet* allowed = &kVinChars;
    if (i == 10) {
      allowed = &kYearChars;
    } else if ((i == 13 && !low_volume && car_mpv_lt) ||
               (i == 14 && !low_volume) || i >= 15) {
      allowed = &kDigits;
    }
    if (!allowed->Has(c)) return '?';
  }
  return vin::ComputeCheckDigit(vin);
}

// vPIC's character rules: digits only from position 13 (cars, MPVs, light
// trucks), 14 (others) or 15 (six-character WMIs). The positions that break
// them, "5:Q, 12:I", or "".
std::string InvalidCharacters(absl::string_view vin, bool car_mpv_lt,
                              bool off_road) {
  const int start = vin[2] == '9' ? 15 : (car_mpv_lt ? 13 : 14);
  std::string invalid;
  for (int j = 1; j <= 17; ++j) {
    if (j == 9 && off_road) continue;
    const char c = vin[j - 1];
    bool bad;
    if (j == 9) {
      bad = !kCheckDigitChars.Has(c);
    } else if (j < start) {
      bad = !kVinChars.Has(c) && c != '*';
    } else {
      bad = !kDigits.Has(c) && c != '*';
    }
    if (j == 10 && !kYearChars.Has(c)) bad = true;
    if (bad) absl::StrAppend(&invalid, invalid.empty() ? "" : ", ", j, ":",
                             std::string(1, c));
  }
  return invalid;
}

bool IsOneOf(absl::string_view attribute_id,
             std::initializer_list<absl::string_view> ids) {
  for (absl::string_view id : ids) {
    if (attribute_id == id) return true;
  }
  return false;
}

// vPIC's trim(coalesce(info, '') || ' text '): pieces joined by one space.
void AppendInfo(std::string* info, absl::string_view text) {
  if (!info->empty()) info->push_back(' ');
  absl::StrAppend(info, text);
}

void AddCode(int c, PassResult* result) {
  if (std::find(result->codes.begin(), result->codes.end(), c) ==
      result->codes.end()) {
    result->codes.push_back(c);
  }
}

bool HasCode(int c, const PassResult& result) {
  return std::find(result.codes.begin(), result.codes.end(), c) !=
         result.codes.end();
}

// The codes of what the pass found: unknown WMI (7) or no pattern (8),
// glider (9), off-road (10), no model year (11).
void AddDataCodes(const WmiInfo* wmi, absl::string_view body_class,
                  PassResult* result) {
  bool any_pattern = false;
  for (const PassItem& item : result->items) any_pattern |= item.has_pattern;
  if (wmi == nullptr) {
    AddCode(code::kManufacturerNotRegistered, result);
  } else if (!any_pattern) {
    AddCode(code::kNoDetailedData, result);
  }
  if (body_class == "64") AddCode(code::kGlider, result);
  if (IsOneOf(body_class, {"69", "84", "86", "88", "97", "105", "113", "124",
                           "126", "127"})) {
    AddCode(code::kOffRoad, result);
    result->off_road = true;
  }
  if (result->pass.year == 0) AddCode(code::kIncorrectModelYear, result);
}

// 0 when no code so far is an error, then 14 when such a pass has no model.
void AddCleanCodes(const SnapshotIndex& ix, PassResult* result) {
  bool clean = true;
  for (int c : result->codes) {
    if (c != code::kGlider && c != code::kOffRoad &&
        c != code::kModelYearMismatch && c != code::kUnusedPositions) {
      clean = false;
    }
  }
  if (clean) AddCode(code::kClean, result);
  if (HasCode(code::kClean, *result) &&
      result->Find(ix.SlotOf(element::kModel)) == nullptr) {
    AddCode(code::kUnusedPositions, result);
  }
}

std::string AdditionalErrorText(absl::string_view invalid,
                                int vehicle_type_id,
                                absl::string_view body_class,
                                bool conclusive) {
  std::string info;
  if (!invalid.empty()) {
    AppendInfo(&info, absl::StrCat("Invalid character(s): ", invalid, "."));
  }
  if (vehicle_type_id == 10 ||
      IsOneOf(body_class, {"65", "107", "70", "74", "63", "72", "112", "62",
                           "64", "76", "78", "71", "77", "67", "116", "75"})) {
    AppendInfo(&info,
               "Incomplete Vehicle Warning - Please be advised that the "
               "vehicle may have been altered and may not be an accurate "
               "representation of the vehicle in its current condition.");
  }
  if (!conclusive) {
    AppendInfo(&info,
               "The Model Year decoded for this VIN may be incorrect. If you "
               "know the Model year, please enter it and decode again to get "
               "more accurate information.");
  }
  return info;
}

}  // namespace

void ComputeCodes(const SnapshotIndex& ix, absl::string_view vin,
                  const WmiInfo* wmi, const WmiInfo* raw_wmi,
                  int vehicle_type_id, PassResult* result) {
  std::string body_class;
  if (const PassItem* body = result->Find(ix.SlotOf(element::kBodyClass))) {
    body_class = body->AttributeId(ix);
  }
  AddDataCodes(wmi, body_class, result);
  const bool car_mpv_lt = vin[2] != '9' && IsCarMpvOrLightTruck(raw_wmi);
  const std::string invalid =
      InvalidCharacters(vin, car_mpv_lt, result->off_road);
  if (!invalid.empty()) AddCode(code::kInvalidCharacters, result);
  if (result->pass.error12) AddCode(code::kModelYearMismatch, result);
  if (vin.find('*') != absl::string_view::npos) {
    // A partial VIN has no check digit to compute: it is incomplete.
    AddCode(code::kIncompleteVin, result);
  } else if (VpicCheckDigit(vin, car_mpv_lt) != vin[8]) {
    AddCode(code::kCheckDigit, result);
  }
  AddCleanCodes(ix, result);
  std::sort(result->codes.begin(), result->codes.end());
  result->additional_error_text = AdditionalErrorText(
      invalid, vehicle_type_id, body_class, result->pass.conclusive);
}

void ComputeScores(const SnapshotIndex& ix, PassResult* result) {
  // vPIC weighs a pass's error codes with its ErrorCode table, which the
  // snapshot lacks: here a clean decode beats one with codes, and "no
  // detailed data" (8) loses to anything that decoded.
  int value = 0;
  for (int c : result->codes) {
    if (c == code::kClean) value += 100;
    if (c == code::kNoDetailedData) value -= 100;
    if (c == code::kUnusedPositions) value -= 10;
    if (c == code::kModelYearMismatch) value -= 1;
  }
  result->error_value = value;
  std::vector<bool> counted(ix.elements.size(), false);
  for (const PassItem& item : result->items) {
    const bool pattern_like = item.source == Source::kPattern ||
                              item.source == Source::kEngineModel;
    // vPIC scores passes before resolving lookups: a pattern value counts
    // as present.
    const bool non_empty = pattern_like || !item.Text(ix).empty();
    if (non_empty && !counted[item.slot] && ix.elements[item.slot].weight >= 0) {
      counted[item.slot] = true;
      result->elements_weight += ix.elements[item.slot].weight;
    }
    if ((pattern_like || item.source == Source::kFormula) &&
        (pattern_like || (!item.text.empty() && item.text != "Not Applicable"))) {
      ++result->patterns;
    }
  }
}

}  // namespace snapshot
