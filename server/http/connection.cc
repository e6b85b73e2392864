// Connection (connection.h): its start and close, reading a request's head
// and body within the limits (header_limit, the route's body limit, the
// head and body timers; 408, 431, 413 and 400 when a read fails), the
// head's checks (framing, Host, Origin: 400, 421, 403), the request's
// deadline and tenant, CORS (the Origin, the preflight), "Expect:
// 100-continue", the route's exchange started, and writing an answer
// (keep-alive, HEAD).
#include "server/http/connection.h"

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/http/exchange.h"
#include "server/http/http_status.h"
#include "server/http/request_checks.h"

namespace server {
namespace http {
namespace internal {

Connection::Connection(Gateway::Impl* gateway, tcp::socket socket,
                       std::string client,
                       std::shared_ptr<net::ssl::context> tls)
    : gateway_(gateway),
      stream_(std::move(socket), std::move(tls)),
      timer_(stream_.get_executor()),
      client_(std::move(client)) {}

Connection::~Connection() {
  if (counted_) gateway_->Leave(client_);
  gateway_->Unregister(this);
}

void Connection::Start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    if (self->stream_.tls()) return self->Handshake();
    self->ReadHead();
  });
}

void Connection::Close() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->closing_ = true;
    self->CancelExchange();
    self->CancelTimer();
    // (It held itself for its waiters, now cancelled: it goes with this
    // handler's reference, also when no answer comes to release it.)
    const std::shared_ptr<Connection> keep = std::move(self->hold_);
    beast::error_code ec;
    self->stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    self->stream_.tcp().close();
  });
}

void Connection::RefuseBusy() {
  auto res = std::make_shared<Response>(bhttp::status::too_many_requests, 11);
  res->set(bhttp::field::content_type, "application/json");
  res->set(bhttp::field::retry_after, "1");
  res->keep_alive(false);
  res->body() = ErrorBody(
      429, domain::ErrorReason::kTooManyConnections,
      absl::StrCat("too many connections from ", client_, " (at most ",
                   gateway_->options().max_connections_per_client, ")"));
  res->prepare_payload();
  counted_ = false;
  Write(std::move(res));
}

void Connection::ReadHead() {
  if (closing_) return;
  // Nothing of the last request's answer applies to the next one (an
  // error answered before its head is read carries its body, also after
  // a HEAD).
  head_only_ = false;
  api_ = false;
  request_start_ = absl::InfinitePast();
  route_label_ = "none";
  parser_.reset();
  head_parser_.emplace();
  head_parser_->header_limit(
      static_cast<std::uint32_t>(options().header_limit));
  // The route decides the body's limit (CheckHead and ReadBody): the
  // head's Content-Length is not judged before the route is known.
  // (Not boost::none: Boost 1.74 compares a Content-Length with an empty
  // optional as larger than any limit.)
  head_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  StartTimer(options().head_timeout);
  bhttp::async_read_header(
      stream_, buffer_, *head_parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->OnHead(ec);
      });
}

void Connection::StartTimer(absl::Duration limit) {
  timed_out_ = false;
  deadline_ = net::steady_timer::clock_type::now() +
              std::chrono::nanoseconds(absl::ToInt64Nanoseconds(limit));
  // A wait that ends before the deadline waits again then.
  if (timer_waiting_ && timer_.expiry() <= deadline_) return;
  ArmTimer(deadline_);
}

void Connection::ArmTimer(net::steady_timer::time_point at) {
  timer_waiting_ = true;
  timer_.expires_at(at);  // (a pending wait ends operation_aborted)
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;  // moved (ArmTimer again) or cancelled (CancelTimer)
    self->timer_waiting_ = false;
    if (self->deadline_ == net::steady_timer::time_point::max()) return;
    if (net::steady_timer::clock_type::now() < self->deadline_) {
      return self->ArmTimer(self->deadline_);
    }
    self->timed_out_ = true;
    beast::error_code ignored;
    self->stream_.socket().cancel(ignored);
  });
}

void Connection::StopTimer() {
  deadline_ = net::steady_timer::time_point::max();
}

void Connection::CancelTimer() {
  StopTimer();
  timer_waiting_ = false;
  timer_.cancel();
}

void Connection::ReadFailed(beast::error_code ec, bool head) {
  CancelTimer();
  if (timed_out_) ec = beast::error::timeout;
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::operation_aborted || closing_) {
    return Shutdown();
  }
  if (ec == beast::error::timeout) {
    return Fail(
        408, domain::ErrorReason::kRequestTimeout,
        head ? absl::StrCat("the request head did not arrive within ",
                            absl::FormatDuration(options().head_timeout))
             : absl::StrCat("the request body did not arrive within ",
                            absl::FormatDuration(options().body_timeout)),
        /*close=*/true);
  }
  if (ec == bhttp::error::header_limit) {
    return Fail(431, domain::ErrorReason::kHeadersTooLarge,
                absl::StrCat("the request head is larger than ",
                             options().header_limit, " bytes"),
                true);
  }
  if (ec == bhttp::error::body_limit) {
    return Fail(413, domain::ErrorReason::kBodyTooLarge,
                absl::StrCat("the request body is larger than ",
                             route_.body_limit, " bytes, this path's limit"),
                true);
  }
  if (ec == net::error::connection_reset || ec == net::error::broken_pipe) {
    return Shutdown();
  }
  Fail(400, domain::ErrorReason::kMalformedRequest,
       absl::StrCat("not an HTTP/1.1 request: ", ec.message()), true);
}

