// The gateway's insides (gateway.h), private to server/http/ and with
// gateway_impl.h the only place besides its .cc files that sees Boost: a
// Waiter (one engine waiter of a request) and a Session (one connection:
// its requests read, routed, given to the engine and answered). Session's
// members are defined by theme in session.cc (the connection: reading the
// head, limits, timers, CORS, writing), session_route.cc (a request's route
// to the engine), session_answer.cc (the answers and errors) and
// session_stream.cc (the NDJSON /v1/decode:batch stream); a TLS
// connection's handshake and close in session_tls.cc.
#ifndef VIN_SERVER_HTTP_SESSION_H_
#define VIN_SERVER_HTTP_SESSION_H_

#include <grpcpp/support/status.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/optional.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "engine/engine.h"
#include "server/common/item_window.h"
#include "server/common/status_mapping.h"
#include "server/http/gateway.h"
#include "server/http/gateway_impl.h"
#include "server/http/request_checks.h"
#include "server/http/routes.h"
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
using Response = bhttp::response<bhttp::string_body>;

// The outcome of one waiter.
struct Outcome {
  bool done = false;
  std::shared_ptr<const engine::DecodeResult> answer;
  engine::Failure failure;
};

// A DecodeVinValues answer already rendered for a cached result: cache hits
// of the same entry (the engine hands out the same result object, its
// encoded bytes the same) are not rendered again.
struct Rendered {
  std::shared_ptr<const std::string> encoded;  // the key's owner
  std::string searched;                        // as the caller wrote the VIN
  vin::v1::DecodeResult result;
  std::string body;
  std::string etag;
};

}  // namespace internal

namespace internal {

// One engine waiter of a request: relays its terminal event to the session's
// strand, then deletes itself (the engine never touches it afterwards).
// Defined in waiter.cc.
class Waiter final : public engine::DecodeListener {
 public:
  Waiter(std::shared_ptr<Gateway::Impl> gateway, std::weak_ptr<Session> session,
         uint64_t request, size_t index);

  // A /v1/decode:batch item: every event is relayed, not only the last.
  void set_stream(bool stream) { stream_ = stream; }

  void OnQueued(const engine::Queued& q) override;
  void OnRetrying(const engine::Retrying& r) override;
  void OnDone(std::shared_ptr<const engine::DecodeResult> result) override;
  void OnFailed(const engine::Failure& failure) override;

  // Also for a submission the engine refused (no event then comes).
  void Finish(Outcome o);

 private:
  void Relay(vin::v1::DecodeBatchResponse event, bool terminal);
  bool stream_ = false;
  std::shared_ptr<Gateway::Impl> gateway_;
  std::weak_ptr<Session> session_;
  const uint64_t request_;
  const size_t index_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `gateway` outlives every session: the sessions still held by pending
  // handlers when the gateway goes are destroyed with its io_context,
  // before the state they use (Gateway::Impl's member order).
  // `tls`: the listener's TLS context (null for plain TCP).
  Session(Gateway::Impl* gateway, tcp::socket socket, std::string client,
          std::shared_ptr<net::ssl::context> tls);
  ~Session();

  net::any_io_executor Executor() { return stream_.get_executor(); }

  void Start();

  // From any thread: the connection ends now (the gateway stops).
  void Close();

  // A waiter of request `request` ended (on the strand).
  void OnOutcome(uint64_t request, size_t index, Outcome o);

  // A /v1/decode:batch item's event (on the strand).
  void OnStreamEvent(uint64_t request, size_t index,
                     vin::v1::DecodeBatchResponse event, bool terminal);

  // Refuses a connection over its client's share, then closes.
  void RefuseBusy();
  void set_counted(bool counted) { counted_ = counted; }

 private:
  enum class Mode { kValues, kVariables, kBatch, kDecode, kStream };

