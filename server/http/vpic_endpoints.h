// vPIC's reference endpoints (DESIGN rule 18): every vehicles endpoint but
// the VIN decodes, as data. Each entry says how vPIC takes its arguments
// (a path argument, path segments, query parameters), what each may hold,
// and how its answer is written in XML. ParseReference checks a request's
// arguments before anything is sent (a bad one is a 400 naming it) and
// normalises them into the one string that keys its flight and its cache
// entry (domain::DecodeKey::reference), whatever case, order or format the
// caller wrote. Pure: no I/O, no clock.
#ifndef VIN_SERVER_HTTP_VPIC_ENDPOINTS_H_
#define VIN_SERVER_HTTP_VPIC_ENDPOINTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace server {
namespace http {

// What an argument may hold.
enum class ArgKind {
  kText,    // a name (a make, a manufacturer, a type): at most 100 bytes, no
            // control characters; compared by vPIC without case: lower-cased
  kId,      // a positive integer id (a make id)
  kYear,    // a year, 1900 to 2100
  kPage,    // vPIC's page, 1 to 100,000
  kDate,    // a date as vPIC takes it (M/D/YYYY or YYYY-MM-DD)
  kWmi,     // a WMI: 3 or 6 letters and digits; upper-cased
  kChoice,  // one of `choices` ("565|566"), any case; written as listed
};

struct ParamSpec {
  absl::string_view name;  // vPIC's spelling ("ManufacturerType")
  ArgKind kind = ArgKind::kText;
  bool required = false;
  absl::string_view choices;  // kChoice: the values, '|'-separated
};

struct VpicEndpoint {
  absl::string_view name;  // vPIC's spelling ("GetModelsForMakeYear")
  // Where its arguments are, besides query parameters.
  enum class Path {
    kNone,      // GetAllMakes
    kArg,       // GetModelsForMake/{make}
    kOptArg,    // GetWMIsForManufacturer[/{name}]
    kSegments,  // GetModelsForMakeYear/make/{make}/modelyear/{y}/...
  };
  Path path = Path::kNone;
  ArgKind path_kind = ArgKind::kText;
  absl::string_view path_name;  // the path argument, for errors ("make")
  ParamSpec params[5];          // the query's (unused entries: no name)
  // The XML element of each result, and (when known) the XML order of its
  // fields, comma-separated; "" keeps the JSON order (SHAPES.md says which
  // are evidenced).
  absl::string_view result_element;
  absl::string_view xml_order;
  // GetWMIsForManufacturer: the path argument or this parameter.
  absl::string_view or_param;
  // GetCanadianVehicleSpecifications: every parameter's key is required,
  // empty values allowed (vPIC answers 404 otherwise).
  bool all_keys = false;
};

// The endpoint named `op` (any case), or null.
const VpicEndpoint* FindVpicEndpoint(absl::string_view op);

// The names of every endpoint served, comma-separated (for a 404).
std::string VpicEndpointNames();

// A reference request, checked and normalised.
struct ReferenceRequest {
  const VpicEndpoint* endpoint = nullptr;
  // vPIC's path below /api/vehicles/ and its query, without `format`:
  // the endpoint as vPIC spells it, its arguments normalised (case per
  // ArgKind) and percent-encoded, the parameters in the table's order.
  std::string key;
};

// The request for `endpoint` of `rest` (what follows the endpoint in the
// path, as written, without the leading slash; "" when nothing) and the
// query of `target`. An argument missing or out of its bounds is
// InvalidArgument naming it; unknown query parameters are ignored, as vPIC
// ignores them.
absl::StatusOr<ReferenceRequest> ParseReference(const VpicEndpoint& endpoint,
                                                absl::string_view rest,
                                                absl::string_view target);

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_VPIC_ENDPOINTS_H_
