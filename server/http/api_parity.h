// GET /v1/parity (DESIGN rule 21): the snapshot's parity with vPIC's live
// answers, as VinAdminService.GetParity's ParityReport in protobuf's JSON;
// only for callers AdminPolicy allows (else 403 ADMIN_ONLY), since it lists
// VINs callers asked about.
#ifndef VIN_SERVER_HTTP_API_PARITY_H_
#define VIN_SERVER_HTTP_API_PARITY_H_

#include "server/http/exchange.h"

namespace server {
namespace http {
namespace internal {

class ApiParity final : public Exchange {
 public:
  using Exchange::Exchange;
  void Start() override;
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_API_PARITY_H_
