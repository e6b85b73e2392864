// The HTTP gateway's limits: its deadline, threads, connections, the file
// descriptors kept from it (--fd_reserve, read by main), hosts and CORS.
// --help lists these flags under "gateway (HTTP deadline, threads, connections,
// hosts, CORS)" (server/flags.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/flag_groups.h"
#include "server/flags.h"

ABSL_FLAG(absl::Duration, http_deadline, absl::Seconds(30),
          "each HTTP request's deadline, unless its X-Request-Timeout is "
          "shorter");
ABSL_FLAG(int, http_threads, 2, "threads of the HTTP gateway");
ABSL_FLAG(int, http_max_connections, 4096,
          "HTTP gateway connections open at once, all clients together; "
          "beyond it a new connection is answered 503 and closed at once "
          "(each client address keeps at most 256)");
ABSL_FLAG(int64_t, fd_reserve, -1,
          "file descriptors kept out of the HTTP gateway's reach, for gRPC, "
          "vPIC, Redis and files: the gateway and the metrics port together "
          "hold at most the descriptor limit minus this, lowering "
          "--http_max_connections if need be (-1: a quarter of the limit, "
          "at least 128; 0: none kept)");
ABSL_FLAG(std::string, http_allowed_hosts, "",
          "host names a request's Host may have (comma-separated; "
          "*.example.com for subdomains, * for any); others are 421. "
          "Default: loopback names and addresses only when --http_listen is "
          "a loopback address (against DNS rebinding), any host otherwise");
ABSL_FLAG(std::vector<std::string>, http_cors_origins, {},
          "origins of browser pages elsewhere that may call the HTTP gateway "
          "(comma-separated, e.g. https://app.example.com; * for any); none "
          "by default");

namespace server {

// The HTTP gateway's limits.
absl::Status HttpFromFlags(http::GatewayOptions& http) {
  http.deadline = absl::GetFlag(FLAGS_http_deadline);
  http.cors_origins = absl::GetFlag(FLAGS_http_cors_origins);
  http.threads = absl::GetFlag(FLAGS_http_threads);
  http.max_connections = absl::GetFlag(FLAGS_http_max_connections);
  http.allowed_hosts = absl::GetFlag(FLAGS_http_allowed_hosts);
  if (http.max_connections < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_max_connections must be at least 1, got ",
                     http.max_connections));
  }
  if (http.deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_deadline must be a duration above 0 (e.g. 30s), got ",
        absl::FormatDuration(http.deadline)));
  }
  if (http.threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_threads must be at least 1, got ", http.threads));
  }
  return absl::OkStatus();
}

}  // namespace server
