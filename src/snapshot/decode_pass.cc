#include "snapshot/decode_pass.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "snapshot/sql_decimal.h"
#include "snapshot/vpic_codes.h"
#include "vin/vin.h"

namespace snapshot {
namespace {

using Source = PassItem::Source;

constexpr int kFormulaPriority = 100;
constexpr int kEngineModelPriority = 50;
constexpr int kWmiPriority = 100;
constexpr int kModelMakePriority = 1000;

// A candidate before ranking: compact, copied often.
struct Candidate {
  int priority = 0;
  int64_t changed = 0;
  uint32_t key = kNone;
  uint32_t key_order = 0;
  uint32_t pattern_id = 0;
  uint32_t sequence = 0;
  uint32_t value = kNone;
  uint16_t slot = 0;
  uint8_t non_star = 0;
  Source source = Source::kPattern;
  bool valid = false;
};

// NHTSA's rank: YearFrom desc, change time desc, fewer non-'*' key
// characters, key text without brackets, then insertion order.
bool RanksBefore(const Candidate& a, const Candidate& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.changed != b.changed) return a.changed > b.changed;
  if (a.non_star != b.non_star) return a.non_star < b.non_star;
  if (a.key_order != b.key_order) return a.key_order < b.key_order;
  if (a.pattern_id != b.pattern_id) return a.pattern_id < b.pattern_id;
  return a.sequence < b.sequence;
}

// The order in which vPIC picks the Engine Model whose EngineModelPattern
// rows it adds: priority desc, change time desc, latest row first.
bool EngineModelBefore(const Candidate& a, const Candidate& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.changed != b.changed) return a.changed > b.changed;
  return a.pattern_id > b.pattern_id;
}

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

class Pass {
 public:
  Pass(const SnapshotIndex& ix, absl::string_view vin, const WmiInfo* wmi,
       const WmiInfo* raw_wmi, const PlannedPass& plan)
      : ix_(ix), vin_(vin), wmi_(wmi), raw_wmi_(raw_wmi) {
    result_.pass = plan;
    result_.items.reserve(48);
  }

  PassResult Run() {
    if (wmi_ != nullptr) {
      MatchPatterns();
      AddEngineModelRows();
      CollectWinners();
      AddWmiItems();
      AddMake();
      ApplyConversions();
    }
    ComputeCodes();
    ComputeScores();
    return std::move(result_);
  }

 private:
  void Consider(const Candidate& c) {
    if (ix_.elements[c.slot].multi_valued) {
      multi_.push_back(c);
      return;
    }
    int32_t& index = best_of_slot_[c.slot];
    if (index < 0) {
      index = static_cast<int32_t>(best_.size());
      best_.push_back(c);
    } else if (RanksBefore(c, best_[index])) {
      best_[index] = c;
    }
  }

