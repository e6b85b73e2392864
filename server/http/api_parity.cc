#include "server/http/api_parity.h"

#include <google/protobuf/util/json_util.h>

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
  std::string json;
  google::protobuf::util::JsonPrintOptions print;
  print.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(report, &json, print);
  auto res = c_->MakeResponse(200);
  res->set(bhttp::field::content_type, "application/json");
  res->set(bhttp::field::cache_control, "no-store");
  res->body() = std::move(json);
  c_->Send(std::move(res));
}

}  // namespace internal
}  // namespace http
}  // namespace server
