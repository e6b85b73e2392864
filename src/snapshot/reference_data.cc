#include "snapshot/reference_data.h"

#include <algorithm>
#include <functional>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "snapshot/sqlite_db.h"

namespace snapshot {
namespace {

std::string Upper(absl::string_view s) {
  return absl::AsciiStrToUpper(absl::StripAsciiWhitespace(s));
}

// "2015-03-23 14:12:52.590000" -> "2015-03-23"; "" when NULL.
std::string DateOf(absl::string_view t) { return std::string(t.substr(0, 10)); }

// ---- The request key (DecodeKey::reference) ----

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string Decoded(absl::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && Hex(in[i + 1]) >= 0 &&
        Hex(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(Hex(in[i + 1]) * 16 + Hex(in[i + 2])));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

struct Key {
  std::string endpoint;
  std::vector<std::string> path;  // after the endpoint, decoded
  std::vector<std::pair<std::string, std::string>> query;  // decoded
  std::string Param(absl::string_view name) const {
    for (const auto& [k, v] : query) {
      if (k == name) return v;
    }
    return "";
  }
};

Key ParseKey(absl::string_view key) {
  Key k;
  const size_t q = key.find('?');
  std::vector<absl::string_view> parts =
      absl::StrSplit(key.substr(0, q), '/', absl::SkipEmpty());
  if (!parts.empty()) k.endpoint = std::string(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) k.path.push_back(Decoded(parts[i]));
  if (q != absl::string_view::npos) {
    for (absl::string_view pair :
         absl::StrSplit(key.substr(q + 1), '&', absl::SkipEmpty())) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(pair, absl::MaxSplits('=', 1));
      k.query.emplace_back(std::string(kv.first), Decoded(kv.second));
    }
  }
  return k;
}

// ---- vPIC's JSON ----

void Str(absl::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      absl::StrAppend(out, "\\u00",
                      absl::string_view("0123456789abcdef" + (u >> 4), 1),
                      absl::string_view("0123456789abcdef" + (u & 15), 1));
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// One result object, written by `fields` (which appends "name":value,...).
class Document {
 public:
  explicit Document(absl::string_view message) : message_(message) {}
  void Add(const std::function<void(std::string*)>& fields) {
    body_.append(count_++ > 0 ? ",{" : "{");
    fields(&body_);
    body_.push_back('}');
  }
  // `criteria` null when `null_criteria`.
  std::string Finish(absl::string_view criteria, bool null_criteria) const {
    std::string out = absl::StrCat("{\"Count\":", count_, ",\"Message\":");
    Str(message_, &out);
    out.append(",\"SearchCriteria\":");
    if (null_criteria) {
      out.append("null");
    } else {
      Str(criteria, &out);
    }
    absl::StrAppend(&out, ",\"Results\":[", body_, "]}");
    return out;
  }

 private:
  std::string message_;
  std::string body_;
  size_t count_ = 0;
};

void Field(std::string* out, absl::string_view name, absl::string_view value,
           bool last = false) {
  Str(name, out);
  out->push_back(':');
  Str(value, out);
  if (!last) out->push_back(',');
}
void Field(std::string* out, absl::string_view name, int value,
           bool last = false) {
  Str(name, out);
  absl::StrAppend(out, ":", value, last ? "" : ",");
}
void NullOr(std::string* out, absl::string_view name, absl::string_view value,
            bool last = false) {
  if (value.empty()) {
    Str(name, out);
    absl::StrAppend(out, ":null", last ? "" : ",");
  } else {
    Field(out, name, value, last);
  }
}

constexpr char kResponse[] = "Response returned successfully";
constexpr char kResults[] = "Results returned successfully";

// vPIC's LIKE on names: the argument anywhere in the name, without case.
bool Like(absl::string_view name, absl::string_view arg) {
  return absl::StrContains(absl::AsciiStrToLower(name),
                           absl::AsciiStrToLower(arg));
}

std::string ModelsOf(
    const ReferenceData& d,
    const std::function<bool(const ReferenceData::Named&)>& make,
    absl::string_view criteria) {
  absl::flat_hash_map<int, const ReferenceData::Named*> chosen;
  for (const auto& m : d.makes) {
    if (make(m)) chosen[m.id] = &m;
  }
  std::vector<std::pair<int, int>> rows;
  for (const auto& [make_id, model_id] : d.make_models) {
    if (chosen.contains(make_id)) rows.emplace_back(make_id, model_id);
  }
  std::sort(rows.begin(), rows.end());
  Document doc(kResponse);
  for (const auto& [make_id, model_id] : rows) {
    auto name = d.model_names.find(model_id);
    doc.Add([&](std::string* o) {
      Field(o, "Make_ID", make_id);
      Field(o, "Make_Name", chosen[make_id]->name);
      Field(o, "Model_ID", model_id);
      Field(o, "Model_Name", name == d.model_names.end() ? "" : name->second,
            true);
    });
  }
  return doc.Finish(criteria, false);
}

// GetModelsForMake[Id]Year: the models of the patterns of the schemas a
// WMI of the make uses in that year (any year when none is asked), the
// model's own make being one of the WMI's; with a vehicle type, the WMI's
// type matched as LIKE, and the type in each result.
std::string ModelsByYear(const ReferenceData& d, const Key& k) {
  const bool by_id = k.endpoint == "GetModelsForMakeIdYear";
  std::string make_arg, type;
  int year = 0, make_id = 0;
  for (size_t i = 0; i + 1 < k.path.size(); i += 2) {
    const std::string& name = k.path[i];
    if (name == "make" || name == "makeId") make_arg = k.path[i + 1];
    if (name == "modelyear") (void)absl::SimpleAtoi(k.path[i + 1], &year);
    if (name == "vehicletype") type = k.path[i + 1];
  }
  (void)absl::SimpleAtoi(make_arg, &make_id);
  absl::flat_hash_map<int, const ReferenceData::Named*> chosen;
  for (const auto& m : d.makes) {
    if (by_id ? m.id == make_id : Like(m.name, make_arg)) chosen[m.id] = &m;
  }
  absl::flat_hash_map<int, int> make_of_model;
  for (const auto& [make, model] : d.make_models) {
    if (chosen.contains(make)) make_of_model.emplace(model, make);
  }
  // (make, model, vehicle type); the type 0 when none is asked.
  absl::flat_hash_set<std::tuple<int, int, int>> found;
  for (const auto& w : d.wmis) {
    if (!type.empty() && !Like(w.vehicle_type, type)) continue;
    auto links = d.wmi_schemas.find(w.id);
    if (links == d.wmi_schemas.end()) continue;
    for (const auto& link : links->second) {
      if (year != 0 && (year < link.from || year > link.to)) continue;
      auto models = d.schema_models.find(link.schema);
      if (models == d.schema_models.end()) continue;
      for (int model : models->second) {
        auto make = make_of_model.find(model);
        if (make == make_of_model.end() ||
            std::find(w.make_ids.begin(), w.make_ids.end(), make->second) ==
                w.make_ids.end()) {
          continue;
        }
        found.insert(
            {make->second, model, type.empty() ? 0 : w.vehicle_type_id});
      }
    }
  }
  std::vector<std::tuple<int, int, int>> rows(found.begin(), found.end());
  std::sort(rows.begin(), rows.end());
  Document doc(kResults);
  for (const auto& [make, model, vt] : rows) {
    auto name = d.model_names.find(model);
    auto vt_name = d.vehicle_type_names.find(vt);
    doc.Add([&](std::string* o) {
      Field(o, "Make_ID", make);
      Field(o, "Make_Name", chosen[make]->name);
      Field(o, "Model_ID", model);
      Field(o, "Model_Name", name == d.model_names.end() ? "" : name->second,
            type.empty());
      if (!type.empty()) {
        Field(o, "VehicleTypeId", vt);
        Field(o, "VehicleTypeName",
              vt_name == d.vehicle_type_names.end() ? "" : vt_name->second,
              true);
      }
    });
  }
  std::string criteria = absl::StrCat(by_id ? "Make ID:" : "Make:", make_arg);
  if (year != 0) absl::StrAppend(&criteria, " | ModelYear:", year);
  if (!type.empty()) absl::StrAppend(&criteria, " | VehicleType:", type);
  return doc.Finish(criteria, false);
}

// The (make, vehicle type) pairs of the WMIs, distinct, by make then type.
std::vector<std::pair<int, int>> MakeTypePairs(const ReferenceData& d) {
  absl::flat_hash_set<std::pair<int, int>> seen;
  for (const auto& w : d.wmis) {
    if (w.vehicle_type_id == 0) continue;
    for (int m : w.make_ids) seen.insert(std::make_pair(m, w.vehicle_type_id));
  }
  std::vector<std::pair<int, int>> pairs(seen.begin(), seen.end());
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// GetVehicleTypesForMake(Id) and GetMakesForVehicleType: from the WMIs'
// makes and vehicle types.
std::string MakeTypes(const ReferenceData& d, const Key& k,
                      const std::string& arg, int id) {
  absl::flat_hash_map<int, std::string> makes;
  for (const auto& m : d.makes) makes[m.id] = m.name;
  const bool by_id = k.endpoint == "GetVehicleTypesForMakeId";
  const bool by_type = k.endpoint == "GetMakesForVehicleType";
  Document doc(kResponse);
  for (const auto& [make, type] : MakeTypePairs(d)) {
    auto m = makes.find(make);
    auto t = d.vehicle_type_names.find(type);
    if (m == makes.end() || t == d.vehicle_type_names.end()) continue;
    if (by_type ? !Like(t->second, arg)
        : by_id ? make != id
                : !Like(m->second, arg)) {
      continue;
    }
    doc.Add([&](std::string* o) {
      if (!by_id) {
        Field(o, "MakeId", make);
        Field(o, "MakeName", m->second);
      }
      Field(o, "VehicleTypeId", type);
      Field(o, "VehicleTypeName", t->second, true);
    });
  }
  return doc.Finish(absl::StrCat(by_type ? "Vehicle Type: "
                                 : by_id ? "Make ID: "
                                         : "Make: ",
                                 arg),
                    false);
}

// GetWMIsForManufacturer: by the manufacturer (id, or a part of its name)
// and/or a part of the vehicle type's name.
std::string WmisOf(const ReferenceData& d, const Key& k, const std::string& arg,
                   int id, bool is_id) {
  const std::string type = k.Param("vehicleType");
  Document doc(kResponse);
  for (const auto& w : d.wmis) {
    if (!arg.empty() &&
        (is_id ? w.manufacturer_id != id : !Like(w.manufacturer, arg))) {
      continue;
    }
    if (!type.empty() && !Like(w.vehicle_type, type)) continue;
    doc.Add([&](std::string* o) {
      NullOr(o, "Country", w.country);
      Field(o, "CreatedOn", w.created_on);
      Field(o, "DateAvailableToPublic", w.public_on);
      Field(o, "Id", w.manufacturer_id);
      Field(o, "Name", w.manufacturer);
      NullOr(o, "UpdatedOn", w.updated_on);
      Field(o, "VehicleType", w.vehicle_type);
      Field(o, "WMI", w.code, true);
    });
  }
  return doc.Finish(arg.empty() ? absl::StrCat("VehicleType: ", type)
                                : absl::StrCat("Manufacturer: ", arg),
                    false);
}

absl::StatusOr<std::string> Answer(const ReferenceData& d, const Key& k) {
  const std::string arg = k.path.empty() ? "" : k.path[0];
  int id = 0;
  const bool is_id = absl::SimpleAtoi(arg, &id);
  if (k.endpoint == "GetAllMakes") {
    Document doc(kResponse);
    for (const auto& m : d.makes) {
      doc.Add([&](std::string* o) {
        Field(o, "Make_ID", m.id);
        Field(o, "Make_Name", m.name, true);
      });
    }
    return doc.Finish("", true);
  }
  if (k.endpoint == "GetModelsForMake") {
    return ModelsOf(
        d, [&](const auto& m) { return Like(m.name, arg); },
        absl::StrCat("Make:", arg));
  }
  if (k.endpoint == "GetModelsForMakeId") {
    return ModelsOf(
        d, [&](const auto& m) { return m.id == id; },
        absl::StrCat("Make:", arg));
  }
  if (k.endpoint == "GetMakeForManufacturer") {
    absl::flat_hash_map<int, const ReferenceData::Named*> makes;
    for (const auto& m : d.makes) makes[m.id] = &m;
    Document doc(kResults);
    for (const auto& [mfr, make] : d.manufacturer_makes) {
      auto name = d.manufacturer_names.find(mfr);
      auto m = makes.find(make);
      if (name == d.manufacturer_names.end() || m == makes.end()) continue;
      if (is_id ? mfr != id : !Like(name->second, arg)) continue;
      doc.Add([&](std::string* o) {
        Field(o, "Make_ID", make);
        Field(o, "Make_Name", m->second->name);
        Field(o, "Mfr_Name", name->second, true);
      });
    }
    return doc.Finish(absl::StrCat("Manufacturer:", arg), false);
  }
  if (k.endpoint == "DecodeWMI") {
    Document doc(kResults);
    for (const auto& w : d.wmis) {
      if (w.code != arg) continue;
      doc.Add([&](std::string* o) {
        Field(o, "CommonName", "");
        Field(o, "CreatedOn", w.created_on);
        Field(o, "DateAvailableToPublic", w.public_on);
        Field(o, "Make", w.make);
        Field(o, "ManufacturerName", w.manufacturer);
        Field(o, "ParentCompanyName", "");
        Field(o, "URL", "");
        NullOr(o, "UpdatedOn", w.updated_on);
        Field(o, "VehicleType", w.vehicle_type, true);
      });
    }
    return doc.Finish(absl::StrCat("WMI:", arg), false);
  }
  if (k.endpoint == "GetVehicleTypesForMake" ||
      k.endpoint == "GetVehicleTypesForMakeId" ||
      k.endpoint == "GetMakesForVehicleType") {
    return MakeTypes(d, k, arg, id);
  }
  if (k.endpoint == "GetWMIsForManufacturer") {
    return WmisOf(d, k, arg, id, is_id);
  }
  if (k.endpoint == "GetModelsForMakeYear" ||
      k.endpoint == "GetModelsForMakeIdYear") {
    return ModelsByYear(d, k);
  }
  if (k.endpoint == "GetVehicleVariableList") {
    Document doc(kResults);
    for (const auto& e : d.elements) {
      doc.Add([&](std::string* o) {
        Field(o, "DataType", e.data_type);
        Field(o, "Description", e.description);
        NullOr(o, "GroupName", e.group_name);
        Field(o, "ID", e.id);
        Field(o, "Name", e.name, true);
      });
    }
    return doc.Finish("", true);
  }
  if (k.endpoint == "GetVehicleVariableValuesList") {
    const ReferenceData::Element* found = nullptr;
    for (const auto& e : d.elements) {
      if (is_id ? e.id == id : absl::EqualsIgnoreCase(e.name, arg)) found = &e;
    }
    Document doc(kResults);
    if (found != nullptr) {
      for (const auto& v : found->values) {
        doc.Add([&](std::string* o) {
          Field(o, "ElementName", found->name);
          Field(o, "Id", v.id);
          Field(o, "Name", v.name, true);
        });
      }
    }
    return doc.Finish(
        absl::StrCat("Variable:", found != nullptr ? found->name : arg), false);
  }
  return absl::NotFoundError(
      absl::StrCat("the offline vPIC snapshot does not hold what ", k.endpoint,
                   " answers (it answers ", kServedOffline, ")"));
}

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
    s = db.Query("SELECT Id, Name FROM Manufacturer", [&](sqlite3_stmt* r) {
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

absl::StatusOr<std::string> ReferenceAnswer(const ReferenceData& data,
                                            absl::string_view key) {
  return Answer(data, ParseKey(key));
}

}  // namespace snapshot
