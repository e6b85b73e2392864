// vPIC's decode paths (exchange.h): GET DecodeVinValues[Extended]/{vin},
// GET DecodeVin/{vin} and POST DecodeVINValuesBatch/, answered in vPIC's
// shape (vpic_shape.h) or vPIC's {"error":{...}}, with the provenance
// headers, the ETag and Cache-Control. A DecodeVinValues answer of a cached
// result is rendered once (Gateway::Impl keeps it).
#ifndef VIN_SERVER_HTTP_VPIC_DECODE_H_
#define VIN_SERVER_HTTP_VPIC_DECODE_H_

#include <memory>
#include <string>
#include <utility>
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

// Where the answers of a response came from, for its headers
// (X-Vin-Source, X-Vin-Stale, X-Vin-Note) and how long it may be kept
// (Cache-Control: a live answer until its cache entry expires, `ttl` after
// its decode; a stale or snapshot one revalidated each time).
struct Provenance {
  std::vector<std::string> sources;  // "vpic", "cache", "snapshot"
  std::vector<std::string> notes;    // "code: message", header-safe
  absl::Time oldest = absl::InfiniteFuture();
  bool stale = false;
  bool snapshot = false;

  void Add(const char* source, bool from_snapshot, absl::Time decode_time);
  void Add(const engine::DecodeResult& result);  // with its notes
  void Note(absl::string_view code, absl::string_view message);
  void Set(absl::Duration ttl, Response* res) const;
};

// An engine failure on vPIC's paths: {"error":{...}} with the HTTP status
// of its reason and `message` (the failure's, or naming the VIN), and
// Retry-After on a 503 or 429.
void SendVpicFailure(Connection* c, const engine::Failure& failure,
                     absl::string_view message);

// The X-Vin-Source-Preference header of vPIC's paths (live_only,
// snapshot_only, live_then_snapshot; any case): the request's source
// preference (unspecified when absent: the server's), or an error naming
// the header and its values.
absl::StatusOr<engine::SourcePreference> SourcePreferenceHeader(
    const Request& request);

class VpicDecode final : public GatheringExchange {
 public:
  using GatheringExchange::GatheringExchange;
  void Start() override;

 private:
  // POST DecodeVINValuesBatch: the form's VINs decoded as bulk; an invalid
  // one is answered in its place as vPIC answers it (rule 21).
  void StartBatch();
  // Rule 21: each INVALID_VIN outcome made vPIC's answer to that VIN (the
  // snapshot's decode of it as it stands, with the corrections), when the
  // snapshot can read it.
  void AnswerInvalidVins(std::vector<Outcome>& outcomes);
  void Answer(std::vector<Outcome>& outcomes) override;
  // A single decode's answer: rendered once per cached result.
  void AnswerValues(const std::shared_ptr<const engine::DecodeResult>& answer);
  void Send(const std::vector<vin::v1::DecodeResult>& results,
            std::shared_ptr<const std::string> body, const std::string& etag);
  void Fail(const engine::Failure& failure, absl::string_view message) {
    SendVpicFailure(c_, failure, message);
  }

  VpicFormat format_ = VpicFormat::kXml;  // the route's, or the form's
  engine::SourcePreference preference_ = engine::SourcePreference::kUnspecified;
  // Each request's VIN as sent and model year, by outcome index.
  std::vector<std::pair<std::string, int>> asked_;
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_VPIC_DECODE_H_
