#include "server/http/gateway.h"

#include <google/protobuf/util/json_util.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "google/rpc/status.pb.h"
#include "server/http/routes.h"
#include "server/http/vpic_shape.h"
#include "server/proto_mapping.h"
#include "server/status_mapping.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Json = nlohmann::ordered_json;
using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

constexpr size_t kMaxBatchVins = 50;  // vPIC's limit

// A stable hash of a body, for its ETag.
std::string ETagOf(const std::string& body) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("\"%016x\"", h);
}

// A header value without line breaks or other control characters.
std::string HeaderSafe(absl::string_view text) {
  std::string out;
  out.reserve(std::min<size_t>(text.size(), 512));
  for (char c : text) {
    if (out.size() >= 512) break;
    out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c);
  }
  return out;
}

const char* SourceName(vin::v1::Source s) {
  switch (s) {
    case vin::v1::SOURCE_VPIC:
      return "vpic";
    case vin::v1::SOURCE_CACHE:
      return "cache";
    case vin::v1::SOURCE_SNAPSHOT:
      return "snapshot";
    default:
      return "unknown";
  }
}

// The HTTP status of a failure on vPIC's paths (DESIGN "HTTP").
int HttpStatusOf(engine::FailureReason r) {
  using R = engine::FailureReason;
  switch (r) {
    case R::kInvalidVin:
    case R::kInvalidRequest:
      return 400;
    case R::kUpstreamRejected:
      return 502;
    case R::kOverloaded:
      return 429;
    case R::kDeadlineExceeded:
      return 504;
    case R::kCancelled:
      return 499;
    case R::kUpstreamUnavailable:
    case R::kShuttingDown:
    case R::kNoSnapshot:
      return 503;
  }
  return 500;
}

// The HTTP status of a gRPC code, as HTTP/JSON gateways map them.
int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

std::string ErrorBody(int status, absl::string_view reason,
                      absl::string_view message, bool retryable = false,
                      absl::Duration retry_after = absl::ZeroDuration()) {
  Json e = Json::object();
  e["code"] = status;
  e["status"] = std::string(reason);
  e["message"] = std::string(message);
  e["retryable"] = retryable;
  if (retry_after > absl::ZeroDuration()) {
    e["retry_after_seconds"] = absl::ToDoubleSeconds(retry_after);
  }
  Json j = Json::object();
  j["error"] = std::move(e);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Seconds for Retry-After: whole, at least 1.
std::string RetryAfterOf(absl::Duration d) {
  return absl::StrCat(
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(d)))));
}

// The client's X-Request-Timeout: seconds ("2.5") or a duration ("500ms").
bool ParseTimeout(absl::string_view text, absl::Duration* out) {
  text = absl::StripAsciiWhitespace(text);
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds)) {
    if (!(seconds > 0) || !std::isfinite(seconds)) return false;
    *out = absl::Seconds(seconds);
    return true;
  }
  return absl::ParseDuration(text, out) && *out > absl::ZeroDuration();
}

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

class Session;

}  // namespace

// ---------------------------------------------------------------------------

class Gateway::Impl : public std::enable_shared_from_this<Gateway::Impl> {
 public:
  Impl(GatewayOptions options, engine::Engine* engine)
      : options_(std::move(options)),
        engine_(engine),
        ioc_(std::max(1, options_.threads)),
        acceptor_(net::make_strand(ioc_)) {}

  absl::Status Listen();
  void Run();
  void Stop();

  int port() const { return port_; }
  const GatewayOptions& options() const { return options_; }
  engine::Engine* engine() const { return engine_; }

  // Waiters given to the engine and not yet ended: the gateway does not
  // go before they have.
  void WaiterStarted() {
    absl::MutexLock lock(&mu_);
    ++waiters_;
  }
  void WaiterEnded() {
    absl::MutexLock lock(&mu_);
    --waiters_;
  }

