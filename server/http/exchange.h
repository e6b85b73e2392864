// What a routed request does (private to server/http/): one Exchange kind
// per kind of route, made by MakeExchange from the route. The connection
// (connection.h) reads the request and writes what the exchange answers;
// the exchange asks the engine and renders. Kinds: the vPIC decode paths
// (vpic_decode.h), our /v1/decode (api_decode.h), the NDJSON
// /v1/decode:batch stream (ndjson_stream.h) and the binary's own files and
// metrics (here). Adding a route of an existing kind is an entry in the
// routes table (routes.cc) and its renderer; a new kind, a class here.
#ifndef VIN_SERVER_HTTP_EXCHANGE_H_
#define VIN_SERVER_HTTP_EXCHANGE_H_

#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "server/common/proto_mapping.h"
#include "server/http/connection.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

// The outcome of one waiter.
struct Outcome {
  bool done = false;
  std::shared_ptr<const engine::DecodeResult> answer;
  engine::Failure failure;
};

class Exchange {
 public:
  // `connection` outlives its exchanges (it owns them); `seq` is the
  // exchange's number on it, which its waiters carry.
  Exchange(Connection* connection, uint64_t seq) : c_(connection), seq_(seq) {}
  virtual ~Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // Whether the exchange reads the request's body itself (a stream):
  // Start then comes right after the head, else after the body is read
  // whole (Connection::request()).
  virtual bool StreamsBody() const { return false; }
  virtual void Start() = 0;
  // A waiter's terminal outcome; a streamed item's events.
  virtual void OnOutcome(size_t /*index*/, Outcome /*o*/) {}
  virtual void OnEvent(size_t /*index*/, vin::v1::DecodeBatchResponse /*e*/,
                       bool /*terminal*/) {}
  // The connection ends: the engine waiters still out are cancelled.
  virtual void Cancel() {}

 protected:
  // `status` with `message` in protobuf's JSON (with its fields at their
  // defaults too when `print_defaults`), never cached.
  void SendJson(int status, const google::protobuf::Message& message,
                bool print_defaults = false);

  Connection* const c_;
  const uint64_t seq_;
};

// The exchange of `route` (never kError) on `connection`.
std::unique_ptr<Exchange> MakeExchange(const Route& route,
                                       Connection* connection, uint64_t seq);

// An exchange that gives the engine its requests and answers once every
// one has its outcome (the vPIC paths, /v1/decode): Submit, then Answer.
class GatheringExchange : public Exchange {
 public:
  using Exchange::Exchange;
  void OnOutcome(size_t index, Outcome o) final;
  void Cancel() final;

 protected:
  // The requests to the engine; the connection is held until every one
  // has its outcome (a cache hit's comes inside Submit).
  void Submit(std::vector<engine::DecodeRequest> requests);
  // Every outcome is in, in the requests' order.
  virtual void Answer(std::vector<Outcome>& outcomes) = 0;

 private:
  std::vector<Outcome> outcomes_;
  std::vector<uint64_t> ids_;  // the engine's, while it may be cancelled
  std::vector<bool> answered_;
  size_t pending_ = 0;
};

// One engine waiter of an exchange: relays its terminal event (and a
// streamed item's every event) to the connection's strand, then deletes
// itself (the engine never touches it afterwards). Defined in waiter.cc.
class Waiter final : public engine::DecodeListener {
 public:
  Waiter(std::shared_ptr<Gateway::Impl> gateway,
         std::weak_ptr<Connection> connection, uint64_t exchange, size_t index);

  // A /v1/decode:batch item: every event is relayed, not only the last.
  void set_stream(bool stream) { stream_ = stream; }
  // Rule 21: what this caller's answer adds to the shared result.
  void set_extras(CallerExtras extras) { extras_ = std::move(extras); }

  void OnQueued(const engine::Queued& q) override;
  void OnRetrying(const engine::Retrying& r) override;
  void OnDone(std::shared_ptr<const engine::DecodeResult> result) override;
  void OnFailed(const engine::Failure& failure) override;

  // Also for a submission the engine refused (no event then comes).
  void Finish(Outcome o);

 private:
  void Relay(vin::v1::DecodeBatchResponse event, bool terminal);
  bool stream_ = false;
  CallerExtras extras_;
  std::shared_ptr<Gateway::Impl> gateway_;
  std::weak_ptr<Connection> connection_;
  const uint64_t exchange_;
  const size_t index_;
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_EXCHANGE_H_
