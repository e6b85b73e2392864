// Our POST /v1/decode (exchange.h): a vin.v1.DecodeRequest in JSON,
// answered with a DecodeResponse or a google.rpc.Status, as the gRPC
// Decode would be.
#ifndef VIN_SERVER_HTTP_API_DECODE_H_
#define VIN_SERVER_HTTP_API_DECODE_H_

#include <string>
#include <vector>

#include "server/http/exchange.h"

namespace server {
namespace http {
namespace internal {

class ApiDecode final : public GatheringExchange {
 public:
  using GatheringExchange::GatheringExchange;
  void Start() override;

 private:
  void Answer(std::vector<Outcome>& outcomes) override;
  std::string vin_;  // as sent, for an error's metadata
  CallerExtras extras_;  // rule 21: explain, a barcode read
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_API_DECODE_H_
