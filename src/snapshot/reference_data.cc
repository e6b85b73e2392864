#include "snapshot/reference_data.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "snapshot/reference_document.h"
#include "snapshot/reference_key.h"

namespace snapshot {
namespace {

using reference::Document;
using reference::Field;
using reference::Key;
using reference::kResponse;
using reference::kResults;
using reference::Like;
using reference::NullOr;

// ---- The answers, one function per endpoint (or kind of endpoint) ----

std::string AllMakes(const ReferenceData& d, const Key&) {
  Document doc(kResponse);
  for (const auto& m : d.makes) {
    doc.Add([&](std::string* o) {
      Field(o, "Make_ID", m.id);
      Field(o, "Make_Name", m.name, true);
    });
  }
  return doc.Finish("", true);
}

using MakePick = std::function<bool(const ReferenceData::Named&)>;

// The makes `pick` chooses, by id.
absl::flat_hash_map<int, const ReferenceData::Named*> MakesWhere(
    const ReferenceData& d, const MakePick& pick) {
  absl::flat_hash_map<int, const ReferenceData::Named*> chosen;
  for (const auto& m : d.makes) {
    if (pick(m)) chosen[m.id] = &m;
  }
  return chosen;
}

// The name `id` has in `names` ("" when none).
absl::string_view NameIn(const absl::flat_hash_map<int, std::string>& names,
                         int id) {
  auto it = names.find(id);
  return it == names.end() ? absl::string_view() : it->second;
}

std::string ModelsOf(const ReferenceData& d, const MakePick& make,
                     absl::string_view criteria) {
  auto chosen = MakesWhere(d, make);
  std::vector<std::pair<int, int>> rows;
  for (const auto& [make_id, model_id] : d.make_models) {
    if (chosen.contains(make_id)) rows.emplace_back(make_id, model_id);
  }
  std::sort(rows.begin(), rows.end());
  Document doc(kResponse);
  for (const auto& [make_id, model_id] : rows) {
    doc.Add([&](std::string* o) {
      Field(o, "Make_ID", make_id);
      Field(o, "Make_Name", chosen[make_id]->name);
      Field(o, "Model_ID", model_id);
      Field(o, "Model_Name", NameIn(d.model_names, model_id), true);
    });
  }
  return doc.Finish(criteria, false);
}

// GetModelsForMake (a part of the make's name) and GetModelsForMakeId.
std::string ModelsForMake(const ReferenceData& d, const Key& k) {
  const bool by_id = k.endpoint == "GetModelsForMakeId";
  return ModelsOf(
      d,
      [&](const auto& m) { return by_id ? m.id == k.id : Like(m.name, k.arg); },
      absl::StrCat("Make:", k.arg));
}

// The (make, model) pairs of WMI `w` in `year` (0: any): the models its
// schemas of that year name, of a make in `make_of_model` that is `w`'s.
std::vector<std::pair<int, int>> ModelsOfWmi(
    const ReferenceData& d, const ReferenceData::Wmi& w, int year,
    const absl::flat_hash_map<int, int>& make_of_model) {
  std::vector<std::pair<int, int>> out;
  auto links = d.wmi_schemas.find(w.id);
  if (links == d.wmi_schemas.end()) return out;
  for (const auto& link : links->second) {
    if (year != 0 && (year < link.from || year > link.to)) continue;
    auto models = d.schema_models.find(link.schema);
    if (models == d.schema_models.end()) continue;
    for (int model : models->second) {
      auto make = make_of_model.find(model);
      if (make != make_of_model.end() &&
          std::find(w.make_ids.begin(), w.make_ids.end(), make->second) !=
              w.make_ids.end()) {
        out.emplace_back(make->second, model);
      }
    }
  }
  return out;
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
  auto chosen = MakesWhere(d, [&](const auto& m) {
    return by_id ? m.id == make_id : Like(m.name, make_arg);
  });
  absl::flat_hash_map<int, int> make_of_model;
  for (const auto& [make, model] : d.make_models) {
    if (chosen.contains(make)) make_of_model.emplace(model, make);
  }
  // (make, model, vehicle type); the type 0 when none is asked.
  absl::flat_hash_set<std::tuple<int, int, int>> found;
  for (const auto& w : d.wmis) {
    if (!type.empty() && !Like(w.vehicle_type, type)) continue;
    const int type_id = type.empty() ? 0 : w.vehicle_type_id;
    for (const auto& [make, model] : ModelsOfWmi(d, w, year, make_of_model)) {
      found.insert({make, model, type_id});
    }
  }
  std::vector<std::tuple<int, int, int>> rows(found.begin(), found.end());
  std::sort(rows.begin(), rows.end());
  Document doc(kResults);
  for (const auto& [make, model, vt] : rows) {
    doc.Add([&](std::string* o) {
      Field(o, "Make_ID", make);
      Field(o, "Make_Name", chosen[make]->name);
      Field(o, "Model_ID", model);
      Field(o, "Model_Name", NameIn(d.model_names, model), type.empty());
      if (!type.empty()) {
        Field(o, "VehicleTypeId", vt);
        Field(o, "VehicleTypeName", NameIn(d.vehicle_type_names, vt), true);
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
std::string MakeTypes(const ReferenceData& d, const Key& k) {
  const std::string& arg = k.arg;
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
        : by_id ? make != k.id
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

std::string Variables(const ReferenceData& d, const Key&) {
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

// GetVehicleVariableValuesList: a lookup variable's values, by its name or
// id.
std::string VariableValues(const ReferenceData& d, const Key& k) {
  const ReferenceData::Element* found = nullptr;
  for (const auto& e : d.elements) {
    if (k.is_id ? e.id == k.id : absl::EqualsIgnoreCase(e.name, k.arg)) {
      found = &e;
    }
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
      absl::StrCat("Variable:", found != nullptr ? found->name : k.arg), false);
}

// The endpoints the snapshot answers, and how; `unheld` a parameter whose
// data the snapshot does not hold: a request with it is not answered.
struct Served {
  absl::string_view endpoint;
  std::string (*answer)(const ReferenceData&, const Key&);
  absl::string_view unheld = "";
};
constexpr Served kServed[] = {
    {"GetAllMakes", AllMakes},
    {"GetModelsForMake", ModelsForMake},
    {"GetModelsForMakeId", ModelsForMake},
    {"GetModelsForMakeYear", ModelsByYear},
    {"GetModelsForMakeIdYear", ModelsByYear},
    {"GetAllManufacturers", reference::AllManufacturers, "ManufacturerType"},
    {"GetMakeForManufacturer", reference::MakesOfManufacturer},
    {"GetMakesForManufacturerAndYear", reference::MakesOfManufacturerInYear},
    {"DecodeWMI", reference::Wmi},
    {"GetWMIsForManufacturer", reference::WmisOf},
    {"GetVehicleTypesForMake", MakeTypes},
    {"GetVehicleTypesForMakeId", MakeTypes},
    {"GetMakesForVehicleType", MakeTypes},
    {"GetVehicleVariableList", Variables},
    {"GetVehicleVariableValuesList", VariableValues},
};

}  // namespace

std::string ReferenceEndpointsOffline() {
  return absl::StrJoin(kServed, ", ", [](std::string* out, const Served& s) {
    out->append(s.endpoint.data(), s.endpoint.size());
  });
}

absl::StatusOr<std::string> ReferenceAnswer(const ReferenceData& data,
                                            absl::string_view key) {
  const Key k = reference::ParseKey(key);
  for (const Served& s : kServed) {
    if (s.endpoint != k.endpoint) continue;
    if (!s.unheld.empty() && !k.Param(s.unheld).empty()) {
      return absl::NotFoundError(
          absl::StrCat("the offline vPIC snapshot does not hold ", s.unheld,
                       " (", k.endpoint, " is answered offline without it)"));
    }
    return s.answer(data, k);
  }
  return absl::NotFoundError(
      absl::StrCat("the offline vPIC snapshot does not hold what ", k.endpoint,
                   " answers (it answers ", ReferenceEndpointsOffline(), ")"));
}

}  // namespace snapshot
