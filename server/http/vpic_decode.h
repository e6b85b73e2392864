// vPIC's decode paths (exchange.h): GET DecodeVinValues[Extended]/{vin},
// GET DecodeVin/{vin} and POST DecodeVINValuesBatch/, answered in vPIC's
// shape (vpic_shape.h) or vPIC's {"error":{...}}, with the provenance
// headers, the ETag and Cache-Control. A DecodeVinValues answer of a cached
// result is rendered once (Gateway::Impl keeps it).
#ifndef VIN_SERVER_HTTP_VPIC_DECODE_H_
#define VIN_SERVER_HTTP_VPIC_DECODE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/engine.h"
#include "server/http/exchange.h"
#include "server/http/vpic_document.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

// A DecodeVinValues answer already rendered for a cached result: cache hits
// of the same entry (the engine hands out the same result object, its
// encoded bytes the same) are not rendered again.
struct Rendered {
  std::shared_ptr<const std::string> encoded;  // the key's owner
  std::string searched;                        // as the caller wrote the VIN
  VpicFormat format = VpicFormat::kXml;
  vin::v1::DecodeResult result;
  std::string body;
  std::string etag;
};

class VpicDecode final : public GatheringExchange {
 public:
  using GatheringExchange::GatheringExchange;
  void Start() override;

 private:
  // POST DecodeVINValuesBatch: every VIN of the form checked before any is
  // sent (an invalid one refuses the whole batch), then decoded as bulk.
  void StartBatch();
  void Answer(std::vector<Outcome>& outcomes) override;
  // A single decode's answer: rendered once per cached result.
  void AnswerValues(const std::shared_ptr<const engine::DecodeResult>& answer);
  void Send(const std::vector<vin::v1::DecodeResult>& results,
            const std::string& body, const std::string& etag);
  // An engine failure: {"error":{...}} with the HTTP status of its reason,
  // `message` (the failure's, or naming the VIN).
  void Fail(const engine::Failure& failure, absl::string_view message);

  VpicFormat format_ = VpicFormat::kXml;  // the route's, or the form's
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_VPIC_DECODE_H_
