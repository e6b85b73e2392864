// grpc.health.v1.Health: SERVING for "" and "vin.v1.VinDecoderService" until
// the server starts shutting down, NOT_SERVING after; NOT_FOUND for other
// names. Generated from the standard proto so that reflection describes it to
// grpcurl / buf curl. Watch is left UNIMPLEMENTED, which the health protocol
// allows; probes (Kubernetes, grpc_health_probe) use Check.
#ifndef VIN_SERVER_HEALTH_SERVICE_H_
#define VIN_SERVER_HEALTH_SERVICE_H_

#include <atomic>

#include "grpc/health/v1/health.grpc.pb.h"

namespace server {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  grpc::ServerUnaryReactor* Check(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request,
      grpc::health::v1::HealthCheckResponse* response) override;

  // Every known service reports NOT_SERVING from now on. Thread-safe.
  void SetNotServing() { serving_.store(false); }

 private:
  std::atomic<bool> serving_{true};
};

}  // namespace server

#endif  // VIN_SERVER_HEALTH_SERVICE_H_
