#include "server/http/routes.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace server {
namespace http {
namespace {

constexpr absl::string_view kVpicPrefix = "/api/vehicles/";

Route Error(int status, std::string message) {
  Route r;
  r.kind = Route::Kind::kError;
  r.status = status;
  r.message = std::move(message);
  return r;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// vPIC's formats: json is served; xml and csv are not (yet), and say so.
absl::Status CheckFormat(absl::string_view target) {
  std::string format;
  if (!QueryParam(target, "format", &format)) return absl::OkStatus();
  if (absl::EqualsIgnoreCase(format, "json")) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "format \"", format,
      "\" is not served: this service answers vPIC's paths with format=json "
      "only"));
}

absl::Status ParseModelYear(absl::string_view text, int* year) {
  if (text.empty()) return absl::OkStatus();
  if (!absl::SimpleAtoi(text, year) || *year < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("modelyear \"", text, "\" is not a year"));
  }
  return absl::OkStatus();
}

}  // namespace

bool PercentDecode(absl::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexValue(in[i + 1]);
      const int lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool QueryParam(absl::string_view target, absl::string_view name,
                std::string* value) {
  const size_t q = target.find('?');
  if (q == absl::string_view::npos) return false;
  for (absl::string_view pair :
       absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    std::string key;
    if (!PercentDecode(kv.first, true, &key)) continue;
    if (!absl::EqualsIgnoreCase(key, name)) continue;
    if (!PercentDecode(kv.second, true, value)) value->clear();
    return true;
  }
  return false;
}

Route MetricsRouteOf(absl::string_view method, absl::string_view target) {
  if (target.substr(0, target.find('?')) != "/metrics") {
    return Error(404, "this port serves GET /metrics only");
  }
  if (method != "GET" && method != "HEAD") {
    return Error(405, "/metrics takes GET");
  }
  Route r;
  r.kind = Route::Kind::kMetrics;
  r.status = 200;
  return r;
}

Route RouteOf(absl::string_view method, absl::string_view target) {
  if (target.empty() || target[0] != '/') {
    return Error(400, "the request target must be a path");
  }
  const absl::string_view path = target.substr(0, target.find('?'));
  // Tricks that would reach another path than the one written: dot
  // segments, encoded slashes or dots, backslashes, NUL.
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::StrContains(lower, "/.") || absl::StrContains(lower, "%2f") ||
      absl::StrContains(lower, "%5c") || absl::StrContains(lower, "%2e") ||
      absl::StrContains(lower, "%00") || absl::StrContains(path, '\\')) {
    return Error(400, "the path holds a dot segment or an encoded slash, dot "
                      "or backslash, which this service does not follow");
  }
  std::string rest_lower(lower);
  if (rest_lower.size() > 1 && rest_lower.back() == '/') rest_lower.pop_back();

  if (rest_lower == "/" || rest_lower == "/index.html" ||
      rest_lower == "/openapi.json") {
    if (method != "GET" && method != "HEAD") {
      return Error(405, absl::StrCat(path, " takes GET"));
    }
    Route r;
    r.kind = rest_lower == "/openapi.json" ? Route::Kind::kOpenApi
                                           : Route::Kind::kPage;
    r.status = 200;
    return r;
  }
  if (rest_lower == "/v1/decode" || rest_lower == "/v1/decode:batch") {
    if (method != "POST") {
      return Error(405, absl::StrCat(path, " takes POST"));
    }
    Route r;
    r.kind = rest_lower == "/v1/decode" ? Route::Kind::kDecode
                                        : Route::Kind::kDecodeBatch;
    r.status = 200;
    r.needs_body = true;
    return r;
  }
  if (!absl::StartsWith(rest_lower, kVpicPrefix)) {
    return Error(404, absl::StrCat("no such path: ", path));
  }
  const absl::string_view lower_rest =
      absl::string_view(rest_lower).substr(kVpicPrefix.size());
  const absl::string_view raw_rest = path.substr(kVpicPrefix.size());

  if (lower_rest == "decodevinvaluesbatch") {
    if (method != "POST") {
      return Error(405, "DecodeVINValuesBatch takes POST with a form body "
                        "(format=json&data=VIN[,YEAR];...)");
    }
    if (absl::Status f = CheckFormat(target); !f.ok()) {
      return Error(400, std::string(f.message()));
    }
    Route r;
    r.kind = Route::Kind::kVpicBatch;
    r.status = 200;
    r.needs_body = true;
    return r;
  }
  const size_t slash = lower_rest.find('/');
  if (slash == absl::string_view::npos) {
    return Error(404, absl::StrCat("no such path: ", path));
  }
  const absl::string_view op = lower_rest.substr(0, slash);
  Route r;
  if (op == "decodevinvalues" || op == "decodevinvaluesextended") {
    r.kind = Route::Kind::kVpicValues;
  } else if (op == "decodevin") {
    r.kind = Route::Kind::kVpicVariables;
  } else {
    return Error(404, absl::StrCat(
                          "vPIC's ", raw_rest.substr(0, slash),
                          " is not served: this service answers "
                          "DecodeVinValues, DecodeVinValuesExtended, DecodeVin "
                          "and DecodeVINValuesBatch"));
  }
  if (method != "GET" && method != "HEAD") {
    return Error(405, absl::StrCat(raw_rest.substr(0, slash), " takes GET"));
  }
  absl::string_view vin = raw_rest.substr(slash + 1);
  if (!vin.empty() && vin.back() == '/') vin.remove_suffix(1);
  if (vin.empty() || absl::StrContains(vin, '/')) {
    return Error(404, absl::StrCat("no such path: ", path));
  }
  if (!PercentDecode(vin, false, &r.vin)) {
    return Error(400, "the VIN in the path has a bad percent-escape");
  }
  if (absl::StrContains(r.vin, '*')) {
    return Error(400, absl::StrCat(
                          "\"", r.vin.size() > 64 ? r.vin.substr(0, 64) : r.vin,
                          "\" is a partial VIN (with *): this service decodes "
                          "whole 17-character VINs only"));
  }
  if (absl::Status f = CheckFormat(target); !f.ok()) {
    return Error(400, std::string(f.message()));
  }
  std::string year;
  if (QueryParam(target, "modelyear", &year)) {
    if (absl::Status y = ParseModelYear(year, &r.model_year); !y.ok()) {
      return Error(400, std::string(y.message()));
    }
  }
  r.status = 200;
  return r;
}