bool Connection::CheckHead(const bhttp::request_header<>& head) {
  // Framing: one way to tell where the body ends, or the connection
  // closes (Boost's parser would take "identity" and a Content-Length,
  // or "chunked, identity" without a body, and read the rest as another
  // request).
  std::vector<absl::string_view> te;
  for (auto [it, end] = head.equal_range(bhttp::field::transfer_encoding);
       it != end; ++it) {
    te.emplace_back(it->value().data(), it->value().size());
  }
  const size_t lengths = head.count(bhttp::field::content_length);
  if (const std::string p = FramingProblem(head.version(), te, lengths);
      !p.empty()) {
    Fail(400, domain::ErrorReason::kMalformedRequest, p, /*close=*/true);
    return false;
  }
  const bool body_unread = !head_parser_->is_done();
  absl::string_view host;
  if (auto h = head.find(bhttp::field::host); h != head.end()) {
    host = absl::string_view(h->value().data(), h->value().size());
  }
  if (host.empty() && head.version() >= 11) {
    Fail(400, domain::ErrorReason::kMalformedRequest,
         "an HTTP/1.1 request needs a Host header", true);
    return false;
  }
  // RFC 9112 3.2: more than one Host is 400 (a proxy that routes on
  // another of them than we check would disagree with us).
  if (head.count(bhttp::field::host) > 1) {
    Fail(400, domain::ErrorReason::kMalformedRequest,
         "a request has one Host header, this has several", true);
    return false;
  }
  const AllowedHosts& hosts = gateway_->allowed_hosts();
  if (!hosts.Allows(host)) {
    Fail(421, domain::ErrorReason::kMisdirectedRequest,
         absl::StrCat("host ", HeaderSafe(HostName(host)),
                      " is not served here (allowed: ", hosts.description(),
                      "; --http_allowed_hosts)"),
         body_unread);
    return false;
  }
  // A page of another site may not make this gateway work (a browser
  // sends Origin with every cross-site POST, whatever its content type);
  // clients that are no browser send none.
  if (!origin_.empty() && head.method() != bhttp::verb::options &&
      !OriginAllowed() &&
      !SameOrigin(origin_, stream_.tls() ? "https" : "http", host)) {
    Fail(403, domain::ErrorReason::kForbiddenOrigin,
         absl::StrCat("origin ", HeaderSafe(origin_),
                      " may not call this gateway (neither its own nor among "
                      "--http_cors_origins)"),
         body_unread);
    return false;
  }
  return true;
}

bool Connection::Prepare(const bhttp::request_header<>& head) {
  timeout_ = options().deadline;
  if (auto t = head.find("X-Request-Timeout"); t != head.end()) {
    absl::Duration asked;
    if (!ParseTimeout(std::string(t->value()), &asked)) {
      Fail(400, domain::ErrorReason::kMalformedRequest,
           "X-Request-Timeout must be seconds (\"2.5\") or a duration "
           "(\"500ms\")",
           !head_parser_->is_done());
      return false;
    }
    timeout_ = std::min(timeout_, asked);
  }
  // Rules 17 and 19: who asks (the client certificate's subject under
  // mutual TLS; else the tenant header, from a trusted proxy only: its
  // last value). How urgent is the exchange's to say.
  std::vector<absl::string_view> values;
  for (auto [it, end] = head.equal_range(options().tenants.header); it != end;
       ++it) {
    values.emplace_back(it->value().data(), it->value().size());
  }
  tenant_ = options().tenants.Resolve(peer_subject_, client_, values);
  return true;
}

