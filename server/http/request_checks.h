// The checks of a request head before anything of it runs (DESIGN rule
// 19, README "Security"): its framing (one way to find where its body
// ends), its Host (DNS rebinding) and its Origin (cross-site requests).
// Pure: no I/O; AllowedHosts is immutable once made.
#ifndef VIN_SERVER_HTTP_REQUEST_CHECKS_H_
#define VIN_SERVER_HTTP_REQUEST_CHECKS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace server {
namespace http {

// Why a head's framing is refused (400, and the connection closed: its
// body's end cannot be trusted), "" when it is sound. A
// Transfer-Encoding must be exactly "chunked" (the values of every
// Transfer-Encoding line together), on HTTP/1.1, without Content-Length;
// at most one Content-Length.
std::string FramingProblem(
    unsigned version, const std::vector<absl::string_view>& transfer_encodings,
    size_t content_lengths);

// --http_allowed_hosts: the names a request's Host may have (any port).
class AllowedHosts {
 public:
  // `spec`: comma-separated names ("vin.example.com", "*.example.com" for
  // any subdomain, "*" for any host); "" for the default, which depends on
  // where the gateway listens: loopback names and addresses only
  // (localhost, *.localhost, 127.0.0.0/8, ::1) for a loopback address,
  // any host otherwise.
  static absl::StatusOr<AllowedHosts> Parse(absl::string_view spec,
                                            bool listens_on_loopback);

  // Whether a request whose Host header is `host` ("name", "name:port",
  // "[::1]:port") may be served. A request without one (HTTP/1.0) may.
  bool Allows(absl::string_view host) const;

  // For messages: the hosts allowed, as configured.
  const std::string& description() const { return description_; }

 private:
  bool any_ = false;
  bool loopback_ = false;
  std::vector<std::string> names_;     // lower case
  std::vector<std::string> suffixes_;  // ".example.com" for *.example.com
  std::string description_;
};

// The name of a Host header value without its port and brackets, lower
// case ("[::1]:8080" -> "::1").
std::string HostName(absl::string_view host);

// Whether `origin` (an Origin header) is the gateway's own: the page it
// served, at `scheme`://`host` (the request's Host).
bool SameOrigin(absl::string_view origin, absl::string_view scheme,
                absl::string_view host);

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_REQUEST_CHECKS_H_
