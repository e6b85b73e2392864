// Reads what vPIC's reference endpoints need of the snapshot
// (reference_data.h), at load, within the load's limit (the Db's).
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "snapshot/reference_data.h"
#include "snapshot/sqlite_db.h"

namespace snapshot {
namespace {

std::string Upper(absl::string_view s) {
  return absl::AsciiStrToUpper(absl::StripAsciiWhitespace(s));
}

// "2015-03-23 14:12:52.590000" -> "2015-03-23"; "" when NULL.
std::string DateOf(absl::string_view t) { return std::string(t.substr(0, 10)); }

// The public variables (vPIC lists those, IsPrivate 0 or unset), with the
// values of each lookup table the file has.
absl::Status LoadReferenceElements(Db& db, ReferenceData* out) {
  std::vector<std::string> tables;
  absl::Status s = db.Query(
      "SELECT Id, Name, ifnull(Description, ''), ifnull(DataType, ''), "
      "ifnull(GroupName, ''), ifnull(LookupTable, '') FROM Element "
      "WHERE ifnull(IsPrivate, 0) = 0 ORDER BY Id",
      [&](sqlite3_stmt* r) {
        ReferenceData::Element e;
        e.id = Int(r, 0);
        e.name = std::string(Text(r, 1));
        e.description = std::string(Text(r, 2));
        e.data_type = std::string(Text(r, 3));
        e.group_name = std::string(Text(r, 4));
        out->elements.push_back(std::move(e));
        tables.emplace_back(Text(r, 5));
      });
  for (size_t i = 0; s.ok() && i < tables.size(); ++i) {
    // (A table named by the file is read only when the file has it.)
    if (tables[i].empty() || !db.HasTable(tables[i])) continue;
    s = db.Query(absl::StrCat("SELECT Id, Name FROM ",
                              QuoteIdentifier(tables[i]), " ORDER BY Id"),
                 [&](sqlite3_stmt* r) {
                   out->elements[i].values.push_back(
                       {Int(r, 0), std::string(Text(r, 1))});
                 });
  }
  return s;
}

// Each WMI with its manufacturer, its make (its own, or the one make linked
// to it; "" for several) and its vehicle type, by name.
absl::Status LoadReferenceWmis(Db& db, ReferenceData* out) {
  absl::flat_hash_map<int, std::string> makes, countries;
  auto& types = out->vehicle_type_names;
  for (const auto& m : out->makes) makes[m.id] = m.name;
  absl::Status s = db.Query(
      "SELECT Id, Name FROM VehicleType",
      [&](sqlite3_stmt* r) { types[Int(r, 0)] = std::string(Text(r, 1)); });
  if (s.ok() && db.HasTable("Country")) {
    s = db.Query("SELECT Id, Name FROM Country", [&](sqlite3_stmt* r) {
      countries[Int(r, 0)] = std::string(Text(r, 1));
    });
  }
  absl::flat_hash_map<int, std::vector<int>> linked;
  if (s.ok()) {
    s = db.Query("SELECT WmiId, MakeId FROM Wmi_Make", [&](sqlite3_stmt* r) {
      linked[Int(r, 0)].push_back(Int(r, 1));
    });
  }
  if (!s.ok()) return s;
  return db.Query(
      "SELECT Id, Wmi, ManufacturerId, MakeId, VehicleTypeId, "
      "ifnull(CreatedOn, ''), ifnull(UpdatedOn, ''), "
      "ifnull(PublicAvailabilityDate, ''), CountryId FROM Wmi ORDER BY Id",
      [&](sqlite3_stmt* r) {
        ReferenceData::Wmi w;
        w.code = Upper(Text(r, 1));
        w.id = Int(r, 0);
        w.manufacturer_id = Int(r, 2);
        w.vehicle_type_id = Int(r, 4);
        if (auto c = countries.find(Int(r, 8)); c != countries.end()) {
          w.country = c->second;
        }
        auto mfr = out->manufacturer_names.find(Int(r, 2));
        if (mfr != out->manufacturer_names.end()) w.manufacturer = mfr->second;
        int make = IsNull(r, 3) ? 0 : Int(r, 3);
        auto link = linked.find(Int(r, 0));
        if (make != 0) w.make_ids.push_back(make);
        if (link != linked.end()) {
          for (int m : link->second) {
            if (m != make) w.make_ids.push_back(m);
          }
        }
        if (make == 0 && link != linked.end() && link->second.size() == 1) {
          make = link->second[0];
        }
        if (auto m = makes.find(make); m != makes.end()) w.make = m->second;
        if (auto t = types.find(Int(r, 4)); t != types.end()) {
          w.vehicle_type = t->second;
        }
        w.created_on = DateOf(Text(r, 5));
        w.updated_on = DateOf(Text(r, 6));
        w.public_on = DateOf(Text(r, 7));
        out->wmis.push_back(std::move(w));
      });
}

// The models each schema names, and each WMI's schemas with their years.
absl::Status LoadModelYears(Db& db, ReferenceData* out) {
  absl::Status s = db.Query(
      "SELECT DISTINCT VinSchemaId, AttributeId FROM Pattern "
      "WHERE ElementId = 28",
      [&](sqlite3_stmt* r) {
        int model = 0;
        if (absl::SimpleAtoi(Text(r, 1), &model)) {
          out->schema_models[Int(r, 0)].push_back(model);
        }
      });
  if (!s.ok()) return s;
  return db.Query(
      "SELECT WmiId, VinSchemaId, YearFrom, ifnull(YearTo, 9999) "
      "FROM Wmi_VinSchema",
      [&](sqlite3_stmt* r) {
        out->wmi_schemas[Int(r, 0)].push_back(
            {Int(r, 1), Int(r, 2), Int(r, 3)});
      });
}

}  // namespace

size_t ReferenceData::MemoryBytes() const {
  size_t n = makes.size() * sizeof(Named) +
             make_models.size() * sizeof(make_models[0]) +
             manufacturer_makes.size() * sizeof(manufacturer_makes[0]) +
             manufacturer_ids.capacity() * sizeof(int) +
             model_names.size() * (sizeof(int) + sizeof(std::string)) +
             manufacturer_names.size() * (sizeof(int) + sizeof(std::string)) +
             wmis.size() * sizeof(Wmi);
  for (const auto& [schema, models] : schema_models) {
    n += 32 + models.capacity() * sizeof(int);
  }
  for (const auto& [wmi, links] : wmi_schemas) {
    n += 32 + links.capacity() * sizeof(SchemaYears);
  }
  for (const auto& m : makes) n += m.name.capacity();
  for (const auto& [id, s] : model_names) n += s.capacity();
  for (const auto& [id, s] : manufacturer_names) n += s.capacity();
  for (const auto& e : elements) {
    n += sizeof(Element) + e.description.capacity() +
         e.values.size() * sizeof(Named);
  }
  return n;
}

absl::Status LoadReferenceData(Db& db, ReferenceData* out) {
  absl::Status s =
      db.Query("SELECT Id, Name FROM Make ORDER BY Id", [&](sqlite3_stmt* r) {
        out->makes.push_back({Int(r, 0), Upper(Text(r, 1))});
      });
  if (s.ok()) {
    s = db.Query("SELECT Id, Name FROM Model", [&](sqlite3_stmt* r) {
      out->model_names[Int(r, 0)] = std::string(Text(r, 1));
    });
  }
  if (s.ok()) {
    s = db.Query("SELECT MakeId, ModelId FROM Make_Model ORDER BY Id",
                 [&](sqlite3_stmt* r) {
                   out->make_models.emplace_back(Int(r, 0), Int(r, 1));
                 });
  }
  if (s.ok()) {
    s = db.Query("SELECT Id, Name FROM Manufacturer ORDER BY Id",
                 [&](sqlite3_stmt* r) {
                   out->manufacturer_ids.push_back(Int(r, 0));
                   out->manufacturer_names[Int(r, 0)] = std::string(Text(r, 1));
                 });
  }
  if (s.ok()) {
    s = db.Query(
        "SELECT ManufacturerId, MakeId FROM Manufacturer_Make ORDER BY Id",
        [&](sqlite3_stmt* r) {
          out->manufacturer_makes.emplace_back(Int(r, 0), Int(r, 1));
        });
  }
  if (s.ok()) s = LoadReferenceElements(db, out);
  if (s.ok()) s = LoadReferenceWmis(db, out);
  if (s.ok()) s = LoadModelYears(db, out);
  return s;
}

}  // namespace snapshot
