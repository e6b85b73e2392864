#include "fake_vpic/answers.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fakevpic {
namespace {

using Json = nlohmann::ordered_json;

constexpr absl::string_view kDefaultMessage =
    "Results returned successfully. NOTE: Any missing decoded values should "
    "be interpreted as NHTSA does not have data on the specific variable. "
    "Missing value should NOT be interpreted as an indication that a feature "
    "or technology is unavailable for a vehicle.";

// Used when no DecodeVinValues fixture is loaded.
constexpr const char* kBuiltinVariables[] = {
    "BodyClass",    "DisplacementL", "DriveType", "EngineCylinders",
    "EngineModel",  "ErrorCode",     "ErrorText", "FuelTypePrimary",
    "Make",         "Manufacturer",  "Model",     "ModelYear",
    "PlantCountry", "Series",        "Trim",      "VIN",
    "VehicleType",
};

struct WmiMake {
  const char* prefix;
  const char* make;
};
constexpr WmiMake kWmiMakes[] = {
    {"1FT", "FORD"},
    {"1FM", "FORD"},
    {"1FA", "FORD"},
    {"1HG", "HONDA"},
    {"1G4", "BUICK"},
    {"1G1", "CHEVROLET"},
    {"5YJ", "TESLA"},
    {"WVG", "VOLKSWAGEN"},
    {"WVW", "VOLKSWAGEN"},
    {"JTD", "TOYOTA"},
    {"1M8", "MOTOR COACH INDUSTRIES"},
};

// Year codes of VIN position 10 for 2010-2030 (no I, O, Q, U, Z).
constexpr absl::string_view kLetterYears = "ABCDEFGHJKLMNPRSTVWXY";

// A JSON string literal; invalid UTF-8 (a VIN is whatever a client sent) is
// replaced rather than thrown on.
std::string Quote(absl::string_view s) {
  return Json(std::string(s))
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string MakeFor(absl::string_view vin) {
  for (const WmiMake& w : kWmiMakes) {
    if (absl::StartsWith(vin, w.prefix)) return w.make;
  }
  return "GENERIC";
}

// The model year VIN position 10 stands for, "" when it is not a year code.
std::string YearFor(absl::string_view vin) {
  if (vin.size() < 10) return "";
  const char c = vin[9];
  if (c >= '1' && c <= '9') return absl::StrCat(2000 + (c - '0'));
  const size_t i = kLetterYears.find(c);
  if (i == absl::string_view::npos) return "";
  return absl::StrCat(2010 + static_cast<int>(i));
}

std::string PercentDecode(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() &&
        std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(
          std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

absl::StatusOr<Json> ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  Json json = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.string(), " is not valid JSON"));
  }
  return json;
}

}  // namespace

