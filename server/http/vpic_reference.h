// vPIC's reference endpoints on the gateway (exchange.h; DESIGN rule 18):
// GET GetAllMakes, GetModelsForMake/{make}, ... (vpic_endpoints.h). The
// engine asks vPIC for the request's JSON once among concurrent callers and
// caches it; each caller gets it in the format it asked: vPIC's JSON as
// vPIC sent it, or the same content as vPIC's XML or as CSV. Where the
// answer came from is in headers, never in vPIC's fields.
#ifndef VIN_SERVER_HTTP_VPIC_REFERENCE_H_
#define VIN_SERVER_HTTP_VPIC_REFERENCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/http/exchange.h"
#include "server/http/vpic_document.h"
#include "server/http/vpic_endpoints.h"

namespace server {
namespace http {

// vPIC's JSON answer of `endpoint` as a document: its envelope, its results'
// fields typed as the JSON has them (a list of objects a kList whose items
// are named as vPIC's classes: VehicleTypes holds VehicleType), in the
// endpoint's XML order where it is known. An error when `json` is not a
// vPIC answer (the engine checked it; a cache row too).
absl::StatusOr<VpicDocument> ReferenceDocument(absl::string_view json,
                                               const VpicEndpoint& endpoint);

// The answer of `endpoint` in `format` from vPIC's JSON: the JSON as it is,
// or rendered.
absl::StatusOr<std::string> RenderReference(absl::string_view json,
                                            const VpicEndpoint& endpoint,
                                            VpicFormat format);

namespace internal {

class VpicReference final : public GatheringExchange {
 public:
  using GatheringExchange::GatheringExchange;
  void Start() override;

 private:
  void Answer(std::vector<Outcome>& outcomes) override;
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_VPIC_REFERENCE_H_
