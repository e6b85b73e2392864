// One spVinDecode_Core pass over the in-memory index: the patterns of the
// WMI's schemas for one model year, matched whole-key against the VIN's
// descriptor, one winner per element ranked as NHTSA ranks, the make from
// the winning model, conversions, and the pass's vPIC error codes.
#ifndef VIN_SNAPSHOT_DECODE_PASS_H_
#define VIN_SNAPSHOT_DECODE_PASS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "snapshot/model_year.h"
#include "snapshot/snapshot_index.h"

namespace snapshot {

// A decoded element value.
struct PassItem {
  enum class Source : uint8_t {
    kPattern, kFormula, kEngineModel, kMakeFromModel, kWmi, kConversion,
  };
  uint16_t slot = 0;
  Source source = Source::kPattern;
  uint32_t value = kNone;  // index into SnapshotIndex::values, or kNone
  bool own_text = false;   // the value is `text`, not values[value].text
  std::string text;
  const std::string* ref = nullptr;  // else: the value, held by the index
  uint32_t make = kNone;   // kMakeFromModel / kWmi make: index into makes
  // Rank inputs (NHTSA's order) and provenance.
  int priority = 0;  // Wmi_VinSchema.YearFrom, or 100/50 for formula/engine
  int64_t changed = 0;
  uint32_t key = kNone;
  uint32_t pattern_id = 0;
  uint32_t sequence = 0;         // last tie-breaker (insertion order); an
                                 // EngineModelPattern row's id
  uint32_t schema = kNone;       // the pattern's schema: index into schema_ids
  uint32_t source_slot = kNone;  // kConversion: the element converted from
  bool has_pattern = false;  // vPIC's PatternId IS NOT NULL

  const std::string& Text(const SnapshotIndex& ix) const {
    if (ref != nullptr) return *ref;
    return own_text || value == kNone ? text : ix.values[value].text;
  }
  const std::string& AttributeId(const SnapshotIndex& ix) const {
    if (ref != nullptr) return *ref;
    return value == kNone ? text : ix.values[value].attribute_id;
  }
};

struct PassResult {
  PlannedPass pass;
  std::vector<PassItem> items;  // winners; several for multi-valued elements
  std::vector<int> codes;       // vPIC error codes, ascending
  std::string additional_error_text;
  bool off_road = false;
  // spVinDecode's best-pass criteria.
  int error_value = 0;
  int elements_weight = 0;
  int patterns = 0;

  const PassItem* Find(int slot) const {
    for (const PassItem& item : items) {
      if (item.slot == slot) return &item;
    }
    return nullptr;
  }
};

// spVinDecode's best-pass order: the error value, the elements' weight, the
// patterns' count, then the larger year (`year_a`, `year_b`: the caller adds
// any bonus for its hint). Whether `a` ranks before `b`; `Scores` is a
// PassResult or anything with the same three scores.
template <typename Scores>
bool ScoresRankBefore(const Scores& a, const Scores& b, int year_a,
                      int year_b) {
  if (a.error_value != b.error_value) return a.error_value > b.error_value;
  if (a.elements_weight != b.elements_weight) {
    return a.elements_weight > b.elements_weight;
  }
  if (a.patterns != b.patterns) return a.patterns > b.patterns;
  return year_a > year_b;
}

// Runs one pass. `wmi` is the WMI as NHTSA may publish it (nullptr: unknown
// or not public); `raw_wmi` is the WMI row whatever its publication (NHTSA
// reads the vehicle type from it for the character and check-digit rules).
PassResult RunPass(const SnapshotIndex& index, absl::string_view vin17,
                   const WmiInfo* wmi, const WmiInfo* raw_wmi,
                   const PlannedPass& pass);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_DECODE_PASS_H_
