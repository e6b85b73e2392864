// vin.v1.VinDecoderService on gRPC's callback API. Reactors never block:
// they hand requests to the engine and finish from its listener callbacks.
#ifndef VIN_SERVER_DECODE_SERVICE_H_
#define VIN_SERVER_DECODE_SERVICE_H_

#include "engine/engine.h"
#include "server/batch_call.h"
#include "server/common/tenant.h"
#include "vin/v1/vin.grpc.pb.h"

namespace server {

// Decode on the callback API; DecodeBatch as a raw callback method (bytes
// in and out: see server/batch_events.h).
class DecodeService final
    : public vin::v1::VinDecoderService::WithRawCallbackMethod_DecodeBatch<
          vin::v1::VinDecoderService::WithCallbackMethod_Decode<
              vin::v1::VinDecoderService::Service>> {
 public:
  // `engine` (and `metrics`, which may be null) must outlive every call.
  // `batch_window`: items of one DecodeBatch stream in progress at once.
  // `tenants`: who a caller is and what priority it may ask for (rules
  // 17 and 19).
  DecodeService(engine::Engine* engine, int batch_window,
                metrics::ServiceMetrics* metrics = nullptr,
                TenantPolicy tenants = {})
      : engine_(engine),
        batch_window_(batch_window),
        metrics_(metrics),
        tenants_(std::move(tenants)) {}

  grpc::ServerUnaryReactor* Decode(grpc::CallbackServerContext* context,
                                   const vin::v1::DecodeRequest* request,
                                   vin::v1::DecodeResponse* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* DecodeBatch(
      grpc::CallbackServerContext* context) override;

  const BatchCounters& batch_counters() const { return batch_counters_; }

  // The server is stopping: every open DecodeBatch stream reads no more
  // items and ends right after its last terminal event (idle ones at once).
  void Drain() {
    batch_calls_.ForEach([](BatchCall* call) { call->Drain(); });
  }

 private:
  engine::Engine* const engine_;
  const int batch_window_;
  metrics::ServiceMetrics* const metrics_;
  const TenantPolicy tenants_;
  BatchCounters batch_counters_;
  CallRegistry<BatchCall> batch_calls_;
};

}  // namespace server

#endif  // VIN_SERVER_DECODE_SERVICE_H_