std::optional<DecodeTarget> ParseDecodeTarget(absl::string_view target) {
  constexpr absl::string_view kMarker = "/decodevinvalues/";
  const std::string lower = absl::AsciiStrToLower(target);
  const size_t at = lower.find(std::string(kMarker));
  if (at == std::string::npos) return std::nullopt;
  absl::string_view rest = target.substr(at + kMarker.size());
  absl::string_view query;
  const size_t q = rest.find('?');
  if (q != absl::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.empty() || absl::StrContains(rest, '/')) return std::nullopt;
  DecodeTarget out;
  out.vin = PercentDecode(rest);
  for (absl::string_view param : absl::StrSplit(query, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(param, absl::MaxSplits('=', 1));
    if (absl::EqualsIgnoreCase(kv.first, "modelyear")) {
      int year = 0;
      out.model_year =
          absl::SimpleAtoi(kv.second, &year) && year > 0 ? year : 0;
    }
  }
  return out;
}

bool IsBatchTarget(absl::string_view target) {
  const std::string lower =
      absl::AsciiStrToLower(target.substr(0, target.find('?')));
  absl::string_view path = lower;
  absl::ConsumeSuffix(&path, "/");
  return absl::EndsWith(path, "/decodevinvaluesbatch");
}

std::optional<std::vector<DecodeTarget>> ParseBatchForm(absl::string_view body) {
  for (absl::string_view field : absl::StrSplit(body, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(field, absl::MaxSplits('=', 1));
    if (!absl::EqualsIgnoreCase(kv.first, "data")) continue;
    std::string data(kv.second);
    std::replace(data.begin(), data.end(), '+', ' ');
    data = PercentDecode(data);
    std::vector<DecodeTarget> out;
    for (absl::string_view entry : absl::StrSplit(data, ';')) {
      entry = absl::StripAsciiWhitespace(entry);
      if (entry.empty()) continue;
      std::pair<absl::string_view, absl::string_view> vin_year =
          absl::StrSplit(entry, absl::MaxSplits(',', 1));
      DecodeTarget t;
      t.vin = std::string(absl::StripAsciiWhitespace(vin_year.first));
      int year = 0;
      t.model_year = absl::SimpleAtoi(vin_year.second, &year) && year > 0
                         ? year
                         : 0;
      out.push_back(std::move(t));
    }
    return out;
  }
  return std::nullopt;
}

absl::Status Answers::LoadReferences(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    absl::StatusOr<Json> json = ReadJsonFile(entry.path());
    if (!json.ok()) return json.status();
    references_[absl::AsciiStrToLower(entry.path().stem().string())] =
        json->dump();
  }
  // (No json/ directory: no reference answers.)
  return absl::OkStatus();
}

std::optional<std::string> Answers::Reference(absl::string_view target,
                                              std::string* endpoint) const {
  const std::string lower = absl::AsciiStrToLower(target);
  const size_t at = lower.find("/vehicles/");
  if (at == std::string::npos) return std::nullopt;
  absl::string_view op = absl::string_view(lower).substr(at + 10);
  op = op.substr(0, op.find_first_of("/?"));
  auto it = references_.find(std::string(op));
  if (it == references_.end()) return std::nullopt;
  *endpoint = it->first;
  return it->second;
}

std::string Answers::EmptyReference() {
  return R"({"Count":0,"Message":"Response returned successfully",)"
         R"("SearchCriteria":null,"Results":[]})";
}

absl::StatusOr<Answers> Answers::Load(const std::string& fixtures_dir,
                                      bool fill_every_variable) {
  Answers answers;
  answers.message_ = std::string(kDefaultMessage);
  if (!fixtures_dir.empty()) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry :
         std::filesystem::directory_iterator(fixtures_dir, ec)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    if (ec) {
      return absl::NotFoundError(absl::StrCat(
          "cannot list fixtures dir ", fixtures_dir, ": ", ec.message()));
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      absl::StatusOr<Json> json = ReadJsonFile(file);
      if (!json.ok()) return json.status();
      const Json& url = (*json)["request"]["url"];
      const Json& body = (*json)["body"];
      if (!url.is_string() || (*json).value("status", 0) != 200 ||
          !body.is_object()) {
        continue;
      }
      if (absl::StrContains(absl::AsciiStrToLower(url.get<std::string>()),
                            "/decodewmi/")) {
        answers.references_["decodewmi"] = body.dump();
        continue;
      }
      std::optional<DecodeTarget> target =
          ParseDecodeTarget(url.get<std::string>());
      if (!target || target->vin.empty() || target->vin.size() > 17) continue;
      // A partial VIN's answer (decode-partial-vin.json) is served for
      // that VIN; its values fill no other answer.
      const bool partial = target->vin.size() != 17 ||
                           target->vin.find('*') != std::string::npos;
      const Json& results = body["Results"];
      if (fill_every_variable && !partial && results.is_array() &&
          !results.empty() && results[0].is_object()) {
        for (const auto& item : results[0].items()) {
          if (item.value().is_string() &&
              !item.value().get<std::string>().empty()) {
            answers.fillers_.emplace(item.key(), item.value().get<std::string>());
          }
        }
      }
      if (answers.variables_.empty() && results.is_array() &&
          !results.empty() && results[0].is_object()) {
        for (const auto& item : results[0].items()) {
          answers.variables_.push_back(item.key());
        }
        answers.count_ = body.value("Count", 0);
        answers.message_ = body.value("Message", answers.message_);
      }
      answers.fixtures_[{target->vin, target->model_year}] = body.dump();
    }
  }
  if (!fixtures_dir.empty()) {
    if (absl::Status s = answers.LoadReferences(fixtures_dir + "/json");
        !s.ok()) {
      return s;
    }
  }
  if (answers.variables_.empty()) {
    answers.variables_.assign(std::begin(kBuiltinVariables),
                              std::end(kBuiltinVariables));
    answers.count_ = static_cast<int>(answers.variables_.size());
  }
  for (const std::string& name : answers.variables_) {
    answers.quoted_keys_.push_back(absl::StrCat(Quote(name), ":"));
  }
  return answers;
}

std::string Answers::Normal(absl::string_view vin, int model_year) const {
  const std::string key(vin);
  auto it = fixtures_.find({key, model_year});
  if (it == fixtures_.end()) it = fixtures_.find({key, 0});
  if (it == fixtures_.end()) {
    it = fixtures_.lower_bound({key, 0});
    if (it != fixtures_.end() && it->first.first != key) it = fixtures_.end();
  }
  if (it != fixtures_.end()) return it->second;
  return Generated(vin, model_year);
}

