// The gateway's pure helpers for its answers' status lines and headers
// (DESIGN "HTTP"): the HTTP status of an engine failure or a gRPC code, the
// JSON error body, Retry-After, an ETag, header-safe text, and the client's
// X-Request-Timeout. No I/O. Private to server/http/.
#ifndef VIN_SERVER_HTTP_HTTP_STATUS_H_
#define VIN_SERVER_HTTP_HTTP_STATUS_H_

#include <grpcpp/support/status_code_enum.h>

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/types.h"

namespace server {
namespace http {
namespace internal {

// A stable hash of a body, for its ETag.
std::string ETagOf(const std::string& body);

// A header value: valid UTF-8 without line breaks or other control
// characters (spaces in their place), at most 512 bytes.
std::string HeaderSafe(absl::string_view text);

// The HTTP status of a failure on vPIC's paths (DESIGN "HTTP").
int HttpStatusOf(engine::FailureReason r);

// The HTTP status of a gRPC code, as HTTP/JSON gateways map them.
int HttpStatusOf(grpc::StatusCode code);

std::string ErrorBody(int status, absl::string_view reason,
                      absl::string_view message, bool retryable = false,
                      absl::Duration retry_after = absl::ZeroDuration());

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
