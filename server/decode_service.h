// vin.v1.VinDecoderService on gRPC's callback API. Reactors never block:
// they hand requests to the engine and finish from its listener callbacks.
#ifndef VIN_SERVER_DECODE_SERVICE_H_
#define VIN_SERVER_DECODE_SERVICE_H_

#include "engine/engine.h"
#include "vin/v1/vin.grpc.pb.h"

namespace server {

class DecodeService final : public vin::v1::VinDecoderService::CallbackService {
 public:
  // `engine` must outlive every call.
  explicit DecodeService(engine::Engine* engine) : engine_(engine) {}

  grpc::ServerUnaryReactor* Decode(grpc::CallbackServerContext* context,
                                   const vin::v1::DecodeRequest* request,
                                   vin::v1::DecodeResponse* response) override;

 private:
  engine::Engine* const engine_;
};

// The caller's deadline as an absl::Time (InfiniteFuture when none).
absl::Time DeadlineOf(const grpc::CallbackServerContext* context);

}  // namespace server

#endif  // VIN_SERVER_DECODE_SERVICE_H_