  // An item of a /v1/decode:batch stream read and not yet answered whole.
  struct StreamItem {
    std::string request_id;
    std::string vin;      // as sent (made safe), for its events
    uint64_t waiter = 0;  // the engine's id while it may be cancelled
    bool ended = false;   // its terminal event came (its line may not be out)
  };
  struct Line {
    std::string text;
    bool terminal;
    size_t index;  // the item's
  };

  const GatewayOptions& options() const { return gateway_->options(); }

  // ---- The connection (session.cc).

  void ReadHead();

  // ---- TLS (session_tls.cc).

  // The handshake, within `head_timeout`; then the first head.
  void Handshake();
  // A handshake that failed: a plaintext request is told to use https,
  // anything else closed.
  void HandshakeFailed(beast::error_code ec);
  // The end of an answered TLS connection: close_notify, briefly waiting
  // for the client's, then the socket.
  void CloseTls();

  // The head (or body) must arrive within `limit`: past it the read is
  // cancelled and answered 408. (tcp_stream's own expiry would close the
  // socket before a 408 could be written.)
  void StartTimer(absl::Duration limit);

  // A read failed: answer what can be answered, else just close.
  void ReadFailed(beast::error_code ec, bool head);

  void OnHead(beast::error_code ec);

  // The head's checks before anything runs (rule 19): its framing, Host
  // and Origin. False when it was refused (answered).
  bool CheckHead(const bhttp::request_header<>& head);

  // CORS: whether the request's Origin may read the answer.
  bool OriginAllowed() const;
  void AddCors(Response* res) const;

  // An OPTIONS request: a CORS preflight (its body, if any, is not read).
  void Preflight(const bhttp::request_header<>& head);

  // The body, read whole within the route's limit, then Handle.
  void ReadBody();
  // "Expect: 100-continue": the interim answer before the body is read.
  void Continue(std::function<void()> then);

  std::shared_ptr<Response> MakeResponse(int status);
  void Send(std::shared_ptr<Response> res);
  void Write(std::shared_ptr<Response> res);
  void Shutdown();

  // ---- A request's route to the engine (session_route.cc).

  // The request's deadline and tenant from its head; false when refused
  // (a bad X-Request-Timeout).
  bool Prepare(const bhttp::request_header<>& head);
  void Handle();
  // Handle's steps for POST DecodeVINValuesBatch and POST /v1/decode.
  void HandleVpicBatch();
  void HandleDecode();
  // The metrics port's one route.
  void SendMetrics();

  void Submit(std::vector<engine::DecodeRequest> requests);
  void CancelWaiters();
  void Respond();

  // ---- The answers (session_answer.cc).

  // vPIC's paths: the answer in vPIC's shape, or the first failure.
  void RespondVpic();

  // A single decode's answer: rendered once per cached result.
  void RespondValues(const std::shared_ptr<const engine::DecodeResult>& answer);

  void SendVpic(const std::vector<vin::v1::DecodeResult>& results,
                const std::string& body, const std::string& etag);

  // `body` with its ETag, or 304 when the request's If-None-Match has it.
  void SendTagged(std::shared_ptr<Response> res, const std::string& body,
                  const std::string& etag);

  // A file of the binary's (the page, /openapi.json): revalidated by its
  // ETag, so a new build's is seen at once.
  void SendFile(const char* content, const char* type, const std::string& etag);

  static bool Matches(const std::string& header, const std::string& etag);

  // Where the answer came from, in headers (never in vPIC's fields), and
  // how long browsers and proxies may keep it.
  void Provenance(const std::vector<vin::v1::DecodeResult>& results,
                  Response* res) const;

  // Our API: a DecodeResponse, or a google.rpc.Status.
  void RespondDecode();

  // An engine failure on vPIC's paths: {"error":{...}} with the HTTP
  // status of its reason, `message` (the failure's, or naming the VIN).
  void FailVpic(const engine::Failure& failure, absl::string_view message);

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

