// Rule 21: which fields of a decode to trust. Where each variable came from
// (FieldSource), and the model years position 10 leaves open
// (ModelYearCandidate): the contract's messages of the same names.
#ifndef VIN_DOMAIN_PROVENANCE_H_
#define VIN_DOMAIN_PROVENANCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace domain {

struct FieldSource {
  std::string variable;  // vPIC's name, as in Vehicle::attributes
  std::string source;    // "vpic", "pattern", "wmi", ... (vin.proto)
  int64_t schema_id = 0;
  int64_t pattern_id = 0;
  std::string key;

  bool operator==(const FieldSource& o) const {
    return variable == o.variable && source == o.source &&
           schema_id == o.schema_id && pattern_id == o.pattern_id &&
           key == o.key;
  }
};

struct ModelYearCandidate {
  int model_year = 0;
  std::string
      rule;  // "vpic", "hint", "schemas", "newer_cycle", "30_year_cycle"
  bool chosen = false;

  bool operator==(const ModelYearCandidate& o) const {
    return model_year == o.model_year && rule == o.rule && chosen == o.chosen;
  }
};

// The rule names of ModelYearCandidate::rule.
namespace year_rule {
inline constexpr char kVpic[] = "vpic";
inline constexpr char kHint[] = "hint";
inline constexpr char kSchemas[] = "schemas";
inline constexpr char kNewerCycle[] = "newer_cycle";
inline constexpr char kOtherCycle[] = "30_year_cycle";
}  // namespace year_rule

// vPIC's remark (AdditionalErrorText) when position 10 left two years and
// its rules could not tell which.
inline constexpr char kModelYearMayBeIncorrect[] =
    "The Model Year decoded for this VIN may be incorrect.";

}  // namespace domain

#endif  // VIN_DOMAIN_PROVENANCE_H_
