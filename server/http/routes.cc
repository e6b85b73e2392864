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

constexpr char kAllowGet[] = "GET, HEAD";
constexpr char kAllowPost[] = "POST";

// 405 with the methods the path takes (the answer's Allow header).
Route MethodNotAllowed(std::string message, const char* allow) {
  Route r = Error(405, std::move(message));
  r.allow = allow;
  return r;
}

// vPIC's `format` of the query (XML when none).
absl::StatusOr<VpicFormat> FormatOf(absl::string_view target) {
  std::string format;
  const bool given = QueryParam(target, "format", &format);
  return ParseVpicFormat(format, given);
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

const char* RouteLabel(Route::Kind kind) {
  switch (kind) {
    case Route::Kind::kVpicValues:
      return "vpic_values";
    case Route::Kind::kVpicVariables:
      return "vpic_variables";
    case Route::Kind::kVpicBatch:
      return "vpic_batch";
    case Route::Kind::kVpicReference:
      return "vpic_reference";
    case Route::Kind::kDecode:
      return "decode";
    case Route::Kind::kDecodeBatch:
      return "decode_batch";
    case Route::Kind::kPage:
      return "page";
    case Route::Kind::kOpenApi:
      return "openapi";
    case Route::Kind::kMetrics:
      return "metrics";
    case Route::Kind::kJobCreate:
      return "job_create";
    case Route::Kind::kJobList:
      return "job_list";
    case Route::Kind::kJobGet:
      return "job_get";
    case Route::Kind::kJobDelete:
      return "job_delete";
    case Route::Kind::kJobResults:
      return "job_results";
    case Route::Kind::kJobCancel:
      return "job_cancel";
    case Route::Kind::kParity:
      return "parity";
    case Route::Kind::kError:
      break;
  }
  return "none";
}

Route MetricsRouteOf(absl::string_view method, absl::string_view target) {
  if (target.substr(0, target.find('?')) != "/metrics") {
    return Error(404, "this port serves GET /metrics only");
  }
  if (method != "GET" && method != "HEAD") {
    return MethodNotAllowed("/metrics takes GET", kAllowGet);
  }
  Route r;
  r.kind = Route::Kind::kMetrics;
  r.status = 200;
  return r;
}

namespace {

// Where a route's path is.
enum class Shape {
  kExact,    // the whole path (lower case, without a trailing slash)
  kVpicVin,  // /api/vehicles/{op}/{vin}: `path` is the op, lower case
  kVpicOp,   // /api/vehicles/{op}: `path` is the op, lower case
};

// One route of the gateway: adding an endpoint is one entry here (and
// its exchange (exchange.h)).
struct RouteSpec {
  Route::Kind kind;
  Shape shape;
  absl::string_view path;
  bool post;                // POST, else GET (and HEAD)
  absl::string_view usage;  // the 405's message after the name
};

constexpr RouteSpec kRoutes[] = {
    {Route::Kind::kPage, Shape::kExact, "/", false, "takes GET"},
    {Route::Kind::kPage, Shape::kExact, "/index.html", false, "takes GET"},
    {Route::Kind::kOpenApi, Shape::kExact, "/openapi.json", false, "takes GET"},
    {Route::Kind::kDecode, Shape::kExact, "/v1/decode", true, "takes POST"},
    {Route::Kind::kDecodeBatch, Shape::kExact, "/v1/decode:batch", true,
     "takes POST"},
    {Route::Kind::kVpicBatch, Shape::kVpicOp, "decodevinvaluesbatch", true,
     "takes POST with a form body (format=json&data=VIN[,YEAR];...)"},
    {Route::Kind::kVpicValues, Shape::kVpicVin, "decodevinvalues", false,
     "takes GET"},
    {Route::Kind::kVpicValues, Shape::kVpicVin, "decodevinvaluesextended",
     false, "takes GET"},
    {Route::Kind::kVpicVariables, Shape::kVpicVin, "decodevin", false,
     "takes GET"},
    {Route::Kind::kVpicVariables, Shape::kVpicVin, "decodevinextended", false,
     "takes GET"},
};

// The path with its trick checks done: dot segments, encoded slashes or
// dots, backslashes and NUL would reach another path than the one written.
absl::Status CheckPath(absl::string_view target, absl::string_view path,
                       const std::string& lower) {
  if (target.empty() || target[0] != '/') {
    return absl::InvalidArgumentError("the request target must be a path");
  }
  if (absl::StrContains(lower, "/.") || absl::StrContains(lower, "%2f") ||
      absl::StrContains(lower, "%5c") || absl::StrContains(lower, "%2e") ||
      absl::StrContains(lower, "%00") || absl::StrContains(path, '\\')) {
    return absl::InvalidArgumentError(
        "the path holds a dot segment or an encoded slash, dot or backslash, "
        "which this service does not follow");
  }
  return absl::OkStatus();
}

// The VIN of a {op}/{vin} path (`raw_vin`, as written) and the query's
// model year.
Route VpicVinRoute(Route r, absl::string_view raw_vin, absl::string_view path,
                   absl::string_view target) {
  if (!raw_vin.empty() && raw_vin.back() == '/') raw_vin.remove_suffix(1);
  if (raw_vin.empty() || absl::StrContains(raw_vin, '/')) {
    return Error(404, absl::StrCat("no such path: ", path));
  }
  if (!PercentDecode(raw_vin, false, &r.vin)) {
    return Error(400, "the VIN in the path has a bad percent-escape");
  }
  std::string year;
  if (QueryParam(target, "modelyear", &year)) {
    if (absl::Status y = ParseModelYear(year, &r.model_year); !y.ok()) {
      return Error(400, std::string(y.message()));
    }
  }
  return r;
}

// A GET of one of vPIC's reference endpoints (`rest`: what follows its
// name in the path, as written).
Route VpicReferenceRoute(const VpicEndpoint& e, absl::string_view method,
                         absl::string_view rest, absl::string_view target) {
  if (method != "GET" && method != "HEAD") {
    return MethodNotAllowed(absl::StrCat(e.name, " takes GET"), kAllowGet);
  }
  absl::StatusOr<VpicFormat> f = FormatOf(target);
  if (!f.ok()) return Error(400, std::string(f.status().message()));
  absl::StatusOr<ReferenceRequest> req = ParseReference(e, rest, target);
  if (!req.ok()) {
    return Error(absl::IsNotFound(req.status()) ? 404 : 400,
                 std::string(req.status().message()));
  }
  Route r;
  r.kind = Route::Kind::kVpicReference;
  r.status = 200;
  r.format = *f;
  r.endpoint = req->endpoint;
  r.reference = std::move(req->key);
  return r;
}

constexpr absl::string_view kJobsPath = "/v1/jobs";

Route JobRouteOf(Route::Kind kind, std::string id) {
  Route r;
  r.kind = kind;
  r.status = 200;
  r.job_id = std::move(id);
  r.needs_body = kind == Route::Kind::kJobCreate;
  return r;
}

// /v1/jobs and what is under it (`rest`: the path in lower case, without a
// trailing slash).
Route JobsRoute(absl::string_view method, absl::string_view rest) {
  const bool get = method == "GET" || method == "HEAD";
  if (rest == kJobsPath) {
    if (get) return JobRouteOf(Route::Kind::kJobList, "");
    if (method == "POST") return JobRouteOf(Route::Kind::kJobCreate, "");
    return MethodNotAllowed(
        "/v1/jobs takes GET (the list) and POST (a new "
        "job)",
        "GET, HEAD, POST");
  }
  absl::string_view tail = rest.substr(kJobsPath.size() + 1);
  if (absl::ConsumeSuffix(&tail, "/results")) {
    if (!get) {
      return MethodNotAllowed("/v1/jobs/{job_id}/results takes GET", kAllowGet);
    }
    return JobRouteOf(Route::Kind::kJobResults, std::string(tail));
  }
  if (absl::ConsumeSuffix(&tail, ":cancel")) {
    if (method != "POST") {
      return MethodNotAllowed("/v1/jobs/{job_id}:cancel takes POST",
                              kAllowPost);
    }
    return JobRouteOf(Route::Kind::kJobCancel, std::string(tail));
  }
  if (tail.empty() || absl::StrContains(tail, '/') ||
      absl::StrContains(tail, ':')) {
    return Error(404, absl::StrCat("no such path: ", rest));
  }
  if (get) return JobRouteOf(Route::Kind::kJobGet, std::string(tail));
  if (method == "DELETE") {
    return JobRouteOf(Route::Kind::kJobDelete, std::string(tail));
  }
  return MethodNotAllowed("/v1/jobs/{job_id} takes GET and DELETE",
                          "GET, HEAD, DELETE");
}

}  // namespace

Route RouteOf(absl::string_view method, absl::string_view target) {
  const absl::string_view path = target.substr(0, target.find('?'));
  const std::string lower = absl::AsciiStrToLower(path);
  if (absl::Status p = CheckPath(target, path, lower); !p.ok()) {
    return Error(400, std::string(p.message()));
  }
  absl::string_view rest(lower);
  if (rest.size() > 1 && rest.back() == '/') rest.remove_suffix(1);
  if (rest == kJobsPath ||
      absl::StartsWith(rest, absl::StrCat(kJobsPath, "/"))) {
    return JobsRoute(method, rest);
  }
  if (rest == "/v1/parity") {
    if (method != "GET" && method != "HEAD") {
      return MethodNotAllowed("/v1/parity takes GET", "GET, HEAD");
    }
    Route r;
    r.kind = Route::Kind::kParity;
    r.status = 200;
    return r;
  }
  // vPIC's paths: the op, and what follows it as written.
  const bool vpic = absl::StartsWith(rest, kVpicPrefix);
  absl::string_view op, raw_vin;
  if (vpic) {
    op = rest.substr(kVpicPrefix.size());
    const size_t slash = op.find('/');
    if (slash != absl::string_view::npos) {
      raw_vin = path.substr(kVpicPrefix.size() + slash + 1);
      op = op.substr(0, slash);
    }
  }
  if (vpic) {
    if (const VpicEndpoint* e = FindVpicEndpoint(op)) {
      return VpicReferenceRoute(*e, method, raw_vin, target);
    }
  }
  bool known_op = false;  // a vPIC op served, in another path form
  for (const RouteSpec& spec : kRoutes) {
    known_op |= spec.shape != Shape::kExact && op == spec.path;
    const bool matches =
        spec.shape == Shape::kExact
            ? !vpic && rest == spec.path
            : vpic && op == spec.path &&
                  (spec.shape == Shape::kVpicVin) == !raw_vin.empty();
    if (!matches) continue;
    const absl::string_view name =
        vpic ? path.substr(kVpicPrefix.size(), op.size()) : path;
    if (spec.post ? method != "POST" : method != "GET" && method != "HEAD") {
      return MethodNotAllowed(absl::StrCat(name, " ", spec.usage),
                              spec.post ? kAllowPost : kAllowGet);
    }
    Route r;
    // vPIC's paths take its format from the query; its batch form from the
    // form alone (vPIC ignores the query's: VpicDecode reads the form's).
    if (spec.shape != Shape::kExact && !spec.post) {
      absl::StatusOr<VpicFormat> f = FormatOf(target);
      if (!f.ok()) return Error(400, std::string(f.status().message()));
      r.format = *f;
    }
    r.kind = spec.kind;
    r.status = 200;
    r.needs_body = spec.post;
    if (spec.shape == Shape::kVpicVin) {
      return VpicVinRoute(std::move(r), raw_vin, path, target);
    }
    return r;
  }
  if (vpic && !op.empty() && !known_op) {
    return Error(
        404,
        absl::StrCat("vPIC has no endpoint ",
                     path.substr(kVpicPrefix.size(), op.size()),
                     " that this service serves: it answers "
                     "DecodeVinValues, DecodeVinValuesExtended, DecodeVin, "
                     "DecodeVinExtended, DecodeVINValuesBatch, ",
                     VpicEndpointNames()));
  }
  return Error(404, absl::StrCat("no such path: ", path));
}

absl::StatusOr<BatchForm> ParseBatchForm(absl::string_view body, size_t max) {
  BatchForm form;
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
    } else if (absl::EqualsIgnoreCase(key, "format")) {
      absl::StatusOr<VpicFormat> f = ParseVpicFormat(value, true);
      if (!f.ok()) return f.status();
      form.has_format = true;
      form.format = *f;
    }
  }
  if (!have_data) {
    return absl::InvalidArgumentError(
        "the form has no data field (data=VIN[,YEAR];VIN[,YEAR]...)");
  }
  std::vector<BatchEntry>& entries = form.entries;
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
  return form;
}

}  // namespace http
}  // namespace server
