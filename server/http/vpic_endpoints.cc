#include "server/http/vpic_endpoints.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "server/http/routes.h"
#include "util/utf8.h"

namespace server {
namespace http {
namespace {

using Path = VpicEndpoint::Path;
constexpr ArgKind kText = ArgKind::kText;

// The endpoints (tests/fixtures/vpic/SHAPES.md section 4). The XML element
// names that SHAPES.md marks "not evidenced" are this service's reading of
// vPIC's .NET classes, said so in the README.
constexpr VpicEndpoint kEndpoints[] = {
    {"DecodeWMI", Path::kArg, ArgKind::kWmi, "WMI", {}, "DecodedWMI", ""},
    {"GetWMIsForManufacturer",
     Path::kOptArg,
     kText,
     "manufacturer",
     {{"vehicleType", kText}},
     "WMIsForManufacturer",
     "",
     "vehicleType"},
    {"GetAllMakes",
     Path::kNone,
     kText,
     "",
     {},
     "AllVehicleMakes",
     "Make_ID,Make_Name"},
    {"GetParts",
     Path::kNone,
     kText,
     "",
     {{"type", ArgKind::kChoice, false, "565|566"},
      {"fromDate", ArgKind::kDate},
      {"toDate", ArgKind::kDate},
      {"manufacturer", kText},
      {"page", ArgKind::kPage}},
     "Parts",
     ""},
    {"GetAllManufacturers",
     Path::kNone,
     kText,
     "",
     {{"ManufacturerType", kText}, {"page", ArgKind::kPage}},
     "Manufacturers",
     "Mfr_ID,Mfr_Name,Mfr_CommonName,Country,VehicleTypes"},
    {"GetManufacturerDetails",
     Path::kArg,
     kText,
     "manufacturer",
     {},
     "ManufacturerDetails",
     "Mfr_ID,Mfr_Name,Mfr_CommonName,Address,Address2,City,StateProvince,"
     "PostalCode,Country,LastUpdated,OtherManufacturerDetails,"
     "PrincipalFirstName,PrincipalPosition,ContactPhone,ContactEmail,"
     "SubmittedName,SubmittedPosition,SubmittedOn,EquipmentItems,VehicleTypes,"
     "ManufacturerTypes"},
    {"GetMakeForManufacturer",
     Path::kArg,
     kText,
     "manufacturer",
     {},
     "MakesForMfg",
     "Mfr_Name,Make_ID,Make_Name"},
    {"GetMakesForManufacturerAndYear",
     Path::kArg,
     kText,
     "manufacturer",
     {{"year", ArgKind::kYear, true}},
     "MakesForMfrYear",
     "MakeId,MakeName,MfrId,MfrName"},
    {"GetMakesForVehicleType",
     Path::kArg,
     kText,
     "vehicle type",
     {},
     "MakesForVehicleType",
     ""},
    {"GetVehicleTypesForMake",
     Path::kArg,
     kText,
     "make",
     {},
     "VehicleTypesForMake",
     ""},
    {"GetVehicleTypesForMakeId",
     Path::kArg,
     ArgKind::kId,
     "make id",
     {},
     "VehicleTypesForMakeIds",
     "VehicleTypeId,VehicleTypeName"},
    {"GetEquipmentPlantCodes",
     Path::kNone,
     kText,
     "",
     {{"year", ArgKind::kYear, true},
      {"equipmentType", ArgKind::kChoice, true, "1|3|13|16"},
      {"reportType", ArgKind::kChoice, true, "New|Updated|Closed|All"}},
     "EquipmentPlant",
     ""},
    {"GetModelsForMake",
     Path::kArg,
     kText,
     "make",
     {},
     "ModelsForMake",
     "Make_ID,Make_Name,Model_ID,Model_Name"},
    {"GetModelsForMakeId",
     Path::kArg,
     ArgKind::kId,
     "make id",
     {},
     "ModelsForMake",
     "Make_ID,Make_Name,Model_ID,Model_Name"},
    // Segments: the first is required, then at least one of the others.
    {"GetModelsForMakeYear",
     Path::kSegments,
     kText,
     "",
     {{"make", kText, true},
      {"modelyear", ArgKind::kYear},
      {"vehicletype", kText}},
     "MakeModels",
     "Make_ID,Make_Name,Model_ID,Model_Name,VehicleTypeId,VehicleTypeName"},
    {"GetModelsForMakeIdYear",
     Path::kSegments,
     kText,
     "",
     {{"makeId", ArgKind::kId, true},
      {"modelyear", ArgKind::kYear},
      {"vehicletype", kText}},
     "MakeModels",
     "Make_ID,Make_Name,Model_ID,Model_Name,VehicleTypeId,VehicleTypeName"},
    {"GetVehicleVariableList",
     Path::kNone,
     kText,
     "",
     {},
     "VehicleVariable",
     ""},
    {"GetVehicleVariableValuesList",
     Path::kArg,
     kText,
     "variable",
     {},
     "VehicleVariableValue",
     ""},
    {"GetCanadianVehicleSpecifications",
     Path::kNone,
     kText,
     "",
     {{"Year", ArgKind::kYear, true},
      {"Make", kText},
      {"Model", kText},
      {"units", ArgKind::kChoice, false, "Metric|US"}},
     "CanadianVehicleSpecification",
     "",
     "",
     true},
};

constexpr size_t kMaxText = 100;

std::string Shown(absl::string_view value) { return util::SafeText(value, 64); }

absl::Status Bad(absl::string_view name, absl::string_view what,
                 absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("parameter \"", name, "\" must be ", what, ", got \"",
                   Shown(value), "\""));
}

bool InRange(absl::string_view text, int64_t lo, int64_t hi, int64_t* n) {
  if (text.empty() || text.size() > 12) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, n) && *n >= lo && *n <= hi;
}

// `value` (percent-decoded, as written) checked as `kind`, normalised into
// `out`.
absl::Status CheckArg(absl::string_view name, ArgKind kind,
                      absl::string_view choices, absl::string_view value,
                      std::string* out) {
  const absl::string_view v = absl::StripAsciiWhitespace(value);
  int64_t n = 0;
  switch (kind) {
    case ArgKind::kText:
      if (v.size() > kMaxText || !util::IsValidUtf8(v) ||
          std::any_of(v.begin(), v.end(), [](char c) {
            return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
          })) {
        return Bad(name,
                   absl::StrCat("text of at most ", kMaxText,
                                " bytes without control characters"),
                   value);
      }
      *out = absl::AsciiStrToLower(v);
      return absl::OkStatus();
    case ArgKind::kId:
      if (!InRange(v, 1, INT32_MAX, &n))
        return Bad(name, "a positive id", value);
      *out = absl::StrCat(n);
      return absl::OkStatus();
    case ArgKind::kYear:
      if (!InRange(v, 1900, 2100, &n)) {
        return Bad(name, "a year from 1900 to 2100", value);
      }
      *out = absl::StrCat(n);
      return absl::OkStatus();
    case ArgKind::kPage:
      if (!InRange(v, 1, 100000, &n)) {
        return Bad(name, "a page number from 1 to 100000", value);
      }
      *out = absl::StrCat(n);
      return absl::OkStatus();
    case ArgKind::kDate: {
      // A date escaped twice ("1%252F1%252F2015", as a published client
      // sends it) is read as the date.
      std::string date(v);
      if (v.size() <= 30 && absl::StrContains(v, '%') &&
          !PercentDecode(v, false, &date)) {
        date.clear();
      }
      if (date.size() < 6 || date.size() > 10 ||
          date.find_first_not_of("0123456789/-") != std::string::npos) {
        return Bad(name, "a date (M/D/YYYY or YYYY-MM-DD)", value);
      }
      *out = std::move(date);
      return absl::OkStatus();
    }
    case ArgKind::kWmi:
      if ((v.size() != 3 && v.size() != 6) ||
          !std::all_of(v.begin(), v.end(), [](char c) {
            return absl::ascii_isalnum(static_cast<unsigned char>(c));
          })) {
        return Bad(name, "a WMI of 3 or 6 letters and digits", value);
      }
      *out = absl::AsciiStrToUpper(v);
      return absl::OkStatus();
    case ArgKind::kChoice:
      for (absl::string_view c : absl::StrSplit(choices, '|')) {
        if (absl::EqualsIgnoreCase(c, v)) {
          *out = std::string(c);
          return absl::OkStatus();
        }
      }
      return Bad(
          name,
          absl::StrCat("one of ", absl::StrReplaceAll(choices, {{"|", ", "}})),
          value);
  }
  return absl::OkStatus();
}

// Percent-encodes all but RFC 3986's unreserved characters.
std::string Encoded(absl::string_view v) {
  std::string out;
  for (char c : v) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", u);
    }
  }
  return out;
}

