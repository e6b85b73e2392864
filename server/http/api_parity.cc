#include "server/http/api_parity.h"

#include "server/http/connection.h"

namespace server {
namespace http {
namespace internal {

void ApiParity::Start() {
  const GatewayOptions& o = c_->options();
  if (!o.admins.Allows(c_->client(), c_->tenant())) {
    return c_->FailApi(403, AdminRefusal("GET /v1/parity"));
  }
  vin::v1::ParityReport report;
  if (o.parity) report = o.parity();
  SendJson(200, report, /*print_defaults=*/true);
}

}  // namespace internal
}  // namespace http
}  // namespace server
