#include "server/decode_service.h"

#include <atomic>

#include "server/call_deadline.h"
#include "server/common/proto_mapping.h"
#include "server/common/status_mapping.h"
#include "server/common/tenant.h"
#include "server/decode_metrics.h"

namespace server {
namespace {

// One unary Decode: a waiter of the engine. Deletes itself in OnDone, after
// gRPC has finished with it; the engine never touches it after the terminal
// event, and Finish is the last thing each terminal callback does.
class DecodeCall final : public grpc::ServerUnaryReactor,
                         public engine::DecodeListener {
 public:
  DecodeCall(engine::Engine* engine, metrics::ServiceMetrics* metrics,
             grpc::CallbackServerContext* context,
             const vin::v1::DecodeRequest* request,
             vin::v1::DecodeResponse* response, const TenantPolicy& tenants)
      : engine_(engine),
        metrics_(metrics),
        request_(request),
        response_(response),
        asked_(absl::Now()),
        peer_(context->peer()),
        extras_(ExtrasOf(*request)) {
    engine::DecodeRequest r = FromProto(*request);
    r.timeout = TimeoutOf(DeadlineOf(context));
    r.priority = PriorityOf(request->priority(), domain::Priority::kInteractive);
    r.tenant = tenants.TenantOf(*context);
    const engine::Admission admitted = engine_->Submit(r, this);
    if (!admitted.ok()) {
      OnFailed(admitted.failure());
      return;
    }
    waiter_ = admitted.id();
  }

  void OnQueued(const engine::Queued&) override {}
  void OnRetrying(const engine::Retrying&) override {}
  void OnDone(std::shared_ptr<const engine::DecodeResult> result) override {
    ToProto(*ForCaller(result, extras_), response_->mutable_result());
    CountDone(metrics_, *result, absl::Now() - asked_);
    HandOff();
    Finish(grpc::Status::OK);
  }
  void OnFailed(const engine::Failure& failure) override {
    CountFailed(metrics_, failure.reason, absl::Now() - asked_);
    HandOff();
    Finish(ToGrpcStatus(failure, request_->vin()));
  }

  engine::CallerInfo Caller() const override { return {peer_, ""}; }

  void OnCancel() override {
    engine_->Cancel(waiter_);
    HandOff();
  }
  void OnDone() override {
    // gRPC calls OnDone after Finish and OnCancel have returned, ordered
    // inside its (uninstrumented) core; this acquire of what HandOff
    // released makes that order visible to TSan.
    (void)handoffs_.load(std::memory_order_acquire);
    delete this;
  }

 private:
  engine::Engine* const engine_;
  metrics::ServiceMetrics* const metrics_;
  // Both gRPC's until OnDone.
  const vin::v1::DecodeRequest* const request_;
  vin::v1::DecodeResponse* const response_;
  const absl::Time asked_;
  const std::string peer_;
  const CallerExtras extras_;            // rule 21: explain, a barcode read
  engine::Engine::WaiterId waiter_ = 0;  // 0: never submitted
  // Everything this call did on its thread (the engine's or gRPC's) before
  // Finish or at the end of OnCancel is released here for OnDone.
  void HandOff() { handoffs_.fetch_add(1, std::memory_order_acq_rel); }
  std::atomic<int> handoffs_{0};
};

}  // namespace

grpc::ServerUnaryReactor* DecodeService::Decode(
    grpc::CallbackServerContext* context, const vin::v1::DecodeRequest* request,
    vin::v1::DecodeResponse* response) {
  return new DecodeCall(engine_, metrics_, context, request, response,
                        tenants_);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
DecodeService::DecodeBatch(grpc::CallbackServerContext* context) {
  std::string tenant = tenants_.TenantOf(*context);
  const bool interactive = tenants_.MayAskInteractive(tenant);
  return new BatchCall(engine_, context, batch_window_, &batch_counters_,
                       metrics_, &batch_calls_, std::move(tenant), interactive);
}

}  // namespace server
