// vin.v1.VinDecoderService on gRPC's callback API. Reactors never block:
// they hand requests to the engine and finish from its listener callbacks.
#ifndef VIN_SERVER_DECODE_SERVICE_H_
#define VIN_SERVER_DECODE_SERVICE_H_

#include "engine/engine.h"
#include "server/batch_call.h"
#include "vin/v1/vin.grpc.pb.h"

namespace server {

class DecodeService final : public vin::v1::VinDecoderService::CallbackService {
 public:
  // `engine` must outlive every call. `batch_window`: items of one
  // DecodeBatch stream in progress at once.
  DecodeService(engine::Engine* engine, int batch_window)
      : engine_(engine), batch_window_(batch_window) {}

  grpc::ServerUnaryReactor* Decode(grpc::CallbackServerContext* context,
                                   const vin::v1::DecodeRequest* request,
                                   vin::v1::DecodeResponse* response) override;
  grpc::ServerBidiReactor<vin::v1::DecodeBatchRequest,
                          vin::v1::DecodeBatchResponse>*
  DecodeBatch(grpc::CallbackServerContext* context) override;

  const BatchCounters& batch_counters() const { return batch_counters_; }

 private:
  engine::Engine* const engine_;
  const int batch_window_;
  BatchCounters batch_counters_;
};

// The caller's deadline as an absl::Time (InfiniteFuture when none).
absl::Time DeadlineOf(const grpc::CallbackServerContext* context);
// The time left until `deadline` (wall time) for the engine, which measures
// it on its own monotonic clock; InfiniteDuration for no deadline.
absl::Duration TimeoutOf(absl::Time deadline);

}  // namespace server

#endif  // VIN_SERVER_DECODE_SERVICE_H_