std::string Answers::Generated(absl::string_view vin, int model_year) const {
  const std::string make = MakeFor(vin);
  std::string model = "MODEL-";
  if (vin.size() > 3) absl::StrAppend(&model, vin.substr(3, 5));
  std::map<std::string, std::string> values = {
                    {"VIN", std::string(vin)},
                    {"Make", make},
                    {"Model", model},
                    {"ModelYear",
                     model_year > 0 ? absl::StrCat(model_year) : YearFor(vin)},
                    {"Manufacturer", absl::StrCat(make, " TEST MANUFACTURER")},
                    {"VehicleType", "PASSENGER CAR "},
                    {"BodyClass", "Sedan/Saloon"},
                    {"EngineCylinders", "4"},
                    {"DisplacementL", "2.0"},
                    {"PlantCountry", "UNITED STATES (USA)"},
                    {"ErrorCode", "0"},
                    {"ErrorText",
                     "0 - VIN decoded clean. Check Digit (9th position) is "
                     "correct"},
                };
  values.insert(fillers_.begin(), fillers_.end());  // keeps those set above
  return Render(vin, values);
}

std::string Answers::Sparse(absl::string_view vin) const {
  return Render(vin,
                {
                    {"VIN", std::string(vin)},
                    {"ErrorCode", "8"},
                    {"ErrorText", "8 - No detailed data available currently"},
                });
}

std::string Answers::EmptyResults(absl::string_view vin) const {
  Json body = {{"Count", 0},
               {"Message", message_},
               {"SearchCriteria", absl::StrCat("VIN(s): ", vin)},
               {"Results", Json::array()}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Answers::Truncated(absl::string_view vin, int model_year) const {
  std::string body = Normal(vin, model_year);
  body.resize(body.size() / 2);
  return body;
}

namespace {

// The first result object of a DecodeVinValues body. Every body here is
// compact JSON ending in "Results":[{...}]} (Render's, and the fixtures'
// dump): the object is cut out without a parse, which batch answers of a
// benchmark would otherwise spend most of their time on.
std::string FirstResult(const std::string& body) {
  static const std::string kResults = "\"Results\":[";
  const size_t at = body.find(kResults);
  const size_t end = body.rfind("]}");
  if (at == std::string::npos || end == std::string::npos ||
      end < at + kResults.size()) {
    return "{}";
  }
  const size_t from = at + kResults.size();
  return body.substr(from, end - from);  // one result per such body
}

}  // namespace

std::string Answers::NormalResult(absl::string_view vin, int model_year) const {
  return FirstResult(Normal(vin, model_year));
}

std::string Answers::WithValue(const std::string& body,
                               const std::string& variable,
                               const std::string& value) {
  Json doc = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc["Results"].is_array() ||
      doc["Results"].empty()) {
    return body;
  }
  doc["Results"][0][variable] = value;
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Answers::ResultOf(const std::string& body) {
  return FirstResult(body);
}

std::string Answers::SparseResult(absl::string_view vin) const {
  return FirstResult(Sparse(vin));
}

std::string Answers::BatchBody(const std::vector<std::string>& results) const {
  // vPIC's batch answer: Count is the number of results.
  return absl::StrCat("{\"Count\":", results.size(),
                      ",\"Message\":", Quote(message_),
                      ",\"SearchCriteria\":null,\"Results\":[",
                      absl::StrJoin(results, ","), "]}");
}

std::string Answers::MaintenancePage() {
  return "<!DOCTYPE html>\n<html><head><title>Site Maintenance</title></head>"
         "<body><h1>vPIC is down for maintenance</h1><p>We are performing "
         "scheduled maintenance. Please try again later.</p></body></html>\n";
}

std::string Answers::Render(
    absl::string_view vin,
    const std::map<std::string, std::string>& values) const {
  // Built by hand (keys pre-quoted) because this runs for every generated
  // answer of a benchmark; the output equals nlohmann's compact dump.
  std::string out =
      absl::StrCat("{\"Count\":", count_, ",\"Message\":", Quote(message_),
                   ",\"SearchCriteria\":", Quote(absl::StrCat("VIN(s): ", vin)),
                   ",\"Results\":[{");
  out.reserve(out.size() + 24 * variables_.size());
  bool first = true;
  size_t used = 0;
  for (size_t i = 0; i < variables_.size(); ++i) {
    if (!first) out.push_back(',');
    first = false;
    out.append(quoted_keys_[i]);
    auto it = values.find(variables_[i]);
    if (it == values.end()) {
      out.append("\"\"");
    } else {
      out.append(Quote(it->second));
      ++used;
    }
  }
  if (used < values.size()) {
    for (const auto& [name, value] : values) {
      if (std::find(variables_.begin(), variables_.end(), name) !=
          variables_.end()) {
        continue;
      }
      absl::StrAppend(&out, first ? "" : ",", Quote(name), ":", Quote(value));
      first = false;
    }
  }
  out.append("}]}");
  return out;
}

}  // namespace fakevpic