  // Connections per client address; false when `address` has its share.
  bool Admit(const std::string& address) {
    absl::MutexLock lock(&mu_);
    int& n = per_client_[address];
    if (n >= options_.max_connections_per_client) return false;
    ++n;
    return true;
  }
  void Leave(const std::string& address) {
    absl::MutexLock lock(&mu_);
    auto it = per_client_.find(address);
    if (it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
  }
  void Register(const std::shared_ptr<Session>& s);

  // The rendered answer for `r` asked as `searched`, if kept.
  std::shared_ptr<const Rendered> FindRendered(const engine::DecodeResult& r,
                                               absl::string_view searched) {
    if (r.encoded == nullptr) return nullptr;
    absl::MutexLock lock(&render_mu_);
    auto it = rendered_.find(r.encoded.get());
    if (it == rendered_.end() || it->second->searched != searched) return nullptr;
    return it->second;
  }
  void KeepRendered(std::shared_ptr<const Rendered> r) {
    if (r->encoded == nullptr) return;
    absl::MutexLock lock(&render_mu_);
    if (rendered_.size() >= kRenderedMax) rendered_.clear();  // bounded, simply
    rendered_[r->encoded.get()] = std::move(r);
  }
  void Unregister(Session* s) {
    absl::MutexLock lock(&mu_);
    sessions_.erase(s);
  }

 private:
  void Accept();

  const GatewayOptions options_;
  engine::Engine* const engine_;
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  bool stopped_ = false;

  absl::Mutex mu_;
  int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> per_client_ ABSL_GUARDED_BY(mu_);
  std::map<Session*, std::weak_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);

  static constexpr size_t kRenderedMax = 4096;
  absl::Mutex render_mu_;
  std::map<const std::string*, std::shared_ptr<const Rendered>> rendered_
      ABSL_GUARDED_BY(render_mu_);
};

namespace {

// One engine waiter of a request: relays its terminal event to the session's
// strand, then deletes itself (the engine never touches it afterwards).
class Waiter final : public engine::DecodeListener {
 public:
  Waiter(std::shared_ptr<Gateway::Impl> gateway, std::weak_ptr<Session> session,
         uint64_t request, size_t index)
      : gateway_(std::move(gateway)),
        session_(std::move(session)),
        request_(request),
        index_(index) {
    gateway_->WaiterStarted();
  }

  void OnQueued(const engine::Queued&) override {}
  void OnRetrying(const engine::Retrying&) override {}
  void OnDone(std::shared_ptr<const engine::DecodeResult> result) override {
    Outcome o;
    o.done = true;
    o.answer = std::move(result);
    Finish(std::move(o));
  }
  void OnFailed(const engine::Failure& failure) override {
    Outcome o;
    o.failure = failure;
    Finish(std::move(o));
  }

  // Also for a submission the engine refused (no event then comes).
  void Finish(Outcome o);

 private:
  std::shared_ptr<Gateway::Impl> gateway_;
  std::weak_ptr<Session> session_;
  const uint64_t request_;
  const size_t index_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<Gateway::Impl> gateway, tcp::socket socket,
          std::string client)
      : gateway_(std::move(gateway)),
        stream_(std::move(socket)),
        timer_(stream_.get_executor()),
        client_(std::move(client)) {}

  ~Session() {
    if (counted_) gateway_->Leave(client_);
    gateway_->Unregister(this);
  }

  net::any_io_executor Executor() { return stream_.get_executor(); }

  void Start() {
    net::dispatch(stream_.get_executor(),
                  [self = shared_from_this()] { self->ReadHead(); });
  }

