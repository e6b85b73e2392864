// Waiter (exchange.h): one engine waiter of an exchange, relaying its
// events to its connection's strand (every event of a /v1/decode:batch
// item, the terminal one otherwise), then deleting itself.
#include <boost/asio/dispatch.hpp>
#include <memory>
#include <utility>

#include "server/common/proto_mapping.h"
#include "server/http/exchange.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

Waiter::Waiter(std::shared_ptr<Gateway::Impl> gateway,
               std::weak_ptr<Connection> connection, uint64_t exchange,
               size_t index)
    : gateway_(std::move(gateway)),
      connection_(std::move(connection)),
      exchange_(exchange),
      index_(index) {
  gateway_->WaiterStarted();
}

void Waiter::OnQueued(const engine::Queued& q) {
  if (!stream_) return;
  vin::v1::DecodeBatchResponse e;
  ToProto(q, e.mutable_queued());
  Relay(std::move(e), false);
}

void Waiter::OnRetrying(const engine::Retrying& r) {
  if (!stream_) return;
  vin::v1::DecodeBatchResponse e;
  ToProto(r, e.mutable_retrying());
  Relay(std::move(e), false);
}

void Waiter::OnDone(std::shared_ptr<const engine::DecodeResult> result) {
  Outcome o;
  o.done = true;
  o.answer = ForCaller(std::move(result), extras_);
  Finish(std::move(o));
}

void Waiter::OnFailed(const engine::Failure& failure) {
  Outcome o;
  o.failure = failure;
  Finish(std::move(o));
}

void Waiter::Relay(vin::v1::DecodeBatchResponse event, bool terminal) {
  if (auto s = connection_.lock()) {
    net::dispatch(s->Executor(), [s, exchange = exchange_, index = index_,
                                  e = std::move(event), terminal]() mutable {
      s->OnStreamEvent(exchange, index, std::move(e), terminal);
    });
  }
}

void Waiter::Finish(Outcome o) {
  if (stream_) {
    vin::v1::DecodeBatchResponse e;
    if (o.done) {
      ToProto(*o.answer, e.mutable_done()->mutable_result());
      e.set_vin(e.done().result().vin());
    } else {
      ToProto(o.failure, e.mutable_failed());
    }
    Relay(std::move(e), true);
    auto gateway = std::move(gateway_);
    delete this;
    gateway->WaiterEnded();
    return;
  }
  if (auto s = connection_.lock()) {
    // Inline when this is the connection's strand (a cache hit answered
    // inside Submit), else queued on it.
    net::dispatch(s->Executor(), [s, exchange = exchange_, index = index_,
                                  o = std::move(o)]() mutable {
      s->OnOutcome(exchange, index, std::move(o));
    });
  }
  auto gateway = std::move(gateway_);
  delete this;
  gateway->WaiterEnded();
}

}  // namespace internal
}  // namespace http
}  // namespace server
