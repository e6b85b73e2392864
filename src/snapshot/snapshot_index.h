// The immutable in-memory form of the vPIC snapshot (SNAPSHOT.md section 5):
// built once by LoadSnapshotIndex() from the SQLite file, then only read, so
// any number of threads may decode from one index concurrently.
#ifndef VIN_SNAPSHOT_SNAPSHOT_INDEX_H_
#define VIN_SNAPSHOT_SNAPSHOT_INDEX_H_

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "snapshot/key_pattern.h"
#include "snapshot/load_limit.h"
#include "snapshot/reference_data.h"

namespace snapshot {

inline constexpr uint32_t kNone = 0xFFFFFFFFu;
inline constexpr int kOpenYear = 9999;      // Wmi_VinSchema.YearTo IS NULL
inline constexpr int kNeverPublic = INT_MAX;  // Wmi.PublicAvailabilityDate NULL

// vPIC element ids the decoder treats specially.
namespace element {
inline constexpr int kBodyClass = 5;
inline constexpr int kEngineModel = 18;
inline constexpr int kMake = 26;
inline constexpr int kManufacturer = 27;
inline constexpr int kModel = 28;
inline constexpr int kModelYear = 29;
inline constexpr int kVehicleType = 39;
inline constexpr int kManufacturerId = 157;
}  // namespace element

struct ElementInfo {
  int id = 0;
  std::string code;         // the vPIC variable name: "BodyClass"
  int weight = -1;          // Element.weight; -1 when NULL
  bool multi_valued = false;  // the "Other ... Info" elements: all values kept
  int code_rank = 0;          // position of `code` in sorted order
};

// A resolved pattern value (Pattern.AttributeId through the element's lookup
// table). For Model values, the model's make.
struct ValueInfo {
  std::string text;          // "" when the lookup row is missing
  std::string attribute_id;  // Pattern.AttributeId as stored
  uint32_t make = kNone;     // Model values: index into makes
};

struct MakeInfo {
  int id = 0;
  std::string name;  // upper case, as the API reports makes
};

struct WmiInfo {
  std::string manufacturer;  // upper case; "" when unknown
  int manufacturer_id = 0;
  std::string vehicle_type;  // upper case
  int vehicle_type_id = 0;
  int truck_type_id = 0;
  uint32_t only_make = kNone;  // the make when the WMI has exactly one
  int public_year = kNeverPublic;
  uint32_t links_begin = 0;
  uint32_t links_end = 0;
};

struct SchemaLink {
  uint32_t schema = 0;  // index into schema_patterns_begin
  int16_t year_from = 0;
  int16_t year_to = 0;
};

// One EngineModelPattern row, attached when the winning Engine Model names it.
struct EngineModelRow {
  uint16_t slot = 0;
  uint32_t value = 0;
  int64_t changed = 0;
  uint32_t id = 0;
};

// A Conversion row: to = from (op) constant, with SQL Server decimal rules.
struct ConversionRule {
  int id = 0;
  uint16_t from_slot = 0;
  uint16_t to_slot = 0;
  char op = '*';
  std::string constant;
};

struct SnapshotIndex {
  std::vector<ElementInfo> elements;                 // by slot
  absl::flat_hash_map<int, uint16_t> slot_of_element;  // element id -> slot

  std::vector<ValueInfo> values;
  std::vector<MakeInfo> makes;

  absl::flat_hash_map<uint64_t, uint32_t> wmi_by_code;  // PackWmi() -> index
  std::vector<WmiInfo> wmis;
  std::vector<SchemaLink> links;

  // Compiled keys, and their token masks; each key's text as stored
  // (upper-cased), for provenance (rule 21).
  std::vector<CompiledKey> keys;
  std::vector<std::string> key_text;
  // VinSchema.Id of each schema index (SchemaLink::schema).
  std::vector<int> schema_ids;
  std::vector<uint64_t> key_masks;

  // Patterns grouped by schema, in Pattern.Id order (structure of arrays).
  std::vector<uint32_t> schema_patterns_begin;  // size: schemas + 1
  // The scan's hot data, one cache-friendly row per pattern: the key's first
  // two token masks inline (all ones past the key's end), so most patterns
  // are rejected without touching the key.
  struct PatternScan {
    uint64_t mask0;
    uint64_t mask1;
    uint32_t key;
    uint16_t slot;
    uint16_t formula;  // 1 for formula keys (matched on folded codes)
  };
  std::vector<PatternScan> pattern_scan;
  std::vector<uint32_t> pattern_value;
  std::vector<int64_t> pattern_changed;  // coalesce(UpdatedOn, CreatedOn)
  std::vector<uint32_t> pattern_id;

  // lower(trim(EngineModel.Name)) -> its EngineModelPattern rows.
  absl::flat_hash_map<std::string, std::vector<EngineModelRow>> engine_models;
  std::vector<ConversionRule> conversions;  // in Conversion.Id order

  // What vPIC's reference endpoints need (rule 18; reference_data.h).
  ReferenceData reference;

  std::string data_date;  // "YYYY-MM-DD" of the newest NHTSA pattern change
  size_t pattern_rows_read = 0;

  int SlotOf(int element_id) const {
    auto it = slot_of_element.find(element_id);
    return it == slot_of_element.end() ? -1 : it->second;
  }
};

// A WMI code (3 or 6 characters) packed into an integer key.
uint64_t PackWmi(absl::string_view wmi);

// "2015-03-04 11:16:52.480000" or "2026-03-12T04:06:32.436Z" as an integer
// that orders like the time (YYYYMMDDhhmmssmmm); 0 for NULL or garbage.
int64_t ParseVpicTime(absl::string_view text);

// Reads the SQLite snapshot at `path` (an existing regular file) into an
// index, within `limit` (its CANCELLED or DEADLINE_EXCEEDED once it says
// stop). FAILED_PRECONDITION when it is not a vPIC snapshot, or holds what
// schema_check.h refuses.
absl::StatusOr<std::unique_ptr<const SnapshotIndex>> LoadSnapshotIndex(
    const std::string& path, const LoadLimit& limit);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SNAPSHOT_INDEX_H_
