// The HTTP/1.1 gateway (`--http_listen`, DESIGN "HTTP"): vPIC's own paths
// answered with vPIC's own JSON, and our API as JSON, through the same
// engine as the gRPC services (one flight per VIN, the cache, the rate cap,
// batching, retries, the breaker, the snapshot fallback). A front end beside
// the gRPC services: it calls the engine's interface as they do and shares
// no state with them.
//
// Boost.Beast over Boost.Asio (Debian's libboost-dev): `threads` threads on
// one io_context, a strand per connection, one request at a time per
// connection (keep-alive, pipelined requests answered in order). Limits
// before anything reaches the engine: the request head must arrive within
// `head_timeout` and fit `header_limit`, a body `body_limit` and
// `body_timeout`, and one client address keeps at most
// `max_connections_per_client` connections; each is a 4xx naming the
// problem (408, 431, 413, 429).
//
// Thread contract: Start and Shutdown (and the destructor) on one thread;
// port() anywhere. The engine must outlive the gateway.
#ifndef VIN_SERVER_HTTP_GATEWAY_H_
#define VIN_SERVER_HTTP_GATEWAY_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/engine.h"

namespace server {
namespace http {

struct GatewayOptions {
  std::string listen;  // host:port (port 0: any free one)
  // Each request's deadline, unless the client's X-Request-Timeout is
  // shorter (--http_deadline).
  absl::Duration deadline = absl::Seconds(30);
  // The freshness of a cache entry (--cache_ttl), for Cache-Control.
  absl::Duration cache_ttl = absl::Hours(24);
  size_t header_limit = 16 * 1024;
  size_t body_limit = 1024 * 1024;
  // The NDJSON body of /v1/decode:batch (about 200,000 lines).
  size_t stream_body_limit = 16 * 1024 * 1024;
  absl::Duration head_timeout = absl::Seconds(10);
  absl::Duration body_timeout = absl::Seconds(30);
  int max_connections_per_client = 256;
  // Items of one /v1/decode:batch stream in progress at once, as a
  // DecodeBatch stream's window (the server's --batch_window).
  size_t stream_window = 256;
  int threads = 2;
  // Rule 17: the header naming a caller's tenant (case-insensitive).
  std::string tenant_header = "x-vin-tenant";
  // Origins of browser pages on other origins that may call (CORS,
  // --http_cors_origins); "*" allows any. None by default.
  std::vector<std::string> cors_origins;
};

class Gateway {
 public:
  static absl::StatusOr<std::unique_ptr<Gateway>> Start(GatewayOptions options,
                                                        engine::Engine* engine);
  ~Gateway();

  int port() const;
  // Stops accepting, closes every connection (their waiters leave the
  // engine), and returns once nothing of the gateway runs. Idempotent.
  void Shutdown();

  class Impl;

 private:
  explicit Gateway(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_GATEWAY_H_
