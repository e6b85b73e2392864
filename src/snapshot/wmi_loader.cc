// The loader's WMIs (index_loader.h): each Wmi row with its manufacturer,
// vehicle type, only make, publication year and schema links.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "snapshot/index_loader.h"

namespace snapshot {

absl::Status IndexLoader::LoadWmis() {
  WmiTables tables;
  RETURN_IF_ERROR(ReadUpperNames("Manufacturer", &tables.manufacturers));
  RETURN_IF_ERROR(ReadUpperNames("VehicleType", &tables.vehicle_types));
  RETURN_IF_ERROR(ReadMakesOfWmi(&tables.makes_of_wmi));
  RETURN_IF_ERROR(LoadSchemaIndex());
  RETURN_IF_ERROR(ReadSchemaLinks(&tables.links_of_wmi));
  return db_.Query(
      "SELECT Id, Wmi, ManufacturerId, VehicleTypeId, TruckTypeId, "
      "PublicAvailabilityDate FROM Wmi ORDER BY Id",
      [&](sqlite3_stmt* s) { AddWmi(s, tables); });
}

absl::Status IndexLoader::ReadUpperNames(
    const char* table, absl::flat_hash_map<int, std::string>* names) {
  return db_.Query(absl::StrCat("SELECT Id, Name FROM ", table),
                   [&](sqlite3_stmt* s) {
                     (*names)[Int(s, 0)] = absl::AsciiStrToUpper(
                         absl::StripAsciiWhitespace(Text(s, 1)));
                   });
}

absl::Status IndexLoader::ReadMakesOfWmi(
    absl::flat_hash_map<int, std::vector<uint32_t>>* makes_of_wmi) {
  return db_.Query("SELECT WmiId, MakeId FROM Wmi_Make",
                   [&](sqlite3_stmt* s) {
                     auto it = make_index_.find(Int(s, 1));
                     if (it != make_index_.end()) {
                       (*makes_of_wmi)[Int(s, 0)].push_back(it->second);
                     }
                   });
}

// Schemas NHTSA would hide (TobeQCed) get no index entry.
absl::Status IndexLoader::LoadSchemaIndex() {
  return db_.Query(
      "SELECT Id FROM VinSchema WHERE coalesce(TobeQCed, 0) = 0 ORDER BY Id",
      [&](sqlite3_stmt* s) {
        schema_index_[Int(s, 0)] = static_cast<uint32_t>(schema_index_.size());
        ix_.schema_ids.push_back(Int(s, 0));
      });
}

absl::Status IndexLoader::ReadSchemaLinks(
    absl::flat_hash_map<int, std::vector<SchemaLink>>* links_of_wmi) {
  return db_.Query(
      "SELECT WmiId, VinSchemaId, YearFrom, YearTo FROM Wmi_VinSchema "
      "ORDER BY Id",
      [&](sqlite3_stmt* s) {
        auto it = schema_index_.find(Int(s, 1));
        if (it == schema_index_.end()) return;
        SchemaLink link;
        link.schema = it->second;
        link.year_from = static_cast<int16_t>(Int(s, 2));
        link.year_to =
            static_cast<int16_t>(IsNull(s, 3) ? kOpenYear : Int(s, 3));
        (*links_of_wmi)[Int(s, 0)].push_back(link);
      });
}

void IndexLoader::AddWmi(sqlite3_stmt* s, const WmiTables& tables) {
  const int id = Int(s, 0);
  WmiInfo w;
  w.manufacturer_id = IsNull(s, 2) ? 0 : Int(s, 2);
  if (auto it = tables.manufacturers.find(w.manufacturer_id);
      it != tables.manufacturers.end()) {
    w.manufacturer = it->second;
  }
  w.vehicle_type_id = IsNull(s, 3) ? 0 : Int(s, 3);
  if (auto it = tables.vehicle_types.find(w.vehicle_type_id);
      it != tables.vehicle_types.end()) {
    w.vehicle_type = it->second;
  }
  w.truck_type_id = IsNull(s, 4) ? 0 : Int(s, 4);
  if (auto it = tables.makes_of_wmi.find(id);
      it != tables.makes_of_wmi.end() && it->second.size() == 1) {
    w.only_make = it->second.front();
  }
  const int64_t published = ParseVpicTime(Text(s, 5));
  w.public_year = published == 0
                      ? kNeverPublic
                      : static_cast<int>(published / 10000000000000);
  w.links_begin = static_cast<uint32_t>(ix_.links.size());
  if (auto it = tables.links_of_wmi.find(id); it != tables.links_of_wmi.end()) {
    ix_.links.insert(ix_.links.end(), it->second.begin(), it->second.end());
  }
  w.links_end = static_cast<uint32_t>(ix_.links.size());
  const std::string code = absl::AsciiStrToUpper(Text(s, 1));
  if (code.size() != 3 && code.size() != 6) return;
  ix_.wmi_by_code[PackWmi(code)] = static_cast<uint32_t>(ix_.wmis.size());
  ix_.wmis.push_back(std::move(w));
}

}  // namespace snapshot
