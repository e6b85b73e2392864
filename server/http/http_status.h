// The gateway's pure helpers for its answers' status lines and headers
// (DESIGN "The HTTP gateway"): the HTTP status of an engine failure or a gRPC
// code, the JSON error body, Retry-After, an ETag, header-safe text, and the
// client's X-Request-Timeout. No I/O. Private to server/http/.
#ifndef VIN_SERVER_HTTP_HTTP_STATUS_H_
#define VIN_SERVER_HTTP_HTTP_STATUS_H_

#include <google/protobuf/util/json_util.h>
#include <grpcpp/support/status_code_enum.h>

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "domain/error_reason.h"
#include "engine_api/types.h"
#include "google/rpc/status.pb.h"

namespace server {
namespace http {
namespace internal {

// A stable hash of a body, for its ETag.
std::string ETagOf(const std::string& body);

// A header value: valid UTF-8 without line breaks or other control
// characters (spaces in their place), at most 512 bytes.
std::string HeaderSafe(absl::string_view text);

// The HTTP status of a failure on vPIC's paths (DESIGN "The HTTP gateway").
int HttpStatusOf(engine::FailureReason r);

// The HTTP status of a gRPC code, as HTTP/JSON gateways map them.
int HttpStatusOf(grpc::StatusCode code);

// The gRPC code a google.rpc.Status carries for an HTTP refusal of the
// gateway's own (404 NOT_FOUND, 405 UNIMPLEMENTED, 413 INVALID_ARGUMENT...).
grpc::StatusCode GrpcCodeOfHttp(int status);

// The error body of vPIC's paths (and of refusals made before a request
// is read): {"error":{"code":HTTP status,"status":`name`,"reason":the
// ErrorInfo reason,"message",...}}.
std::string ErrorBody(int status, absl::string_view name,
                      domain::ErrorReason reason, absl::string_view message,
                      bool retryable = false,
                      absl::Duration retry_after = absl::ZeroDuration());
// The same with the reason's name as `name`.
std::string ErrorBody(int status, domain::ErrorReason reason,
                      absl::string_view message, bool retryable = false,
                      absl::Duration retry_after = absl::ZeroDuration());

// How /v1/* bodies are read: protobuf's JSON mapping with unknown fields
// (and unknown enum names) ignored, as grpc-gateway reads them, so that a
// client built against a newer contract still works.
google::protobuf::util::JsonParseOptions ApiJsonOptions();

// A google.rpc.Status in protobuf's JSON mapping (the error body of
// /v1/*).
std::string RpcStatusJson(const google::rpc::Status& status);

// A whole answer written by hand, for a connection closed right after it
// without a request read (no Beast serializer): `status_line` ("503
// Service Unavailable"), a JSON `body`, `headers` ("Name: value\r\n" each).
std::string CannedAnswer(absl::string_view status_line, const std::string& body,
                         absl::string_view headers = "");

// Seconds for Retry-After: whole, at least 1.
std::string RetryAfterOf(absl::Duration d);

// The client's X-Request-Timeout: seconds ("2.5") or a duration ("500ms").
bool ParseTimeout(absl::string_view text, absl::Duration* out);

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_HTTP_STATUS_H_