size_t ParamCount(const VpicEndpoint& e) {
  size_t n = 0;
  while (n < 5 && !e.params[n].name.empty()) ++n;
  return n;
}

// GetModelsForMake[Id]Year's path: name/value pairs, names in any case.
absl::Status ParseSegments(const VpicEndpoint& e, absl::string_view rest,
                           std::string* key) {
  std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  if (!parts.empty() && parts.back().empty()) parts.pop_back();
  const size_t n = ParamCount(e);
  std::vector<std::string> values(n);
  std::vector<bool> seen(n, false);
  if (parts.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(e.name, "'s path is name/value pairs (", e.params[0].name,
                     "/{value}/modelyear/{year}/vehicletype/{type})"));
  }
  for (size_t i = 0; i < parts.size(); i += 2) {
    size_t k = 0;
    while (k < n && !absl::EqualsIgnoreCase(parts[i], e.params[k].name)) ++k;
    if (k == n) {
      return absl::InvalidArgumentError(absl::StrCat(
          e.name, "'s path has no segment \"", Shown(parts[i]), "\""));
    }
    std::string decoded;
    if (!PercentDecode(parts[i + 1], false, &decoded)) {
      return absl::InvalidArgumentError("the path has a bad percent-escape");
    }
    if (absl::Status s = CheckArg(e.params[k].name, e.params[k].kind, "",
                                  decoded, &values[k]);
        !s.ok()) {
      return s;
    }
    seen[k] = !values[k].empty();
  }
  if (!seen[0] || !(seen[1] || seen[2])) {
    return absl::InvalidArgumentError(absl::StrCat(
        e.name, " needs ", e.params[0].name, " and at least one of ",
        e.params[1].name, " and ", e.params[2].name));
  }
  for (size_t k = 0; k < n; ++k) {
    if (seen[k])
      absl::StrAppend(key, "/", e.params[k].name, "/", Encoded(values[k]));
  }
  return absl::OkStatus();
}

