// One gateway connection (private to server/http/; with exchange.h and
// gateway_impl.h the only headers besides its .cc files that see Boost):
// its requests' heads and bodies read under the limits of rule 19, routed,
// and answered. What a request does once routed is its Exchange's
// (exchange.h: one kind per route kind). Defined by theme: connection.cc
// (reading the head and body, limits, timers, CORS, writing),
// connection_answer.cc (the connection's own answers: files, metrics,
// errors in each surface's shape, ETags) and connection_tls.cc (a TLS
// connection's handshake and close).
#ifndef VIN_SERVER_HTTP_CONNECTION_H_
#define VIN_SERVER_HTTP_CONNECTION_H_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/optional.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "domain/error_reason.h"
#include "server/common/status_mapping.h"
#include "server/http/gateway.h"
#include "server/http/gateway_impl.h"
#include "server/http/routes.h"
#include "server/http/shared_body.h"
#include "server/http/transport.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<SharedStringBody>;
using HeadParser = bhttp::request_parser<bhttp::empty_body>;

class Exchange;
struct Outcome;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `gateway` outlives every connection: those still held by pending
  // handlers when the gateway goes are destroyed with its io_context,
  // before the state they use (Gateway::Impl's member order).
  // `tls`: the listener's TLS context (null for plain TCP).
  Connection(Gateway::Impl* gateway, tcp::socket socket, std::string client,
             std::shared_ptr<net::ssl::context> tls);
  ~Connection();

  net::any_io_executor Executor() { return stream_.get_executor(); }

  void Start();

  // From any thread: the connection ends now (the gateway stops).
  void Close();

  // Refuses a connection over its client's share, then closes.
  void RefuseBusy();
  void set_counted(bool counted) { counted_ = counted; }

  // A waiter of exchange `exchange` ended, or (a streamed item) sent an
  // event; on the strand. Dropped when that exchange is no longer the
  // connection's.
  void OnOutcome(uint64_t exchange, size_t index, Outcome o);
  void OnStreamEvent(uint64_t exchange, size_t index,
                     vin::v1::DecodeBatchResponse event, bool terminal);

  // ---- What an exchange uses of its connection (on the strand).

  const GatewayOptions& options() const { return gateway_->options(); }
  Gateway::Impl* gateway() const { return gateway_; }
  const Route& route() const { return route_; }
  // The request, its body read whole (not for a streamed body).
  const Request& request() const { return request_; }
  const std::string& tenant() const { return tenant_; }  // rules 17 and 19
  absl::Duration timeout() const { return timeout_; }    // the deadline
  const std::string& client() const { return client_; }
  unsigned version() const { return version_ == 0 ? 11 : version_; }

  // While an exchange's waiters are out nothing of the connection's I/O is
  // pending: it holds the connection until Release (whose result the
  // caller keeps until it is done with the connection).
  void Hold() { hold_ = shared_from_this(); }
  std::shared_ptr<Connection> Release() { return std::move(hold_); }

  std::shared_ptr<Response> MakeResponse(int status);
  // The answer, with keep-alive and CORS; HEAD gets the head only.
  void Send(std::shared_ptr<Response> res);
  // `body` with its ETag, or 304 when the request's If-None-Match has it.
  // Shared bytes (a kept rendering) are sent as they are, without a copy.
  void SendTagged(std::shared_ptr<Response> res,
                  std::shared_ptr<const std::string> body,
                  const std::string& etag);
  // A file of the binary's (the page, /openapi.json): revalidated by its
  // ETag, so a new build's is seen at once.
  void SendFile(const char* content, const char* type, const std::string& etag);
  // The metrics port's one route.
  void SendMetrics();

  // An error of /v1/*: `status` with a google.rpc.Status body (ErrorInfo,
  // BadRequest, RetryInfo as gRPC would carry them) and Retry-After when
  // a 503 or 429 suggests a delay.
  void FailApi(int status, const ErrorDetails& details, bool close = false);
  // A 4xx/5xx decided by the gateway itself, in the error shape of the
  // request's surface (google.rpc.Status on /v1/*, {"error":{...}} on
  // the rest); `close` when the connection cannot go on (the rest of the
  // request is unread).
  void Fail(int status, domain::ErrorReason reason, absl::string_view message,
            bool close);

  // For an exchange that reads its body itself (the NDJSON stream).
  Transport& transport() { return stream_; }
  beast::flat_buffer& buffer() { return buffer_; }
  using StreamParser = bhttp::request_parser<bhttp::buffer_body>;
  // The request's parser, its head read, becomes `*out` (a parser
  // converts only in place: it cannot be moved).
  void TakeHeadParser(boost::optional<StreamParser>* out);
  // CORS headers on an answer, when the request's Origin may read it.
  void AddCors(bhttp::fields* res) const;
  // "Expect: 100-continue": the interim answer, then `then`.
  void Continue(std::function<void()> then);
  // vin_http_request_duration_seconds for this request.
  void CountRequest(int code);
  // The socket closed at once (a stream's end).
  void CloseSocket();

 private:
  void ReadHead();

  // ---- TLS (connection_tls.cc).

  // The handshake, within `head_timeout`; then the first head.
  void Handshake();
  // A handshake that failed: a plaintext request is told to use https,
  // anything else closed.
  void HandshakeFailed(beast::error_code ec);
  // The end of an answered TLS connection: close_notify, briefly waiting
  // for the client's, then the socket.
  void CloseTls();

  // The head (or body, or a response's write) must be done within `limit`:
  // past it the socket's operations are cancelled (a read answered 408).
  // (tcp_stream's own expiry would close the socket before a 408 could be
  // written.) One timer for the connection's life, not set and cancelled per
  // request: StopTimer only clears the deadline, and the timer, when it
  // fires before the deadline, waits again (ArmTimer). CancelTimer, on the
  // way out, cancels it, so that it holds the connection no longer.
  void StartTimer(absl::Duration limit);
  void StopTimer();
  void CancelTimer();
  void ArmTimer(net::steady_timer::time_point at);

  // A read failed: answer what can be answered, else just close.
  void ReadFailed(beast::error_code ec, bool head);

  void OnHead(beast::error_code ec);

  // The head's checks before anything runs (rule 19): its framing, Host
  // and Origin. False when it was refused (answered).
  bool CheckHead(const bhttp::request_header<>& head);
  // The request's deadline and tenant from its head; false when refused
  // (a bad X-Request-Timeout).
  bool Prepare(const bhttp::request_header<>& head);

  // CORS: whether the request's Origin may read the answer.
  bool OriginAllowed() const;

  // An OPTIONS request: a CORS preflight (its body, if any, is not read).
  void Preflight(const bhttp::request_header<>& head);

  // The body, read whole within the route's limit, then the exchange.
  void ReadBody();

  void Write(std::shared_ptr<Response> res);
  void Shutdown();
  // The exchange's engine waiters still out are cancelled.
  void CancelExchange();

  Gateway::Impl* const gateway_;
  Transport stream_;
  // TLS: the subject of the client's certificate ("" without one), the
  // tenant of every request (rule 19).
  std::string peer_subject_;
  bool tls_closing_ = false;
  net::steady_timer timer_;
  bool timer_waiting_ = false;  // an async_wait of timer_ is pending
  net::steady_timer::time_point deadline_ =
      net::steady_timer::time_point::max();
  bool timed_out_ = false;
  const std::string client_;
  beast::flat_buffer buffer_;
  // The request's head is read with head_parser_; its body with parser_
  // (read whole), or by the exchange (a streamed body).
  boost::optional<HeadParser> head_parser_;
  boost::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  Request request_;
  Route route_;
  std::string origin_;      // the request's Origin header, "" when none
  std::string tenant_;      // the request's tenant (rules 17 and 19)
  absl::Duration timeout_;  // the request's deadline
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_only_ = false;
  // For vin_http_request_duration_seconds: when the request's head was
  // read (InfinitePast: none, an answer before any request) and its route.
  absl::Time request_start_ = absl::InfinitePast();
  const char* route_label_ = "none";
  // The request is one of our API's (/v1/*): its errors are
  // google.rpc.Status.
  bool api_ = false;
  bool expect_continue_ = false;  // "Expect: 100-continue"
  bool closing_ = false;
  bool counted_ = true;
  // The request's work once routed, and its number (a waiter's events for
  // an earlier exchange are dropped).
  std::unique_ptr<Exchange> exchange_;
  uint64_t exchange_seq_ = 0;
  std::shared_ptr<Connection> hold_;  // while an exchange's waiters are out
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_CONNECTION_H_
