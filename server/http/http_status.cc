// The gateway's pure helpers (http_status.h): status mapping, the JSON
// error body, Retry-After, ETags, header-safe text, X-Request-Timeout.
#include "server/http/http_status.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/utf8.h"

namespace server {
namespace http {
namespace internal {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

std::string ETagOf(const std::string& body) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("\"%016x\"", h);
}

std::string CannedAnswer(absl::string_view status_line, const std::string& body,
                         absl::string_view headers) {
  return absl::StrCat("HTTP/1.1 ", status_line,
                      "\r\nServer: vin-decode-service\r\n"
                      "Content-Type: application/json; charset=utf-8\r\n",
                      headers,
                      "Connection: close\r\nContent-Length: ", body.size(),
                      "\r\n\r\n", body);
}

std::string HeaderSafe(absl::string_view text) {
  return util::SafeText(text, 512, " ");
}

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

grpc::StatusCode GrpcCodeOfHttp(int status) {
  using C = grpc::StatusCode;
  switch (status) {
    case 400:
    case 413:
    case 421:
    case 431:
      return C::INVALID_ARGUMENT;
    case 403:
      return C::PERMISSION_DENIED;
    case 404:
      return C::NOT_FOUND;
    case 405:
      return C::UNIMPLEMENTED;
    case 408:
    case 504:
      return C::DEADLINE_EXCEEDED;
    case 429:
      return C::RESOURCE_EXHAUSTED;
    case 499:
      return C::CANCELLED;
    case 502:
      return C::FAILED_PRECONDITION;
    case 503:
      return C::UNAVAILABLE;
    default:
      return C::INTERNAL;
  }
}

google::protobuf::util::JsonParseOptions ApiJsonOptions() {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  return options;
}

std::string RpcStatusJson(const google::rpc::Status& status) {
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(
      status, &json, google::protobuf::util::JsonPrintOptions());
  return json;
}

std::string ErrorBody(int status, domain::ErrorReason reason,
                      absl::string_view message, bool retryable,
                      absl::Duration retry_after) {
  return ErrorBody(status, domain::ErrorReasonName(reason), reason, message,
                   retryable, retry_after);
}

std::string ErrorBody(int status, absl::string_view name,
                      domain::ErrorReason reason, absl::string_view message,
                      bool retryable, absl::Duration retry_after) {
  Json e = Json::object();
  e["code"] = status;
  e["status"] = std::string(name);
  e["reason"] = std::string(domain::ErrorReasonName(reason));
  e["message"] = std::string(message);
  e["retryable"] = retryable;
  if (retry_after > absl::ZeroDuration()) {
    e["retry_after_seconds"] = absl::ToDoubleSeconds(retry_after);
  }
  Json j = Json::object();
  j["error"] = std::move(e);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string RetryAfterOf(absl::Duration d) {
  return absl::StrCat(
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(d)))));
}

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

}  // namespace internal
}  // namespace http
}  // namespace server
