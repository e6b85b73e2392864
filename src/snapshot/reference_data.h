// What vPIC's reference endpoints (DESIGN rule 18) need of the snapshot,
// read once at load next to the decode index, and the snapshot's answers
// built from it in memory (no SQL per request): vPIC's JSON document for a
// request key (domain::DecodeKey::reference), with the fields the snapshot
// holds and the others empty, as vPIC writes an empty field. An endpoint
// whose data the snapshot lacks is NOT_FOUND naming what it lacks.
// reference_loader.cc reads the tables; reference_data.cc answers.
#ifndef VIN_SNAPSHOT_REFERENCE_DATA_H_
#define VIN_SNAPSHOT_REFERENCE_DATA_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace snapshot {

class Db;

struct ReferenceData {
  struct Named {
    int id = 0;
    std::string name;
  };
  std::vector<Named> makes;  // Make, by Id; names as vPIC reports
                             // them (upper case)
  absl::flat_hash_map<int, std::string> model_names;  // Model
  std::vector<std::pair<int, int>> make_models;  // Make_Model (make, model)
  absl::flat_hash_map<int, std::string> manufacturer_names;  // Manufacturer
  std::vector<int> manufacturer_ids;                         // by Id
  std::vector<std::pair<int, int>> manufacturer_makes;  // (manufacturer, make)
  struct Element {
    int id = 0;
    std::string name, description, data_type, group_name;
    std::vector<Named> values;  // a lookup element's table, by Id
  };
  std::vector<Element> elements;  // the public ones (IsPrivate 0), by Id
  struct Wmi {
    std::string code;
    std::string manufacturer, make, vehicle_type;   // "" when unknown
    std::string created_on, updated_on, public_on;  // "YYYY-MM-DD" or ""
    std::string country;                            // "" when unknown
    int id = 0;
    int manufacturer_id = 0;
    int vehicle_type_id = 0;
    std::vector<int> make_ids;  // its own make and those linked to it
  };
  std::vector<Wmi> wmis;  // by Wmi.Id
  absl::flat_hash_map<int, std::string> vehicle_type_names;  // VehicleType
  // Models by year: the models each VIN schema's patterns name (Pattern,
  // element 28), and each WMI's schemas with their years (Wmi_VinSchema).
  absl::flat_hash_map<int, std::vector<int>> schema_models;
  struct SchemaYears {
    int schema = 0;
    int from = 0, to = 0;  // to 9999 when open
  };
  absl::flat_hash_map<int, std::vector<SchemaYears>> wmi_schemas;

  size_t MemoryBytes() const;
};

// Reads the tables (the schema was checked by the index loader first).
absl::Status LoadReferenceData(Db& db, ReferenceData* out);

// The reference endpoints the snapshot answers, comma-separated (for
// messages).
std::string ReferenceEndpointsOffline();

// The answer to reference request `key` as vPIC's JSON, or NOT_FOUND (the
// message naming what the snapshot does not hold).
absl::StatusOr<std::string> ReferenceAnswer(const ReferenceData& data,
                                            absl::string_view key);

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_REFERENCE_DATA_H_
