// Connection's own answers (connection.h): CORS (the Origin's answers, the
// preflight), the binary's files and the metrics, answers revalidated by
// their ETag (304 on If-None-Match), and
// the gateway's errors in the shape of the request's surface
// (google.rpc.Status on /v1/*, vPIC's {"error":{...}} elsewhere). An
// exchange's answers are its own (vpic_decode.cc, api_decode.cc,
// ndjson_stream.cc).
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/common/status_mapping.h"
#include "server/http/connection.h"
#include "server/http/http_status.h"

namespace server {
namespace http {
namespace internal {
namespace {

// Whether an If-None-Match header names `etag` (or "*").
bool Matches(absl::string_view header, const std::string& etag) {
  for (absl::string_view tag : absl::StrSplit(header, ',')) {
    tag = absl::StripAsciiWhitespace(tag);
    if (tag == "*" || tag == etag || tag == absl::StrCat("W/", etag))
      return true;
  }
  return false;
}

}  // namespace

bool Connection::OriginAllowed() const {
  if (origin_.empty()) return false;
  for (const std::string& o : options().cors_origins) {
    if (o == "*" || o == origin_) return true;
  }
  return false;
}

void Connection::AddCors(bhttp::fields* res) const {
  if (!OriginAllowed()) return;
  res->set(bhttp::field::access_control_allow_origin, origin_);
  res->set(bhttp::field::vary, "Origin");
  res->set(bhttp::field::access_control_expose_headers,
           "X-Vin-Source, X-Vin-Stale, X-Vin-Note, Retry-After, ETag");
}

void Connection::Preflight(const bhttp::request_header<>& head) {
  keep_alive_ = keep_alive_ && head_parser_->is_done();
  if (!OriginAllowed()) {
    return Fail(403, domain::ErrorReason::kForbiddenOrigin,
                origin_.empty()
                    ? "OPTIONS is answered for CORS preflights only (no Origin)"
                    : absl::StrCat("origin ", HeaderSafe(origin_),
                                   " is not among --http_cors_origins"),
                !head_parser_->is_done());
  }
  auto res = MakeResponse(204);
  res->set(bhttp::field::access_control_allow_methods,
           "GET, HEAD, POST, OPTIONS");
  std::string asked;
  if (auto h = head.find(bhttp::field::access_control_request_headers);
      h != head.end()) {
    asked = std::string(h->value());
  }
  res->set(bhttp::field::access_control_allow_headers,
           asked.empty() ? "Content-Type, X-Request-Timeout, If-None-Match, "
                           "X-Vin-Source-Preference"
                         : HeaderSafe(asked));
  res->set(bhttp::field::access_control_max_age, "600");
  Send(std::move(res));
}

void Connection::SendTagged(std::shared_ptr<Response> res,
                            std::shared_ptr<const std::string> body,
                            const std::string& etag) {
  res->set(bhttp::field::etag, etag);
  if (auto inm = request_.find(bhttp::field::if_none_match);
      inm != request_.end() &&
      Matches(absl::string_view(inm->value().data(), inm->value().size()),
              etag)) {
    res->result(bhttp::status::not_modified);
    return Send(std::move(res));
  }
  res->body().Share(std::move(body));
  Send(std::move(res));
}

void Connection::SendFile(const char* content, const char* type,
                          const std::string& etag) {
  auto res = MakeResponse(200);
  res->set(bhttp::field::content_type, type);
  res->set(bhttp::field::cache_control, "no-cache");
  SendTagged(std::move(res), std::make_shared<const std::string>(content),
             etag);
}

void Connection::SendMetrics() {
  auto res = MakeResponse(200);
  res->set(bhttp::field::content_type,
           "text/plain; version=0.0.4; charset=utf-8");
  res->set(bhttp::field::cache_control, "no-store");
  res->body() = options().metrics();
  Send(std::move(res));
}

void Connection::FailApi(int status, const ErrorDetails& details, bool close) {
  if (close) keep_alive_ = false;
  auto res = MakeResponse(status);
  res->set(bhttp::field::content_type, "application/json");
  res->set(bhttp::field::cache_control, "no-store");
  if (status == 503 || status == 429) {
    res->set(bhttp::field::retry_after, RetryAfterOf(details.retry_delay));
  }
  res->body() = RpcStatusJson(ToRpcStatus(details));
  Send(std::move(res));
}

void Connection::Fail(int status, domain::ErrorReason reason,
                      absl::string_view message, bool close) {
  if (api_) {
    return FailApi(
        status, DetailsOf(GrpcCodeOfHttp(status), reason, std::string(message)),
        close);
  }
  if (close) keep_alive_ = false;
  auto res = MakeResponse(status);
  res->set(bhttp::field::content_type, "application/json; charset=utf-8");
  res->set(bhttp::field::cache_control, "no-store");
  res->body() = ErrorBody(status, reason, message);
  Send(std::move(res));
}

}  // namespace internal
}  // namespace http
}  // namespace server
