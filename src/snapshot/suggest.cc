// Rule 21's corrections (Snapshot::Suggest), modelled on vPIC's "VIN
// corrected, error in one position only": the VINs one character away from
// an invalid one that are valid where they stand and that the WMI's patterns
// decode, best first.
//
// Cost: candidates are pruned arithmetically before any decode. The check
// digit is a weighted sum mod 11, so for each position other than 9 at most
// one transliterated value (0-9) can make it right, and only the few VIN
// characters with that value are tried. Each distinct WMI is looked up once;
// each remaining candidate's passes are scored through a per-call cache keyed
// by (WMI, pass year, the descriptor positions any of that WMI's pattern keys
// for that year constrain), so that candidates that differ only where no
// pattern looks (typically the serial number) share one RunPass.
//
// Everything is local to the call: Suggest is const and thread-safe.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "snapshot/decode_pass.h"
#include "snapshot/key_pattern.h"
#include "snapshot/model_year.h"
#include "snapshot/snapshot.h"
#include "snapshot/snapshot_index.h"
#include "snapshot/vpic_codes.h"
#include "vin/vin.h"

namespace snapshot {
namespace {

constexpr int kVinLength = 17;
constexpr int kCheckIndex = 8;           // position 9
constexpr int kYearIndex = 9;            // position 10
constexpr const int* kWeights = vin::kCheckDigitWeights;
// The VIN characters by transliterated value: the only characters that can
// stand where the check digit needs that value.
constexpr const char* kCharsOfValue[10] = {
    "0", "1AJ", "2BKS", "3CLT", "4DMU", "5ENV", "6FW", "7GPX", "8HY", "9RZ"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsVinChar(char c) {
  return vin::IsDigitOrUpper(c) && c != 'I' && c != 'O' && c != 'Q';
}
int Value(char c) { return vin::Transliterate(c); }
int Mod11(int x) { return ((x % 11) + 11) % 11; }
int Inverse11(int w) {
  for (int x = 1; x < 11; ++x) {
    if (w * x % 11 == 1) return x;
  }
  return 0;
}

// Whether every character of `v` is allowed where it stands (pass_codes.cc's
// VpicCheckDigit and InvalidCharacters: digits only from position 13 for
// cars, MPVs and light trucks, 14 for others, 15 for six-character WMIs;
// position 10 a model-year code) and position 9 is the check digit.
bool AllowedEverywhere(absl::string_view v, const WmiInfo* raw_wmi) {
  const bool six = v[2] == '9';
  const int digits_from = six ? 15 : (IsCarMpvOrLightTruck(raw_wmi) ? 13 : 14);
  for (int i = 0; i < kVinLength; ++i) {
    const char c = v[i];
    if (!IsVinChar(c)) return false;
    if (i == kYearIndex && !vin::IsModelYearCode(c)) return false;
    if (i + 1 >= digits_from && !IsDigit(c)) return false;
  }
  return vin::ComputeCheckDigit(v) == v[kCheckIndex];
}

// How easily `typed` is mistaken for `meant`: 2 for look-alikes, 1 for keys
// next to each other on a QWERTY keyboard (number row included), else 0.
int Resemblance(char typed, char meant) {
  static constexpr const char* kLookAlikes[] = {"O0QD", "I1L", "S5", "B8",
                                                "Z2",   "G6",  "UV"};
  for (const char* group : kLookAlikes) {
    const absl::string_view g(group);
    if (g.find(typed) != g.npos && g.find(meant) != g.npos) return 2;
  }
  static constexpr const char* kRows[] = {"1234567890", "QWERTYUIOP",
                                          "ASDFGHJKL", "ZXCVBNM"};
  // Row and column of a key, or row -1.
  auto locate = [](char c, int* row, int* column) {
    *row = -1;
    for (int r = 0; r < 4; ++r) {
      const size_t i = absl::string_view(kRows[r]).find(c);
      if (i != absl::string_view::npos) {
        *row = r;
        *column = static_cast<int>(i);
      }
    }
  };
  int tr, ti = 0, mr, mi = 0;
  locate(typed, &tr, &ti);
  locate(meant, &mr, &mi);
  if (tr < 0 || mr < 0) return 0;
  // Each row sits half a key right of the one above: key i touches keys i
  // and i+1 of the row above, i-1 and i of the row below.
  const int d = mi - ti;
  if (mr == tr) return d == 1 || d == -1 ? 1 : 0;
  if (mr == tr - 1) return d == 0 || d == 1 ? 1 : 0;
  if (mr == tr + 1) return d == 0 || d == -1 ? 1 : 0;
  return 0;
}

// A pass's spVinDecode scores (decode_pass.h), and whether it found data.
struct PassScore {
  int error_value = 0;
  int elements_weight = 0;
  int patterns = 0;
  int year = 0;
  bool decoded = false;  // no code 7 or 8
};

// snapshot.cc's BetterPass with no hint.
bool BetterScore(const PassScore& a, const PassScore& b) {
  return ScoresRankBefore(a, b, a.year, b.year);
}

// Bit i set: descriptor position i is constrained by some pattern key of
// `wmi`'s schemas for `year` (0: every schema), as decode_pass.cc picks them.
uint32_t ConstrainedPositions(const SnapshotIndex& ix, const WmiInfo& wmi,
                              int year) {
  constexpr uint64_t kAny = ~uint64_t{0};
  constexpr uint32_t kAll = ((1u << kDescriptorLength) - 1) & ~(1u << 5);
  uint32_t constrained = 0;
  for (uint32_t l = wmi.links_begin; l < wmi.links_end; ++l) {
    const SchemaLink& link = ix.links[l];
    if (year != 0 && (year < link.year_from || year > link.year_to)) continue;
    const uint32_t end = ix.schema_patterns_begin[link.schema + 1];
    for (uint32_t i = ix.schema_patterns_begin[link.schema]; i < end; ++i) {
      const CompiledKey& key = ix.keys[ix.pattern_scan[i].key];
      if (key.kind == CompiledKey::Kind::kNever) continue;
      const uint64_t* masks = ix.key_masks.data() + key.mask_offset;
      for (int t = 0; t < key.tokens; ++t) {
        if (masks[t] != kAny) constrained |= 1u << t;
      }
      if ((constrained & kAll) == kAll) return constrained;
    }
  }
  return constrained;
}

struct Suggestion {
  std::string vin;
  PassScore score;
  int resemblance = 0;
  bool check_digit = false;
  int position = 0;
};

bool Before(const Suggestion& a, const Suggestion& b) {
  if (a.score.error_value != b.score.error_value) {
    return a.score.error_value > b.score.error_value;
  }
  if (a.score.elements_weight != b.score.elements_weight) {
    return a.score.elements_weight > b.score.elements_weight;
  }
  if (a.score.patterns != b.score.patterns) {
    return a.score.patterns > b.score.patterns;
  }
  if (a.resemblance != b.resemblance) return a.resemblance > b.resemblance;
  if (a.check_digit != b.check_digit) return !a.check_digit;
  if (a.position != b.position) return a.position < b.position;
  return a.vin[a.position] < b.vin[b.position];
}

// The state of one Suggest call: WMI lookups and pass scores, kept for the
// call only.
class Scorer {
 public:
  Scorer(const SnapshotIndex& ix, int reference_year)
      : ix_(ix), reference_year_(reference_year) {}

  // The candidate's WMI row (whatever its publication), or nullptr.
  const WmiInfo* RawWmi(absl::string_view v) {
    std::string code(v.data(), 3);
    if (v[2] == '9') code.append(v.data() + 11, 3);
    for (const auto& [known, row] : wmis_) {
      if (known == code) return row;
    }
    const WmiInfo* row = nullptr;
    if (auto it = ix_.wmi_by_code.find(PackWmi(code));
        it != ix_.wmi_by_code.end()) {
      row = &ix_.wmis[it->second];
    }
    wmis_.emplace_back(std::move(code), row);
    return row;
  }

  // The best pass of `v` (a candidate whose characters are all allowed,
  // with a public WMI), as Decode picks it with no hint.
  PassScore Best(absl::string_view v, const WmiInfo* wmi) {
    const std::vector<PlannedPass> plan =
        PlanPasses(ix_, v, wmi, 0, reference_year_);
    PassScore best;
    for (size_t i = 0; i < plan.size(); ++i) {
      const PassScore s = Score(v, wmi, plan[i]);
      if (i == 0 || BetterScore(s, best)) best = s;
    }
    return best;
  }

 private:
  struct Scored {
    const WmiInfo* wmi;
    int year;
    char descriptor[kDescriptorLength];  // '*' where no key looks
    PassScore score;
  };
  struct Mask {
    const WmiInfo* wmi;
    int year;
    uint32_t constrained;
  };

  uint32_t Constrained(const WmiInfo* wmi, int year) {
    for (const Mask& m : masks_) {
      if (m.wmi == wmi && m.year == year) return m.constrained;
    }
    const uint32_t c = ConstrainedPositions(ix_, *wmi, year);
    masks_.push_back({wmi, year, c});
    return c;
  }

  PassScore Score(absl::string_view v, const WmiInfo* wmi,
                  const PlannedPass& pass) {
    Scored key{wmi, pass.year, {}, {}};
    const uint32_t constrained = Constrained(wmi, pass.year);
    for (int i = 0; i < kDescriptorLength; ++i) {
      // Descriptor position i is VIN index i + 3; 5 is the '|'.
      key.descriptor[i] =
          i != 5 && ((constrained >> i) & 1) != 0 ? v[i + 3] : '*';
    }
    for (const Scored& s : scored_) {
      if (s.wmi == wmi && s.year == pass.year &&
          std::equal(s.descriptor, s.descriptor + kDescriptorLength,
                     key.descriptor)) {
        return s.score;
      }
    }
    const PassResult r = RunPass(ix_, v, wmi, wmi, pass);
    key.score.error_value = r.error_value;
    key.score.elements_weight = r.elements_weight;
    key.score.patterns = r.patterns;
    key.score.year = pass.year;
    key.score.decoded = std::none_of(r.codes.begin(), r.codes.end(), [](int c) {
      return c == code::kNoDetailedData ||
             c == code::kManufacturerNotRegistered;
    });
    scored_.push_back(key);
    return key.score;
  }

  const SnapshotIndex& ix_;
  const int reference_year_;
  std::vector<std::pair<std::string, const WmiInfo*>> wmis_;
  std::vector<Mask> masks_;
  std::vector<Scored> scored_;
};

}  // namespace

bool Snapshot::SuggestReads(absl::string_view vin17) {
  return vin17.size() == kVinLength &&
         std::all_of(vin17.begin(), vin17.end(), vin::IsDigitOrUpper);
}

std::vector<std::string> Snapshot::Suggest(absl::string_view vin17,
                                           int reference_year,
                                           size_t max) const {
  std::vector<std::string> out;
  if (!SuggestReads(vin17) || max == 0 ||
      reference_year < Snapshot::kMinReferenceYear ||
      reference_year > Snapshot::kMaxReferenceYear) {
    return out;
  }
  const std::string input(vin17);

  // The (position, character) pairs the check digit allows.
  std::vector<std::pair<int, char>> changes;
  const char check = input[kCheckIndex];
  if (IsDigit(check) || check == 'X') {
    const int target = check == 'X' ? 10 : check - '0';
    int sum = 0;
    for (int i = 0; i < kVinLength; ++i) sum += kWeights[i] * Value(input[i]);
    for (int p = 0; p < kVinLength; ++p) {
      if (p == kCheckIndex) continue;
      const int rest = sum - kWeights[p] * Value(input[p]);
      const int need = Mod11((target - rest) * Inverse11(kWeights[p]));
      if (need > 9) continue;
      for (const char* c = kCharsOfValue[need]; *c != '\0'; ++c) {
        if (*c != input[p]) changes.emplace_back(p, *c);
      }
    }
  }
  // Position 9 itself: the computed check digit (checked below like the rest).
  if (const char computed = vin::ComputeCheckDigit(input); computed != check) {
    changes.emplace_back(kCheckIndex, computed);
  }

  Scorer scorer(*index_, reference_year);
  std::vector<Suggestion> found;
  std::string v = input;
  for (const auto& [p, c] : changes) {
    v[p] = c;
    const WmiInfo* wmi = scorer.RawWmi(v);
    if (wmi != nullptr && wmi->public_year <= reference_year &&
        AllowedEverywhere(v, wmi)) {
      const PassScore best = scorer.Best(v, wmi);
      if (best.decoded) {
        found.push_back(
            {v, best, Resemblance(input[p], c), p == kCheckIndex, p});
      }
    }
    v[p] = input[p];
  }
  std::sort(found.begin(), found.end(), Before);
  if (found.size() > max) found.resize(max);
  out.reserve(found.size());
  for (Suggestion& s : found) out.push_back(std::move(s.vin));
  return out;
}

}  // namespace snapshot
