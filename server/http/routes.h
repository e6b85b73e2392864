// What an HTTP request asks of the gateway (DESIGN "The HTTP gateway"), decided
// from its method, raw target and body alone, before anything reaches the
// engine: vPIC's drop-in paths (matched case-insensitively, with or without a
// trailing slash, as vPIC's are) and our own JSON API. A request that cannot
// be served gets a 4xx naming the problem. Pure: no I/O.
#ifndef VIN_SERVER_HTTP_ROUTES_H_
#define VIN_SERVER_HTTP_ROUTES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/http/vpic_document.h"
#include "server/http/vpic_endpoints.h"
#include "util/escape.h"

namespace server {
namespace http {

struct Route {
  enum class Kind {
    kVpicValues,     // GET DecodeVinValues[Extended]/{vin}
    kVpicVariables,  // GET DecodeVin/{vin} (vPIC's Variable/Value list)
    kVpicBatch,      // POST DecodeVINValuesBatch/ (the form is in the body)
    kVpicReference,  // GET any other vPIC endpoint (vpic_endpoints.h)
    kDecode,         // POST /v1/decode
    kDecodeBatch,    // POST /v1/decode:batch
    kPage,           // GET / (the page for people)
    kOpenApi,        // GET /openapi.json
    kMetrics,        // GET /metrics (the metrics port's only route)
    // Bulk jobs (rule 20; api_jobs.h).
    kJobCreate,   // POST /v1/jobs
    kJobList,     // GET /v1/jobs
    kJobGet,      // GET /v1/jobs/{job_id}
    kJobDelete,   // DELETE /v1/jobs/{job_id}
    kJobResults,  // GET /v1/jobs/{job_id}/results
    kJobCancel,   // POST /v1/jobs/{job_id}:cancel
    kParity,      // GET /v1/parity (rule 21; operators only)
    kError,       // `status` and `message` say why
  };
  Kind kind = Kind::kError;
  int status = 404;
  std::string message;
  // vPIC's paths: the VIN as written (percent-decoded) and the query's
  // modelyear (0 when none).
  std::string vin;
  int model_year = 0;
  // kVpicReference: the endpoint, and the request's normalised key
  // (ReferenceRequest::key).
  const VpicEndpoint* endpoint = nullptr;
  std::string reference;
  // vPIC's GET paths: the format asked in the query (`format`, XML when
  // none). The batch form's is in its body (ParseBatchForm), as on vPIC.
  VpicFormat format = VpicFormat::kXml;
  bool needs_body = false;
  // The job routes' job id, as written (lower case).
  std::string job_id;
  // A 405's Allow header: the methods the path takes ("GET, HEAD").
  std::string allow;
  // The body's limit in bytes (the gateway's options by route, rule 19).
  size_t body_limit = 0;
};

// The route's label in vin_http_request_duration_seconds{route}: one of
// a fixed list ("decode", "vpic_values", ... "none" for a request that
// found no route).
const char* RouteLabel(Route::Kind kind);

// The route of `method` `target` (the raw request target, not decoded).
Route RouteOf(absl::string_view method, absl::string_view target);

// The metrics port's (GatewayOptions::metrics): GET or HEAD /metrics, with
// any query; 405 for another method, 404 for another path.
Route MetricsRouteOf(absl::string_view method, absl::string_view target);

// One VIN of a DecodeVINValuesBatch form.
struct BatchEntry {
  std::string vin;
  int model_year = 0;
};
// vPIC's batch form (`format=json&data=VIN[,YEAR];VIN[,YEAR]...`, the field
// names in any case, application/x-www-form-urlencoded): at most `max`
// VINs, and the form's format when it has one.
struct BatchForm {
  std::vector<BatchEntry> entries;
  bool has_format = false;
  VpicFormat format = VpicFormat::kXml;
};
absl::StatusOr<BatchForm> ParseBatchForm(absl::string_view body, size_t max);

// The value of query parameter `name` (case-insensitive) in `target`,
// percent-decoded; nullopt-like "" with found=false when absent.
bool QueryParam(absl::string_view target, absl::string_view name,
                std::string* value);

// Percent-decoding (util/escape.h), as the routes use it.
using util::PercentDecode;

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_ROUTES_H_