void Connection::OnHead(beast::error_code ec) {
  if (ec) return ReadFailed(ec, true);
  StopTimer();
  const auto& head = head_parser_->get();
  request_start_ = absl::Now();
  version_ = head.version();
  keep_alive_ = head.keep_alive();
  head_only_ = head.method() == bhttp::verb::head;
  api_ = absl::StartsWithIgnoreCase(
      absl::string_view(head.target().data(), head.target().size()), "/v1/");
  origin_.clear();
  if (auto o = head.find(bhttp::field::origin); o != head.end()) {
    origin_ = std::string(o->value());
  }
  auto expect = head.find(bhttp::field::expect);
  expect_continue_ =
      version_ >= 11 && expect != head.end() &&
      absl::EqualsIgnoreCase(
          absl::string_view(expect->value().data(), expect->value().size()),
          "100-continue");
  if (!CheckHead(head)) return;
  if (head.method() == bhttp::verb::options) {
    route_label_ = "preflight";
    return Preflight(head);
  }
  route_ = options().metrics ? MetricsRouteOf(std::string(head.method_string()),
                                              std::string(head.target()))
                             : RouteOf(std::string(head.method_string()),
                                       std::string(head.target()));
  route_label_ = RouteLabel(route_.kind);
  if (route_.kind == Route::Kind::kError) {
    // Nothing of the body is read: the connection cannot go on.
    return Fail(route_.status,
                route_.status == 405   ? domain::ErrorReason::kMethodNotAllowed
                : route_.status == 404 ? domain::ErrorReason::kNotFound
                                       : domain::ErrorReason::kMalformedRequest,
                route_.message, !head_parser_->is_done());
  }
  route_.body_limit =
      route_.kind == Route::Kind::kDecode      ? options().decode_body_limit
      : route_.kind == Route::Kind::kJobCreate ? options().job_body_limit
                                               : options().body_limit;
  if (!Prepare(head)) return;
  exchange_ = MakeExchange(route_, this, ++exchange_seq_);
  if (exchange_->StreamsBody()) return exchange_->Start();
  // A body announced larger than the route takes is refused before a
  // byte of it is read.
  if (auto length = head_parser_->content_length();
      length && *length > route_.body_limit) {
    return Fail(
        413, domain::ErrorReason::kBodyTooLarge,
        absl::StrCat("the request body is ", *length,
                     " bytes, over this path's limit of ", route_.body_limit),
        true);
  }
  ReadBody();
}

void Connection::Continue(std::function<void()> then) {
  if (!expect_continue_) return then();
  static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  net::async_write(stream_, net::buffer(kContinue),
                   [self = shared_from_this(), then = std::move(then)](
                       beast::error_code ec, size_t) {
                     if (ec) return self->Shutdown();
                     then();
                   });
}

void Connection::ReadBody() {
  parser_.emplace(std::move(*head_parser_));
  head_parser_.reset();
  parser_->body_limit(route_.body_limit);
  auto read = [this] {
    stream_.tcp().expires_never();
    request_ = parser_->release();
    parser_.reset();
    exchange_->Start();
  };
  if (parser_->is_done()) return read();
  Continue([self = shared_from_this(), read] {
    self->StartTimer(self->options().body_timeout);
    bhttp::async_read(self->stream_, self->buffer_, *self->parser_,
                      [self, read](beast::error_code ec, size_t) {
                        if (ec) return self->ReadFailed(ec, false);
                        self->StopTimer();
                        read();
                      });
  });
}

void Connection::TakeHeadParser(boost::optional<StreamParser>* out) {
  out->emplace(std::move(*head_parser_));
  head_parser_.reset();
}

std::shared_ptr<Response> Connection::MakeResponse(int status) {
  auto res = std::make_shared<Response>(static_cast<bhttp::status>(status),
                                        version_ == 0 ? 11 : version_);
  res->set(bhttp::field::server, "vin-decode-service");
  // RFC 9110 15.5.6: a 405 says which methods the path takes.
  if (status == 405 && !route_.allow.empty()) {
    res->set(bhttp::field::allow, route_.allow);
  }
  return res;
}

void Connection::Send(std::shared_ptr<Response> res) {
  res->keep_alive(keep_alive_);
  AddCors(res.get());
  if (res->result() == bhttp::status::not_modified) res->body().clear();
  res->prepare_payload();
  // HEAD: the length of the body a GET would get, and no body.
  if (head_only_) res->body().clear();
  Write(std::move(res));
}

void Connection::CountRequest(int code) {
  gateway_->counters().requests.Observe(route_label_, code,
                                        request_start_ == absl::InfinitePast()
                                            ? absl::ZeroDuration()
                                            : absl::Now() - request_start_);
}

void Connection::Write(std::shared_ptr<Response> res) {
  if (closing_) return;
  CountRequest(res->result_int());
  StartTimer(options().body_timeout);  // (a write that stalls is cancelled)
  bhttp::async_write(
      stream_, *res,
      [self = shared_from_this(), res](beast::error_code ec, size_t) {
        if (ec || !res->keep_alive()) return self->Shutdown();
        self->ReadHead();
      });
}

void Connection::Shutdown() {
  CancelExchange();
  CancelTimer();
  if (stream_.tls()) return CloseTls();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
}

void Connection::CloseSocket() {
  CancelTimer();
  stream_.tcp().expires_never();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.tcp().close();
}

void Connection::CancelExchange() {
  if (exchange_ != nullptr) exchange_->Cancel();
}

void Connection::OnOutcome(uint64_t exchange, size_t index, Outcome o) {
  if (exchange_ == nullptr || exchange != exchange_seq_) return;
  exchange_->OnOutcome(index, std::move(o));
}

void Connection::OnStreamEvent(uint64_t exchange, size_t index,
                               vin::v1::DecodeBatchResponse event,
                               bool terminal) {
  if (exchange_ == nullptr || exchange != exchange_seq_) return;
  exchange_->OnEvent(index, std::move(event), terminal);
}

}  // namespace internal
}  // namespace http
}  // namespace server