  void MatchPatterns() {
    best_of_slot_.assign(ix_.elements.size(), -1);
    const Descriptor d = MakeDescriptor(vin_);
    const int year = result_.pass.year;
    // The WMI's schemas for the year; a schema linked twice counts with its
    // latest YearFrom (the better of its duplicate rows in vPIC).
    std::vector<std::pair<uint32_t, int>> schemas;
    for (uint32_t i = wmi_->links_begin; i < wmi_->links_end; ++i) {
      const SchemaLink& link = ix_.links[i];
      if (year != 0 && (year < link.year_from || year > link.year_to)) continue;
      auto it = std::find_if(schemas.begin(), schemas.end(),
                             [&](const auto& s) { return s.first == link.schema; });
      if (it == schemas.end()) {
        schemas.emplace_back(link.schema, link.year_from);
      } else {
        it->second = std::max<int>(it->second, link.year_from);
      }
    }
    const int engine_slot = ix_.SlotOf(element::kEngineModel);
    const uint64_t* masks = ix_.key_masks.data();
    for (const auto& [schema, priority] : schemas) {
      const uint32_t end = ix_.schema_patterns_begin[schema + 1];
      for (uint32_t i = ix_.schema_patterns_begin[schema]; i < end; ++i) {
        const SnapshotIndex::PatternScan& scan = ix_.pattern_scan[i];
        const uint8_t* codes = scan.formula ? d.formula_codes : d.codes;
        if ((((scan.mask0 >> codes[0]) & (scan.mask1 >> codes[1])) & 1) == 0) {
          continue;
        }
        const CompiledKey& key = ix_.keys[scan.key];
        if (key.tokens > 2 && !KeyMatchesFrom(2, key, masks, d)) continue;
        Candidate c;
        c.valid = true;
        c.key = scan.key;
        c.key_order = key.order;
        c.non_star = key.non_star_length;
        c.pattern_id = ix_.pattern_id[i];
        c.value = ix_.pattern_value[i];
        c.slot = scan.slot;
        c.changed = ix_.pattern_changed[i];
        if (key.kind == CompiledKey::Kind::kFormula) {
          c.priority = kFormulaPriority;
          c.source = Source::kFormula;
        } else {
          c.priority = priority;
          c.source = Source::kPattern;
          if (c.slot == engine_slot &&
              (!engine_.valid || EngineModelBefore(c, engine_))) {
            engine_ = c;
          }
        }
        Consider(c);
      }
    }
  }