  // From any thread: the connection ends now (the gateway stops).
  void Close() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      self->CancelWaiters();
      beast::error_code ec;
      self->stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
      self->stream_.close();
    });
  }

  // A waiter of request `request` ended (on the strand).
  void OnOutcome(uint64_t request, size_t index, Outcome o) {
    if (request != request_seq_ || index >= outcomes_.size()) return;
    ids_[index] = 0;
    answered_[index] = true;
    outcomes_[index] = std::move(o);
    if (--pending_ > 0) return;
    const std::shared_ptr<Session> keep = std::move(hold_);
    Respond();
  }

  // Refuses a connection over its client's share, then closes.
  void RefuseBusy() {
    auto res = std::make_shared<Response>(bhttp::status::too_many_requests, 11);
    res->set(bhttp::field::content_type, "application/json");
    res->set(bhttp::field::retry_after, "1");
    res->keep_alive(false);
    res->body() = ErrorBody(429, "TOO_MANY_CONNECTIONS",
                            absl::StrCat("too many connections from ", client_,
                                         " (at most ",
                                         gateway_->options().max_connections_per_client,
                                         ")"));
    res->prepare_payload();
    counted_ = false;
    Write(std::move(res));
  }
  void set_counted(bool counted) { counted_ = counted; }

 private:
  enum class Mode { kValues, kBatch, kDecode };

  const GatewayOptions& options() const { return gateway_->options(); }

  void ReadHead() {
    if (closing_) return;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(options().header_limit));
    parser_->body_limit(options().body_limit);
    StartTimer(options().head_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) {
          self->OnHead(ec);
        });
  }

  // A read failed: answer what can be answered, else just close.
  // The head (or body) must arrive within `limit`: past it the read is
  // cancelled and answered 408. (tcp_stream's own expiry would close the
  // socket before a 408 could be written.)
  void StartTimer(absl::Duration limit) {
    timed_out_ = false;
    timer_.expires_after(std::chrono::nanoseconds(absl::ToInt64Nanoseconds(limit)));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;  // cancelled: the read finished first
      self->timed_out_ = true;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
  }

  void ReadFailed(beast::error_code ec, bool head) {
    timer_.cancel();
    if (timed_out_) ec = beast::error::timeout;
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::operation_aborted || closing_) {
      return Shutdown();
    }
    if (ec == beast::error::timeout) {
      return Fail(408, "REQUEST_TIMEOUT",
                  head ? absl::StrCat("the request head did not arrive within ",
                                      absl::FormatDuration(options().head_timeout))
                       : absl::StrCat("the request body did not arrive within ",
                                      absl::FormatDuration(options().body_timeout)),
                  /*close=*/true);
    }
    if (ec == bhttp::error::header_limit) {
      return Fail(431, "HEADERS_TOO_LARGE",
                  absl::StrCat("the request head is larger than ",
                               options().header_limit, " bytes"),
                  true);
    }
    if (ec == bhttp::error::body_limit) {
      return Fail(413, "BODY_TOO_LARGE",
                  absl::StrCat("the request body is larger than ",
                               options().body_limit, " bytes"),
                  true);
    }
    if (ec == net::error::connection_reset || ec == net::error::broken_pipe) {
      return Shutdown();
    }
    Fail(400, "BAD_REQUEST",
         absl::StrCat("not an HTTP/1.1 request: ", ec.message()), true);
  }

  void OnHead(beast::error_code ec) {
    if (ec) return ReadFailed(ec, true);
    timer_.cancel();
    const auto& head = parser_->get();
    version_ = head.version();
    keep_alive_ = head.keep_alive();
    head_only_ = head.method() == bhttp::verb::head;
    origin_.clear();
    if (auto o = head.find(bhttp::field::origin); o != head.end()) {
      origin_ = std::string(o->value());
    }
    if (head.method() == bhttp::verb::options) return Preflight(head);
    route_ = RouteOf(std::string(head.method_string()), std::string(head.target()));
    if (route_.kind == Route::Kind::kError) {
      // Nothing of the body is read: the connection cannot go on.
      return Fail(route_.status, route_.status == 405 ? "METHOD_NOT_ALLOWED"
                                 : route_.status == 404 ? "NOT_FOUND"
                                                        : "BAD_REQUEST",
                  route_.message, !parser_->is_done());
    }
    if (parser_->is_done()) return Handle();
    StartTimer(options().body_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->ReadFailed(ec, false);
                        self->timer_.cancel();
                        self->Handle();
                      });
  }

  // CORS: whether the request's Origin may read the answer.
  bool OriginAllowed() const {
    if (origin_.empty()) return false;
    for (const std::string& o : options().cors_origins) {
      if (o == "*" || o == origin_) return true;
    }
    return false;
  }
  void AddCors(Response* res) const {
    if (!OriginAllowed()) return;
    res->set(bhttp::field::access_control_allow_origin, origin_);
    res->set(bhttp::field::vary, "Origin");
    res->set(bhttp::field::access_control_expose_headers,
             "X-Vin-Source, X-Vin-Stale, X-Vin-Note, Retry-After, ETag");
  }

  // An OPTIONS request: a CORS preflight (its body, if any, is not read).
  template <typename Head>
  void Preflight(const Head& head) {
    keep_alive_ = keep_alive_ && parser_->is_done();
    if (!OriginAllowed()) {
      return Fail(403, "CORS_ORIGIN_NOT_ALLOWED",
                  origin_.empty()
                      ? "OPTIONS is answered for CORS preflights only (no Origin)"
                      : absl::StrCat("origin ", origin_,
                                     " is not among --http_cors_origins"),
                  !parser_->is_done());
    }
    auto res = MakeResponse(204);
    res->set(bhttp::field::access_control_allow_methods, "GET, HEAD, POST, OPTIONS");
    std::string asked;
    if (auto h = head.find(bhttp::field::access_control_request_headers);
        h != head.end()) {
      asked = std::string(h->value());
    }
    res->set(bhttp::field::access_control_allow_headers,
             asked.empty() ? "Content-Type, X-Request-Timeout, If-None-Match"
                           : HeaderSafe(asked));
    res->set(bhttp::field::access_control_max_age, "600");
    Send(std::move(res));
  }

  void Handle() {
    stream_.expires_never();
    request_ = parser_->release();
    absl::Duration timeout = options().deadline;
    if (auto t = request_.find("X-Request-Timeout"); t != request_.end()) {
      absl::Duration asked;
      if (!ParseTimeout(std::string(t->value()), &asked)) {
        return Fail(400, "BAD_REQUEST",
                    "X-Request-Timeout must be seconds (\"2.5\") or a duration "
                    "(\"500ms\")",
                    false);
      }
      timeout = std::min(timeout, asked);
    }
    switch (route_.kind) {
      case Route::Kind::kVpicValues: {
        engine::DecodeRequest r;
        r.vin = route_.vin;
        r.model_year = route_.model_year;
        r.timeout = timeout;
        mode_ = Mode::kValues;
        return Submit({r});
      }
      case Route::Kind::kVpicBatch: {
        auto entries = ParseBatchForm(request_.body(), std::string(request_.target()),
                                      kMaxBatchVins);
        if (!entries.ok()) {
          return Fail(400, "BAD_REQUEST", entries.status().message(), false);
        }
        // Every VIN is checked before any is sent: an invalid one refuses
        // the whole batch, and nothing reaches vPIC.
        std::vector<engine::DecodeRequest> requests;
        for (size_t i = 0; i < entries->size(); ++i) {
          const BatchEntry& e = (*entries)[i];
          auto valid = vin::Validate(e.vin, vin::CheckDigitPolicy::kEnforce);
          if (!valid.ok()) {
            return Fail(400, "INVALID_VIN",
                        absl::StrCat("VIN ", i + 1, " (",
                                     e.vin.size() > 64 ? e.vin.substr(0, 64) : e.vin,
                                     "): ", valid.status().message()),
                        false);
          }
          engine::DecodeRequest r;
          r.vin = e.vin;
          r.model_year = e.model_year;
          r.timeout = timeout;
          requests.push_back(std::move(r));
        }
        mode_ = Mode::kBatch;
        return Submit(std::move(requests));
      }
      case Route::Kind::kDecode: {
        vin::v1::DecodeRequest req;
        google::protobuf::util::JsonParseOptions opts;
        const auto st = google::protobuf::util::JsonStringToMessage(
            request_.body(), &req, opts);
        if (!st.ok()) {
          return FailGrpc(grpc::Status(
              grpc::StatusCode::INVALID_ARGUMENT,
              absl::StrCat("the body is not a vin.v1.DecodeRequest in JSON: ",
                           std::string(st.message()))));
        }
        engine::DecodeRequest r =
            FromProto(req.vin(), req.model_year(), req.check_digit_policy(),
                      req.source_preference());
        r.timeout = timeout;
        mode_ = Mode::kDecode;
        return Submit({r});
      }
      case Route::Kind::kVpicVariables:
        return Fail(501, "NOT_IMPLEMENTED",
                    "DecodeVin's Variable/Value list is not served yet; "
                    "DecodeVinValues gives the same decode",
                    false);
      case Route::Kind::kDecodeBatch:
        return Fail(501, "NOT_IMPLEMENTED",
                    "/v1/decode:batch is not served yet; use /v1/decode or "
                    "the gRPC DecodeBatch",
                    false);
      case Route::Kind::kError:
        break;
    }
    Fail(500, "INTERNAL", "no handler", true);
  }

  void Submit(std::vector<engine::DecodeRequest> requests) {
    ++request_seq_;
    outcomes_.assign(requests.size(), Outcome{});
    ids_.assign(requests.size(), 0);
    answered_.assign(requests.size(), false);
    pending_ = requests.size();
    // Nothing of the connection's I/O is pending while the engine works:
    // the session keeps itself until the answer.
    hold_ = shared_from_this();
    const uint64_t seq = request_seq_;
    for (size_t i = 0; i < requests.size(); ++i) {
      auto* w = new Waiter(gateway_, weak_from_this(), seq, i);
      const engine::Admission a = gateway_->engine()->Submit(requests[i], w);
      if (!a.ok()) {
        w->Finish(Outcome{false, {}, a.failure()});
      } else if (!answered_[i]) {
        ids_[i] = a.id();  // (a cache hit was answered inside Submit)
      }
    }
  }

  void CancelWaiters() {
    for (uint64_t& id : ids_) {
      if (id != 0) gateway_->engine()->Cancel(id);
      id = 0;
    }
  }

  void Respond() {
    switch (mode_) {
      case Mode::kValues:
        return RespondVpic();
      case Mode::kBatch:
        return RespondVpic();
      case Mode::kDecode:
        return RespondDecode();
    }
  }

  // vPIC's paths: the answer in vPIC's shape, or the first failure.
  void RespondVpic() {
    if (mode_ == Mode::kValues && outcomes_[0].done) {
      return RespondValues(outcomes_[0].answer);
    }
    std::vector<vin::v1::DecodeResult> results;
    for (size_t i = 0; i < outcomes_.size(); ++i) {
      Outcome& o = outcomes_[i];
      if (!o.done) {
        const engine::Failure& f = o.failure;
        const int status = HttpStatusOf(f.reason);
        std::string message = f.message;
        if (outcomes_.size() > 1) {
          message = absl::StrCat("VIN ", i + 1, ": ", message);
        }
        auto res = MakeResponse(status);
        res->set(bhttp::field::content_type, "application/json; charset=utf-8");
        res->set(bhttp::field::cache_control, "no-store");
        // When to come back (at least a second, also when the engine
        // suggests no delay).
        if (status == 503 || status == 429) {
          res->set(bhttp::field::retry_after, RetryAfterOf(f.retry_delay));
        }
        res->body() =
            ErrorBody(status, absl::AsciiStrToUpper(domain::TraitsOf(f.reason).label),
                      message, f.retryable, f.retry_delay);
        return Send(std::move(res));
      }
      results.emplace_back();
      ToProto(*o.answer, &results.back());
    }
    std::string body, etag;
    if (mode_ == Mode::kValues) {
      body = VpicValuesAnswer(results[0], route_.vin);
    } else {
      body = VpicBatchAnswer(results);
    }
    etag = ETagOf(body);
    SendVpic(results, body, etag);
  }

  // A single decode's answer: rendered once per cached result.
  void RespondValues(const std::shared_ptr<const engine::DecodeResult>& answer) {
    std::shared_ptr<const Rendered> r = gateway_->FindRendered(*answer, route_.vin);
    if (r == nullptr) {
      auto fresh = std::make_shared<Rendered>();
      fresh->encoded = answer->encoded;
      fresh->searched = route_.vin;
      ToProto(*answer, &fresh->result);
      fresh->body = VpicValuesAnswer(fresh->result, route_.vin);
      fresh->etag = ETagOf(fresh->body);
      if (answer->source == engine::Source::kCache) gateway_->KeepRendered(fresh);
      r = std::move(fresh);
    }
    SendVpic({r->result}, r->body, r->etag);
  }

  void SendVpic(const std::vector<vin::v1::DecodeResult>& results,
                const std::string& body, const std::string& etag) {
    auto res = MakeResponse(200);
    res->set(bhttp::field::content_type, "application/json; charset=utf-8");
    Provenance(results, res.get());
    res->set(bhttp::field::etag, etag);
    if (auto inm = request_.find(bhttp::field::if_none_match);
        inm != request_.end() && Matches(std::string(inm->value()), etag)) {
      res->result(bhttp::status::not_modified);
      return Send(std::move(res));
    }
    res->body() = body;
    Send(std::move(res));
  }

  static bool Matches(const std::string& header, const std::string& etag) {
    for (absl::string_view tag : absl::StrSplit(header, ',')) {
      tag = absl::StripAsciiWhitespace(tag);
      if (tag == "*" || tag == etag || tag == absl::StrCat("W/", etag)) return true;
    }
    return false;
  }

  // Where the answer came from, in headers (never in vPIC's fields), and
  // how long browsers and proxies may keep it.
  void Provenance(const std::vector<vin::v1::DecodeResult>& results,
                  Response* res) const {
    std::vector<std::string> sources;
    bool stale = false, snapshot = false;
    absl::Time oldest = absl::InfiniteFuture();
    for (const auto& r : results) {
      sources.push_back(SourceName(r.source()));
      snapshot |= r.source() == vin::v1::SOURCE_SNAPSHOT;
      oldest = std::min(oldest, absl::FromUnixSeconds(r.decode_time().seconds()) +
                                    absl::Nanoseconds(r.decode_time().nanos()));
      for (const auto& n : r.notes()) {
        stale |= n.code() == "stale";
        res->insert("X-Vin-Note", HeaderSafe(absl::StrCat(n.code(), ": ", n.message())));
      }
    }
    res->set("X-Vin-Source", absl::StrJoin(sources, ","));
    if (stale) res->set("X-Vin-Stale", "true");
    if (stale || snapshot) {
      res->set(bhttp::field::cache_control, "no-cache");
    } else {
      const absl::Duration left = options().cache_ttl - (absl::Now() - oldest);
      res->set(bhttp::field::cache_control,
               absl::StrCat("max-age=",
                            std::max<int64_t>(0, absl::ToInt64Seconds(left))));
    }
  }

  // Our API: a DecodeResponse, or a google.rpc.Status.
  void RespondDecode() {
    Outcome& o = outcomes_[0];
    if (!o.done) return FailGrpc(ToGrpcStatus(o.failure), o.failure.retry_delay);
    vin::v1::DecodeResponse out;
    ToProto(*o.answer, out.mutable_result());
    std::string json;
    google::protobuf::util::JsonPrintOptions opts;
    (void)google::protobuf::util::MessageToJsonString(out, &json, opts);
    auto res = MakeResponse(200);
    res->set(bhttp::field::content_type, "application/json");
    res->set(bhttp::field::cache_control, "no-store");
    res->body() = std::move(json);
    Send(std::move(res));
  }

  void FailGrpc(const grpc::Status& s,
                absl::Duration retry_delay = absl::ZeroDuration()) {
    google::rpc::Status st;
    if (!s.error_details().empty() && st.ParseFromString(s.error_details())) {
      // RetryInfo and the rest, as the gRPC call would carry them.
    } else {
      st.set_code(static_cast<int>(s.error_code()));
      st.set_message(s.error_message());
    }
    std::string json;
    google::protobuf::util::JsonPrintOptions opts;
    (void)google::protobuf::util::MessageToJsonString(st, &json, opts);
    const int status = HttpStatusOf(s.error_code());
    auto res = MakeResponse(status);
    res->set(bhttp::field::content_type, "application/json");
    res->set(bhttp::field::cache_control, "no-store");
    if (status == 503 || status == 429) {
      res->set(bhttp::field::retry_after, RetryAfterOf(retry_delay));
    }
    res->body() = std::move(json);
    Send(std::move(res));
  }

  // A 4xx/5xx decided by the gateway itself; `close` when the connection
  // cannot go on (the rest of the request is unread).
  void Fail(int status, absl::string_view reason, absl::string_view message,
            bool close) {
    if (close) keep_alive_ = false;
    auto res = MakeResponse(status);
    res->set(bhttp::field::content_type, "application/json; charset=utf-8");
    res->set(bhttp::field::cache_control, "no-store");
    res->body() = ErrorBody(status, reason, message);
    Send(std::move(res));
  }

  std::shared_ptr<Response> MakeResponse(int status) {
    auto res = std::make_shared<Response>(static_cast<bhttp::status>(status),
                                          version_ == 0 ? 11 : version_);
    res->set(bhttp::field::server, "vin-decode-service");
    return res;
  }

  void Send(std::shared_ptr<Response> res) {
    res->keep_alive(keep_alive_);
    AddCors(res.get());
    if (res->result() == bhttp::status::not_modified) res->body().clear();
    res->prepare_payload();
    // HEAD: the length of the body a GET would get, and no body.
    if (head_only_) res->body().clear();
    Write(std::move(res));
  }

  void Write(std::shared_ptr<Response> res) {
    if (closing_) return;
    stream_.expires_after(std::chrono::nanoseconds(
        absl::ToInt64Nanoseconds(options().body_timeout)));
    bhttp::async_write(
        stream_, *res,
        [self = shared_from_this(), res](beast::error_code ec, size_t) {
          if (ec || !res->keep_alive()) return self->Shutdown();
          self->ReadHead();
        });
  }

  void Shutdown() {
    CancelWaiters();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  std::shared_ptr<Gateway::Impl> gateway_;
  beast::tcp_stream stream_;
  net::steady_timer timer_;
  bool timed_out_ = false;
  const std::string client_;
  beast::flat_buffer buffer_;
  boost::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  Request request_;
  Route route_;
  std::string origin_;  // the request's Origin header, "" when none
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool head_only_ = false;
  bool closing_ = false;
  bool counted_ = true;
  Mode mode_ = Mode::kValues;
  uint64_t request_seq_ = 0;
  std::vector<Outcome> outcomes_;
  std::vector<uint64_t> ids_;
  std::vector<bool> answered_;
  size_t pending_ = 0;
  std::shared_ptr<Session> hold_;  // while waiters are out
};