// The query's parameters of `e`, in the table's order.
absl::Status ParseQuery(const VpicEndpoint& e, absl::string_view target,
                        bool have_path_arg, std::string* key) {
  std::vector<std::string> pairs;
  bool or_param_given = false;
  for (size_t k = 0; k < ParamCount(e); ++k) {
    const ParamSpec& p = e.params[k];
    std::string raw, value;
    const bool given = QueryParam(target, p.name, &raw);
    if (given && !(e.all_keys && absl::StripAsciiWhitespace(raw).empty() &&
                   !p.required)) {
      if (absl::Status s = CheckArg(p.name, p.kind, p.choices, raw, &value);
          !s.ok()) {
        return s;
      }
    }
    if ((p.required || e.all_keys) && !given) {
      return absl::InvalidArgumentError(
          absl::StrCat(e.name, " needs the parameter \"", p.name, "\""));
    }
    if (!value.empty() || (e.all_keys && given)) {
      pairs.push_back(absl::StrCat(p.name, "=", Encoded(value)));
      or_param_given |= p.name == e.or_param && !value.empty();
    }
  }
  if (!e.or_param.empty() && !have_path_arg && !or_param_given) {
    return absl::InvalidArgumentError(
        absl::StrCat(e.name, " needs a ", e.path_name,
                     " in the path or the parameter \"", e.or_param, "\""));
  }
  if (!pairs.empty()) absl::StrAppend(key, "?", absl::StrJoin(pairs, "&"));
  return absl::OkStatus();
}

}  // namespace

const VpicEndpoint* FindVpicEndpoint(absl::string_view op) {
  for (const VpicEndpoint& e : kEndpoints) {
    if (absl::EqualsIgnoreCase(e.name, op)) return &e;
  }
  return nullptr;
}

std::string VpicEndpointNames() {
  std::vector<absl::string_view> names;
  for (const VpicEndpoint& e : kEndpoints) names.push_back(e.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<ReferenceRequest> ParseReference(const VpicEndpoint& e,
                                                absl::string_view rest,
                                                absl::string_view target) {
  ReferenceRequest r;
  r.endpoint = &e;
  r.key = std::string(e.name);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  bool have_path_arg = false;
  switch (e.path) {
    case Path::kNone:
      if (!rest.empty()) {
        return absl::NotFoundError(
            absl::StrCat(e.name, " takes no path argument"));
      }
      break;
    case Path::kArg:
    case Path::kOptArg: {
      if (absl::StrContains(rest, '/')) {
        return absl::NotFoundError(absl::StrCat(
            e.name, " takes one path argument: its ", e.path_name));
      }
      std::string decoded, value;
      if (!PercentDecode(rest, false, &decoded)) {
        return absl::InvalidArgumentError("the path has a bad percent-escape");
      }
      if (!absl::StripAsciiWhitespace(decoded).empty()) {
        if (absl::Status s =
                CheckArg(e.path_name, e.path_kind, "", decoded, &value);
            !s.ok()) {
          return s;
        }
        absl::StrAppend(&r.key, "/", Encoded(value));
        have_path_arg = true;
      } else if (e.path == Path::kArg) {
        return absl::InvalidArgumentError(
            absl::StrCat(e.name, " needs its ", e.path_name, " in the path (",
                         e.name, "/{", e.path_name, "})"));
      }
      break;
    }
    case Path::kSegments:
      if (absl::Status s = ParseSegments(e, rest, &r.key); !s.ok()) return s;
      return r;  // (no query parameters)
  }
  if (absl::Status s = ParseQuery(e, target, have_path_arg, &r.key); !s.ok()) {
    return s;
  }
  return r;
}

}  // namespace http
}  // namespace server