  void AddEngineModelRows() {
    if (!engine_.valid) return;
    const std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(
        ix_.values[engine_.value].attribute_id));
    auto it = ix_.engine_models.find(name);
    if (it == ix_.engine_models.end()) return;
    for (const EngineModelRow& row : it->second) {
      Candidate c = engine_;
      c.priority = kEngineModelPriority;
      c.changed = row.changed;
      c.sequence = row.id;
      c.value = row.value;
      c.slot = row.slot;
      c.source = Source::kEngineModel;
      Consider(c);
    }
  }

  PassItem ItemFrom(const Candidate& c) const {
    PassItem item;
    item.slot = c.slot;
    item.source = c.source;
    item.value = c.value;
    item.priority = c.priority;
    item.changed = c.changed;
    item.key = c.key;
    item.pattern_id = c.pattern_id;
    item.sequence = c.sequence;
    item.has_pattern = true;
    if (c.source == Source::kFormula) {
      const CompiledKey& key = ix_.keys[c.key];
      const Descriptor d = MakeDescriptor(vin_);
      item.own_text = true;
      item.text.assign(d.text + key.formula_begin, key.formula_length);
    }
    return item;
  }

  void CollectWinners() {
    // In slot order, as the index lists elements.
    for (int32_t index : best_of_slot_) {
      if (index >= 0) result_.items.push_back(ItemFrom(best_[index]));
    }
    std::sort(multi_.begin(), multi_.end(), RanksBefore);
    for (const Candidate& c : multi_) result_.items.push_back(ItemFrom(c));
  }

  // Adds a WMI-level item whose value is `text`, or `*ref` (index-owned).
  void AddText(int element_id, std::string text, bool has_pattern,
               uint32_t make = kNone, const std::string* ref = nullptr) {
    const int slot = ix_.SlotOf(element_id);
    if (slot < 0) return;
    PassItem item;
    item.slot = static_cast<uint16_t>(slot);
    item.source = Source::kWmi;
    item.own_text = true;
    item.text = std::move(text);
    item.ref = ref;
    item.priority = kWmiPriority;
    item.has_pattern = has_pattern;
    item.make = make;
    result_.items.push_back(std::move(item));
  }

  void AddWmiItems() {
    if (!wmi_->vehicle_type.empty()) {
      AddText(element::kVehicleType, "", false, kNone, &wmi_->vehicle_type);
      vehicle_type_id_ = wmi_->vehicle_type_id;
    }
    AddText(element::kManufacturer, "", false, kNone, &wmi_->manufacturer);
    AddText(element::kManufacturerId,
            wmi_->manufacturer_id == 0 ? std::string()
                                       : absl::StrCat(wmi_->manufacturer_id),
            false);
    if (result_.pass.year != 0) {
      AddText(element::kModelYear, absl::StrCat(result_.pass.year), false);
    }
  }

  // Make from the winning model; without a model, the WMI's make when it has
  // exactly one.
  void AddMake() {
    const PassItem* model = result_.Find(ix_.SlotOf(element::kModel));
    if (model != nullptr) {
      const uint32_t make = ix_.values[model->value].make;
      if (make != kNone) {
        AddText(element::kMake, "", true, make, &ix_.makes[make].name);
        result_.items.back().source = Source::kMakeFromModel;
        result_.items.back().priority = kModelMakePriority;
        result_.items.back().pattern_id = model->pattern_id;
      }
    } else if (wmi_->only_make != kNone) {
      AddText(element::kMake, "", false, wmi_->only_make,
              &ix_.makes[wmi_->only_make].name);
    }
  }

  void ApplyConversions() {
    struct Step {
      size_t item;
      const ConversionRule* rule;
    };
    std::vector<Step> steps;
    for (size_t i = 0; i < result_.items.size(); ++i) {
      for (const ConversionRule& rule : ix_.conversions) {
        if (rule.from_slot == result_.items[i].slot) steps.push_back({i, &rule});
      }
    }
    if (steps.empty()) return;
    std::stable_sort(steps.begin(), steps.end(), [&](const Step& a, const Step& b) {
      const PassItem& x = result_.items[a.item];
      const PassItem& y = result_.items[b.item];
      if (x.priority != y.priority) return x.priority > y.priority;
      if (x.changed != y.changed) return x.changed > y.changed;
      return a.rule->id < b.rule->id;
    });
    for (const Step& step : steps) {
      if (result_.Find(step.rule->to_slot) != nullptr) continue;
      const PassItem& from = result_.items[step.item];
      PassItem item;
      item.slot = step.rule->to_slot;
      item.source = Source::kConversion;
      item.own_text = true;
      item.text = ApplyDecimalFormula(from.AttributeId(ix_), step.rule->op,
                                      step.rule->constant);
      item.priority = kWmiPriority;
      item.pattern_id = from.pattern_id;
      item.has_pattern = from.has_pattern;
      result_.items.push_back(std::move(item));  // `from` is not used after
    }
  }

  void AddCode(int c) {
    if (std::find(result_.codes.begin(), result_.codes.end(), c) ==
        result_.codes.end()) {
      result_.codes.push_back(c);
    }
  }
  bool HasCode(int c) const {
    return std::find(result_.codes.begin(), result_.codes.end(), c) !=
           result_.codes.end();
  }

  void ComputeCodes() {
    std::string info;
    bool any_pattern = false;
    for (const PassItem& item : result_.items) any_pattern |= item.has_pattern;
    std::string body_class;
    if (const PassItem* body = result_.Find(ix_.SlotOf(element::kBodyClass))) {
      body_class = body->AttributeId(ix_);
    }
    if (wmi_ == nullptr) {
      AddCode(code::kManufacturerNotRegistered);
    } else if (!any_pattern) {
      AddCode(code::kNoDetailedData);
    }
    if (body_class == "64") AddCode(code::kGlider);
    if (IsOneOf(body_class, {"69", "84", "86", "88", "97", "105", "113", "124",
                             "126", "127"})) {
      AddCode(code::kOffRoad);
      result_.off_road = true;
    }
    if (result_.pass.year == 0) AddCode(code::kIncorrectModelYear);

    // vPIC's character rules: digits only from position 13 (cars, MPVs,
    // light trucks), 14 (others) or 15 (six-character WMIs).
    const bool car_mpv_lt = vin_[2] != '9' && IsCarMpvOrLightTruck(raw_wmi_);
    const int start = vin_[2] == '9' ? 15 : (car_mpv_lt ? 13 : 14);
    std::string invalid;
    for (int j = 1; j <= 17; ++j) {
      if (j == 9 && result_.off_road) continue;
      const char c = vin_[j - 1];
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
    if (!invalid.empty()) AddCode(code::kInvalidCharacters);
    if (result_.pass.error12) AddCode(code::kModelYearMismatch);
    if (VpicCheckDigit(vin_, car_mpv_lt) != vin_[8]) {
      AddCode(code::kCheckDigit);
    }
    bool clean = true;
    for (int c : result_.codes) {
      if (c != code::kGlider && c != code::kOffRoad &&
          c != code::kModelYearMismatch && c != code::kUnusedPositions) {
        clean = false;
      }
    }
    if (clean) AddCode(code::kClean);
    if (HasCode(code::kClean) &&
        result_.Find(ix_.SlotOf(element::kModel)) == nullptr) {
      AddCode(code::kUnusedPositions);
    }
    std::sort(result_.codes.begin(), result_.codes.end());

    if (!invalid.empty()) {
      AppendInfo(&info, absl::StrCat("Invalid character(s): ", invalid, "."));
    }
    if (vehicle_type_id_ == 10 ||
        IsOneOf(body_class, {"65", "107", "70", "74", "63", "72", "112", "62",
                             "64", "76", "78", "71", "77", "67", "116", "75"})) {
      AppendInfo(&info,
                 "Incomplete Vehicle Warning - Please be advised that the "
                 "vehicle may have been altered and may not be an accurate "
                 "representation of the vehicle in its current condition.");
    }
    if (!result_.pass.conclusive) {
      AppendInfo(&info,
                 "The Model Year decoded for this VIN may be incorrect. If you "
                 "know the Model year, please enter it and decode again to get "
                 "more accurate information.");
    }
    result_.additional_error_text = std::move(info);
  }

  void ComputeScores() {
    // vPIC weighs a pass's error codes with its ErrorCode table, which the
    // snapshot lacks: here a clean decode beats one with codes, and "no
    // detailed data" (8) loses to anything that decoded.
    int value = 0;
    for (int c : result_.codes) {
      if (c == code::kClean) value += 100;
      if (c == code::kNoDetailedData) value -= 100;
      if (c == code::kUnusedPositions) value -= 10;
      if (c == code::kModelYearMismatch) value -= 1;
    }
    result_.error_value = value;
    std::vector<bool> counted(ix_.elements.size(), false);
    for (const PassItem& item : result_.items) {
      const bool pattern_like = item.source == Source::kPattern ||
                                item.source == Source::kEngineModel;
      // vPIC scores passes before resolving lookups: a pattern value counts
      // as present.
      const bool non_empty = pattern_like || !item.Text(ix_).empty();
      if (non_empty && !counted[item.slot] && ix_.elements[item.slot].weight >= 0) {
        counted[item.slot] = true;
        result_.elements_weight += ix_.elements[item.slot].weight;
      }
      if ((pattern_like || item.source == Source::kFormula) &&
          (pattern_like || (!item.text.empty() && item.text != "Not Applicable"))) {
        ++result_.patterns;
      }
    }
  }

  const SnapshotIndex& ix_;
  absl::string_view vin_;
  const WmiInfo* wmi_;
  const WmiInfo* raw_wmi_;
  PassResult result_;
  std::vector<int32_t> best_of_slot_;  // element slot -> index into best_
  std::vector<Candidate> best_;
  std::vector<Candidate> multi_;
  Candidate engine_;
  int vehicle_type_id_ = 0;
};

}  // namespace

PassResult RunPass(const SnapshotIndex& index, absl::string_view vin17,
                   const WmiInfo* wmi, const WmiInfo* raw_wmi,
                   const PlannedPass& pass) {
  return Pass(index, vin17, wmi, raw_wmi, pass).Run();
}

}  // namespace snapshot