absl::StatusOr<std::vector<BatchEntry>> ParseBatchForm(absl::string_view body,
                                                       absl::string_view target,
                                                       size_t max) {
  std::string data;
  bool have_data = false;
  for (absl::string_view pair : absl::StrSplit(body, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    std::string key, value;
    if (!PercentDecode(kv.first, true, &key) ||
        !PercentDecode(kv.second, true, &value)) {
      return absl::InvalidArgumentError(
          "the form body has a bad percent-escape");
    }
    key = std::string(absl::StripAsciiWhitespace(key));
    if (absl::EqualsIgnoreCase(key, "data")) {
      data = std::move(value);
      have_data = true;
    } else if (absl::EqualsIgnoreCase(key, "format") &&
               !absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(value),
                                       "json")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "format \"", value,
          "\" is not served: this service answers with format=json only"));
    }
  }
  (void)target;  // the query's format was checked by RouteOf
  if (!have_data) {
    return absl::InvalidArgumentError(
        "the form has no data field (data=VIN[,YEAR];VIN[,YEAR]...)");
  }
  std::vector<BatchEntry> entries;
  for (absl::string_view item : absl::StrSplit(data, ';', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> vy =
        absl::StrSplit(item, absl::MaxSplits(',', 1));
    BatchEntry e;
    e.vin = std::string(absl::StripAsciiWhitespace(vy.first));
    const absl::string_view year = absl::StripAsciiWhitespace(vy.second);
    if (absl::Status y = ParseModelYear(year, &e.model_year); !y.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("item ", entries.size() + 1, ": ", y.message()));
    }
    entries.push_back(std::move(e));
    if (entries.size() > max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "more than ", max, " VINs in one batch (vPIC's limit)"));
    }
  }
  if (entries.empty()) {
    return absl::InvalidArgumentError("the form's data field holds no VIN");
  }
  return entries;
}

}  // namespace http
}  // namespace server
