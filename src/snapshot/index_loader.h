// The loader behind LoadSnapshotIndex() (snapshot_index.h): reads the SQLite
// snapshot table by table into a SnapshotIndex. Internal to the loader's
// files:
//   index_loader.cc    Run, elements, makes and models, engine models,
//                      conversions, and the public entry points
//   wmi_loader.cc      WMIs, their schemas and schema links
//   pattern_loader.cc  Pattern rows: read, grouped by schema, keys ranked
//   value_interner.cc  values (element, AttributeId) and lookup tables
#ifndef VIN_SNAPSHOT_INDEX_LOADER_H_
#define VIN_SNAPSHOT_INDEX_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "snapshot/load_limit.h"
#include "snapshot/snapshot_index.h"
#include "snapshot/sqlite_db.h"

#define RETURN_IF_ERROR(expr)          \
  do {                                 \
    absl::Status _status = (expr);     \
    if (!_status.ok()) return _status; \
  } while (0)

namespace snapshot {

class IndexLoader {
 public:
  // Loads into `index` within `limit` (which must outlive the loader).
  IndexLoader(SnapshotIndex* index, const LoadLimit& limit)
      : ix_(*index), limit_(limit) {}

  absl::Status Run(const std::string& path);

 private:
  // A Pattern row the index keeps, before patterns are grouped by schema.
  struct PatternRow {
    uint32_t schema, key, value, id;
    uint16_t slot;
    int64_t changed;
  };
  struct Lookup {
    absl::flat_hash_map<int, std::string> names;
  };
  // What a Wmi row is completed with, by Manufacturer, VehicleType and Wmi
  // id.
  struct WmiTables {
    absl::flat_hash_map<int, std::string> manufacturers, vehicle_types;
    absl::flat_hash_map<int, std::vector<uint32_t>> makes_of_wmi;
    absl::flat_hash_map<int, std::vector<SchemaLink>> links_of_wmi;
  };

  // index_loader.cc
  // The file's schema passes CheckSchema (schema_check.h).
  absl::Status CheckTables(const std::string& path);
  absl::Status LoadElements();
  void RankElementCodes();
  absl::Status LoadMakesAndModels();
  absl::Status LoadEngineModels();
  absl::Status LoadConversions();
  // Rule 18's reference endpoints (reference_data.h).
  absl::Status LoadReference();

  // wmi_loader.cc
  absl::Status LoadWmis();
  // Table (Id, Name) -> upper-case trimmed name.
  absl::Status ReadUpperNames(const char* table,
                              absl::flat_hash_map<int, std::string>* names);
  absl::Status ReadMakesOfWmi(
      absl::flat_hash_map<int, std::vector<uint32_t>>* makes_of_wmi);
  absl::Status LoadSchemaIndex();
  absl::Status ReadSchemaLinks(
      absl::flat_hash_map<int, std::vector<SchemaLink>>* links_of_wmi);
  // Adds the Wmi row `s` (a 3- or 6-character code) to the index.
  void AddWmi(sqlite3_stmt* s, const WmiTables& tables);

  // pattern_loader.cc
  absl::Status LoadPatterns();
  absl::Status ReadPatternRows(std::vector<PatternRow>* rows);
  // Keeps the row `s` in `rows` when the index uses it; notes its NHTSA
  // change times in `newest_nhtsa` either way.
  void AddPatternRow(sqlite3_stmt* s, std::vector<PatternRow>* rows,
                     int64_t* newest_nhtsa);
  void NoteDataDate(int64_t newest_nhtsa);
  void GroupPatternsBySchema(std::vector<PatternRow> rows);
  void RankKeysByText();
  uint32_t InternKey(absl::string_view key);

  // value_interner.cc
  // The index of the value (element slot, AttributeId), interned.
  uint32_t InternValue(uint16_t slot, absl::string_view attribute_id);
  ValueInfo ResolveValue(uint16_t slot, absl::string_view attribute_id);
  // The lookup table `table` (Id -> Name), or nullptr when the element has no
  // lookup table or the snapshot lacks it (the value is then the raw id).
  const Lookup* LookupFor(const std::string& table);

  SnapshotIndex& ix_;
  const LoadLimit& limit_;
  Db db_;
  std::vector<std::string> lookup_table_;  // by slot
  std::vector<bool> decodable_;            // by slot
  absl::flat_hash_map<int, uint32_t> make_index_;
  absl::flat_hash_map<int, uint32_t> model_make_;
  absl::flat_hash_map<int, uint32_t> schema_index_;
  // By element slot: AttributeId -> index into values.
  std::vector<absl::flat_hash_map<std::string, uint32_t>> value_ids_;
  absl::flat_hash_map<uint64_t, uint32_t> numeric_ids_;  // (slot, number)
  absl::flat_hash_map<std::string, std::unique_ptr<Lookup>> lookups_;
  absl::flat_hash_map<std::string, uint32_t> key_ids_;
  std::vector<std::string> key_texts_;
};

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_INDEX_LOADER_H_