  // ---- /v1/decode:batch (session_stream.cc): the body read as a stream,
  // a line at a time, NDJSON events out while they happen. At most
  // `--batch_window` items are in progress; the next line is read only
  // when an item's terminal event has been written (the client's reading
  // paces it), so memory is bounded by the window whatever the body's
  // size.

  void StartStream();

  // Reads the next piece of the body (when none is being read), within
  // `body_timeout`: past it, what was not read is not (the items read are
  // answered, then the stream ends).
  void ReadStreamBody();
  void OnStreamBody(beast::error_code ec);
  // Reads no more of the body before its end: logged, and once the items
  // read are answered the stream's last line is an error (`status`,
  // `reason`, `why`), so that the client knows the rest went unread.
  void StopReading(int status, domain::ErrorReason reason,
                   absl::string_view why);
  // The next line of the body read so far, if a whole one is there;
  // a line over `line_limit` comes back as its length only (`*too_long`),
  // its bytes skipped.
  bool NextLine(std::string* line, size_t* too_long);
  // Items from the lines read, while the window has room; then reads on.
  void Refill();
  void SubmitLine(const std::string& text, size_t too_long);
  // A client that goes away mid-stream: its reads end with an error.
  void WatchClient();
  void Pump();
  void StreamGone();
  void EndStream();

  Gateway::Impl* const gateway_;
  Transport stream_;
  // TLS: the subject of the client's certificate ("" without one), the
  // tenant of every request (rule 19).
  std::string peer_subject_;
  bool tls_closing_ = false;
  net::steady_timer timer_;
  bool timed_out_ = false;
  const std::string client_;
  beast::flat_buffer buffer_;
  // The request's head is read with head_parser_; its body with parser_
  // (read whole) or stream_parser_ (/v1/decode:batch).
  boost::optional<bhttp::request_parser<bhttp::empty_body>> head_parser_;
  boost::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  boost::optional<bhttp::request_parser<bhttp::buffer_body>> stream_parser_;
  Request request_;
  Route route_;
  std::string origin_;  // the request's Origin header, "" when none
  std::string tenant_;  // the request's tenant (rules 17 and 19)
  absl::Duration timeout_;  // the request's deadline
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_only_ = false;
  // For vin_http_request_duration_seconds: when the request's head was
  // read (InfinitePast: none, an answer before any request) and its route.
  absl::Time request_start_ = absl::InfinitePast();
  const char* route_label_ = "none";
  void CountRequest(int code);
  // The request is one of our API's (/v1/*): its errors are
  // google.rpc.Status.
  bool api_ = false;
  bool expect_continue_ = false;  // "Expect: 100-continue"
  bool closing_ = false;
  bool counted_ = true;
  Mode mode_ = Mode::kValues;
  uint64_t request_seq_ = 0;
  std::vector<Outcome> outcomes_;
  std::vector<uint64_t> ids_;
  std::vector<bool> answered_;
  size_t pending_ = 0;
  // /v1/decode:batch.
  std::map<size_t, StreamItem>
      active_;  // by index: read, not yet written whole
  // The stream's window, as a DecodeBatch call's (server/common/item_window.h).
  absl::optional<ItemWindow> window_;
  std::vector<char> read_buffer_;  // a piece of the body, as read
  std::string unsplit_;            // what is read and not yet a line
  size_t unsplit_pos_ = 0;
  std::string line_;         // the current line, so far
  size_t line_skipped_ = 0;  // > 0: the current line is too long
  bool reading_ = false, input_done_ = false;
  uint64_t body_reads_ = 0;  // reads of the body so far (their timers')
  std::string cut_short_;  // the last line when the body was not read whole
  std::deque<Line> lines_;
  bool writing_ = false, stream_gone_ = false, stream_done_ = false;
  std::shared_ptr<bhttp::response<bhttp::empty_body>> stream_head_;
  std::shared_ptr<bhttp::response_serializer<bhttp::empty_body>> serializer_;
  std::vector<char> watch_buffer_;
  std::shared_ptr<Session> hold_;  // while waiters are out
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_SESSION_H_