void Waiter::Finish(Outcome o) {
  if (auto s = session_.lock()) {
    // Inline when this is the session's strand (a cache hit answered
    // inside Submit), else queued on it.
    net::dispatch(s->Executor(), [s, request = request_, index = index_,
                                  o = std::move(o)]() mutable {
      s->OnOutcome(request, index, std::move(o));
    });
  }
  auto gateway = std::move(gateway_);
  delete this;
  gateway->WaiterEnded();
}

}  // namespace

// ---------------------------------------------------------------------------

absl::Status Gateway::Impl::Listen() {
  const size_t colon = options_.listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(options_.listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_listen must be host:port, got \"", options_.listen, "\""));
  }
  std::string host = options_.listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  beast::error_code ec;
  const auto address = net::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_listen: \"", host, "\" is not an IP address: ", ec.message()));
  }
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for HTTP on ", options_.listen, ": ", ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  return absl::OkStatus();
}

void Gateway::Impl::Run() {
  Accept();
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] { ioc_.run(); });
  }
}

void Gateway::Impl::Accept() {
  acceptor_.async_accept(
      net::make_strand(ioc_),
      [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
        if (ec) {
          if (ec == net::error::operation_aborted) return;
          return self->Accept();
        }
        beast::error_code peer_ec;
        const auto peer = socket.remote_endpoint(peer_ec);
        const std::string client = peer_ec ? "unknown" : peer.address().to_string();
        const bool admitted = self->Admit(client);
        auto session = std::make_shared<Session>(self, std::move(socket), client);
        if (!admitted) {
          session->set_counted(false);
          net::dispatch(session->Executor(), [session] { session->RefuseBusy(); });
        } else {
          self->Register(session);
          session->Start();
        }
        self->Accept();
      });
}

void Gateway::Impl::Register(const std::shared_ptr<Session>& s) {
  absl::MutexLock lock(&mu_);
  sessions_[s.get()] = s;
}

void Gateway::Impl::Stop() {
  if (stopped_) return;
  stopped_ = true;
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
  });
  std::vector<std::shared_ptr<Session>> live;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [p, w] : sessions_) {
      if (auto s = w.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Close();
  live.clear();
  // Every waiter given to the engine ends (cancelled by its session's
  // close, or answered) before the loop goes.
  {
    absl::MutexLock lock(&mu_);
    auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return waiters_ == 0; };
    mu_.AwaitWithTimeout(absl::Condition(&none), absl::Seconds(30));
  }
  ioc_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Gateway>> Gateway::Start(GatewayOptions options,
                                                        engine::Engine* engine) {
  auto impl = std::make_shared<Impl>(std::move(options), engine);
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  impl->Run();
  return std::unique_ptr<Gateway>(new Gateway(std::move(impl)));
}

Gateway::Gateway(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Gateway::~Gateway() { Shutdown(); }

int Gateway::port() const { return impl_->port(); }

void Gateway::Shutdown() { impl_->Stop(); }

}  // namespace http
}  // namespace server
