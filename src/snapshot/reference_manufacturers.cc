// vPIC's manufacturer and WMI endpoints from the snapshot
// (reference_data.h): the Manufacturer, Manufacturer_Make and Wmi tables as
// read at load. What the snapshot does not hold of a manufacturer (its
// common name, country, vehicle types, manufacturer types) is empty.
#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "snapshot/reference_document.h"
#include "snapshot/reference_key.h"

namespace snapshot {
namespace reference {
namespace {

// vPIC's GetAllManufacturers pages.
constexpr int kManufacturersPerPage = 100;

bool IsManufacturer(const Key& k, int id, absl::string_view name) {
  return k.is_id ? id == k.id : Like(name, k.arg);
}

}  // namespace

// GetMakeForManufacturer: the manufacturer-make pairs, by the
// manufacturer's id or a part of its name.
std::string MakesOfManufacturer(const ReferenceData& d, const Key& k) {
  absl::flat_hash_map<int, const ReferenceData::Named*> makes;
  for (const auto& m : d.makes) makes[m.id] = &m;
  Document doc(kResults);
  for (const auto& [mfr, make] : d.manufacturer_makes) {
    auto name = d.manufacturer_names.find(mfr);
    auto m = makes.find(make);
    if (name == d.manufacturer_names.end() || m == makes.end()) continue;
    if (!IsManufacturer(k, mfr, name->second)) continue;
    doc.Add([&](std::string* o) {
      Field(o, "Make_ID", make);
      Field(o, "Make_Name", m->second->name);
      Field(o, "Mfr_Name", name->second, true);
    });
  }
  return doc.Finish(absl::StrCat("Manufacturer:", k.arg), false);
}

// GetMakesForManufacturerAndYear: the manufacturer's makes (by its id or a
// part of its name) that a WMI of the manufacturer names, the WMI having a
// VIN schema for that year. vPIC keeps a year range per manufacturer and
// make; the snapshot does not, and its schemas' years stand in for it.
std::string MakesOfManufacturerInYear(const ReferenceData& d, const Key& k) {
  int year = 0;
  (void)absl::SimpleAtoi(k.Param("year"), &year);
  std::set<std::pair<int, int>> in_year;  // (manufacturer, make)
  for (const auto& w : d.wmis) {
    if (!IsManufacturer(k, w.manufacturer_id, w.manufacturer)) continue;
    auto links = d.wmi_schemas.find(w.id);
    if (links == d.wmi_schemas.end() ||
        std::none_of(
            links->second.begin(), links->second.end(),
            [&](const auto& l) { return year >= l.from && year <= l.to; })) {
      continue;
    }
    for (int make : w.make_ids) in_year.emplace(w.manufacturer_id, make);
  }
  absl::flat_hash_map<int, const std::string*> makes;
  for (const auto& m : d.makes) makes[m.id] = &m.name;
  std::set<std::pair<int, int>> rows;
  for (const auto& pair : d.manufacturer_makes) {
    if (in_year.count(pair) != 0 && makes.contains(pair.second)) {
      rows.insert(pair);
    }
  }
  Document doc(kResponse);
  for (const auto& [mfr, make] : rows) {
    doc.Add([&](std::string* o) {
      Field(o, "MakeId", make);
      Field(o, "MakeName", *makes[make]);
      Field(o, "MfrId", mfr);
      Field(o, "MfrName", d.manufacturer_names.at(mfr), true);
    });
  }
  return doc.Finish(
      absl::StrCat("Manufacturer : ", k.arg, ", Year: ", k.Param("year")),
      false);
}

// GetAllManufacturers: a page of 100 manufacturers by id, with their
// names; the rest of vPIC's fields are not in the snapshot (null, and no
// vehicle types). A ManufacturerType filter is refused before this
// (reference_data.cc).
std::string AllManufacturers(const ReferenceData& d, const Key& k) {
  int page = 1;
  (void)absl::SimpleAtoi(k.Param("page"), &page);
  const size_t first =
      static_cast<size_t>(std::max(page, 1) - 1) * kManufacturersPerPage;
  const size_t end =
      std::min(d.manufacturer_ids.size(), first + kManufacturersPerPage);
  Document doc(kResponse);
  for (size_t i = first; i < end; ++i) {
    const int id = d.manufacturer_ids[i];
    doc.Add([&](std::string* o) {
      NullOr(o, "Country", "");
      NullOr(o, "Mfr_CommonName", "");
      Field(o, "Mfr_ID", id);
      Field(o, "Mfr_Name", d.manufacturer_names.at(id));
      RawField(o, "VehicleTypes", "[]", true);
    });
  }
  return doc.Finish("", true);
}

// DecodeWMI: what the snapshot holds of the WMI; CommonName,
// ParentCompanyName and URL are not in it, and are empty.
std::string Wmi(const ReferenceData& d, const Key& k) {
  Document doc(kResults);
  for (const auto& w : d.wmis) {
    if (w.code != k.arg) continue;
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
  return doc.Finish(absl::StrCat("WMI:", k.arg), false);
}

// GetWMIsForManufacturer: by the manufacturer (id, or a part of its name)
// and/or a part of the vehicle type's name.
std::string WmisOf(const ReferenceData& d, const Key& k) {
  const std::string& arg = k.arg;
  const std::string type = k.Param("vehicleType");
  Document doc(kResponse);
  for (const auto& w : d.wmis) {
    if (!arg.empty() && !IsManufacturer(k, w.manufacturer_id, w.manufacturer)) {
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

}  // namespace reference
}  // namespace snapshot
