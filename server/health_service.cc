#include "server/health_service.h"

#include <string>

namespace server {

using grpc::health::v1::HealthCheckResponse;

grpc::ServerUnaryReactor* HealthService::Check(
    grpc::CallbackServerContext* context,
    const grpc::health::v1::HealthCheckRequest* request,
    HealthCheckResponse* response) {
  auto* reactor = context->DefaultReactor();
  const std::string& service = request->service();
  if (!service.empty() && service != "vin.v1.VinDecoderService") {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "unknown service \"" + service + "\""));
    return reactor;
  }
  response->set_status(serving_.load() ? HealthCheckResponse::SERVING
                                       : HealthCheckResponse::NOT_SERVING);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace server
