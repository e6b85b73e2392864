// The HTTP/1.1 gateway (`--http_listen`, DESIGN "The HTTP gateway"): vPIC's own
// paths answered with vPIC's own JSON, and our API as JSON, through the same
// engine as the gRPC services (one flight per VIN, the cache, the rate cap,
// batching, retries, the breaker, the snapshot fallback). A front end beside
// the gRPC services: it calls the engine's interface as they do and shares
// no state with them.
//
// Boost.Beast over Boost.Asio (Debian's libboost-dev): `threads` threads on
// one io_context, a strand per connection, one request at a time per
// connection (keep-alive, pipelined requests answered in order). Limits
// before anything reaches the engine (DESIGN rule 19): the request head
// must arrive within `head_timeout` and fit `header_limit`; a body its
// route's limit (POST /v1/decode `decode_body_limit`, others
// `body_limit`; /v1/decode:batch is read as a stream, a line at most
// `line_limit`) and `body_timeout`; its framing, Host and Origin are
// checked; one client address keeps at most `max_connections_per_client`
// connections, all of them `max_connections`. Each is a 4xx naming the
// problem (408, 431, 413, 400, 421, 403, 429), or a 503 and a close at the
// global cap; accept errors (out of file descriptors) back off.
//
// TLS (`tls`: TLS 1.2 and later, per connection a handshake within
// `head_timeout`; tls_context.h): with a client CA a client certificate is
// required, and its subject is the request's tenant, as over gRPC. The
// certificate is replaced by ReloadCertificates without a restart: new
// connections get the new one, open ones keep theirs.
//
// The same machinery serves the metrics port (`metrics`): one route,
// GET /metrics, behind the same limits and TLS.
//
// Thread contract: Start and Shutdown (and the destructor) on one thread;
// port() anywhere. The engine must outlive the gateway.
#ifndef VIN_SERVER_HTTP_GATEWAY_H_
#define VIN_SERVER_HTTP_GATEWAY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/engine.h"
#include "metrics/labeled_histograms.h"
#include "server/common/admin_access.h"
#include "server/common/tenant.h"
#include "server/common/tls_files.h"
#include "vin/v1/admin.pb.h"

namespace server {

class JobManager;  // server/jobs/job_manager.h

namespace http {

// What the gateway counts, read by the metrics (vin_http_*). Atomics: any
// thread reads them.
struct GatewayCounters {
  std::atomic<int64_t> connections_open{0};
  // Connections answered 429 (over a client's share) or 503 (over
  // --http_max_connections) and closed.
  std::atomic<uint64_t> refused_per_client{0};
  std::atomic<uint64_t> refused_global{0};
  // accept() failures (EMFILE, ENFILE...), each followed by a back-off.
  std::atomic<uint64_t> accept_errors{0};
  // Requests answered, by route (RouteLabel) and status code.
  metrics::RouteCodeHistograms requests;
};

struct GatewayOptions {
  std::string listen;  // host:port (port 0: any free one)
  // For logs and errors: the listener's name, and its flags' prefix
  // ("--http": --http_listen, --http_tls_cert_file, ...).
  std::string name = "HTTP gateway";
  std::string flag_prefix = "--http";
  // Plaintext unless a certificate is given; mutual TLS with a client CA.
  TlsOptions tls;
  // The metrics port: when set, GET (or HEAD) /metrics answers what it
  // returns (Prometheus' text format) and every other path is 404; no
  // request reaches the engine, which may be null.
  std::function<std::string()> metrics;
  // Each request's deadline, unless the client's X-Request-Timeout is
  // shorter (--http_deadline).
  absl::Duration deadline = absl::Seconds(30);
  // The freshness of a cache entry (--cache_ttl), for Cache-Control, and
  // of a reference answer's (--reference_ttl; rule 18).
  absl::Duration cache_ttl = absl::Hours(24);
  absl::Duration reference_ttl = absl::Hours(24);
  size_t header_limit = 16 * 1024;
  // POST /v1/decode's body: one DecodeRequest, as gRPC's message limit.
  size_t decode_body_limit = 64 * 1024;
  // Every other body (vPIC's batch form), read whole.
  size_t body_limit = 1024 * 1024;
  // POST /v1/jobs's body (a job's items as NDJSON), read whole; a larger
  // job goes through gRPC's CreateJob (vinctl job submit), which streams.
  size_t job_body_limit = 64 * 1024 * 1024;
  // Bulk jobs (rule 20): the manager /v1/jobs calls (not owned; null: the
  // job routes answer JOBS_NOT_CONFIGURED).
  JobManager* jobs = nullptr;
  // Rule 21: GET /v1/parity's report (null: 404), and who may read it.
  std::function<vin::v1::ParityReport()> parity;
  AdminPolicy admins;
  // One NDJSON line of /v1/decode:batch, whose body has no limit: it is
  // read as a stream, paced by `stream_window`. A longer line fails as its
  // item, unbuffered.
  size_t line_limit = 64 * 1024;
  absl::Duration head_timeout = absl::Seconds(10);
  // A body must arrive within this (a stream's: each read the server
  // waits on).
  absl::Duration body_timeout = absl::Seconds(30);
  int max_connections_per_client = 256;
  // Connections open at once, all clients together
  // (--http_max_connections); beyond it a new one is answered 503 and
  // closed at once.
  int max_connections = 4096;
  // --http_allowed_hosts ("" : loopback names only when `listen` is a
  // loopback address, any host otherwise; see request_checks.h).
  std::string allowed_hosts;
  // Items of one /v1/decode:batch stream in progress at once, as a
  // DecodeBatch stream's window (the server's --batch_window).
  size_t stream_window = 256;
  int threads = 2;
  // Rules 17 and 19: who a caller is (the tenant header, believed from a
  // trusted proxy only) and whose lists may be interactive.
  TenantPolicy tenants;
  // Origins of browser pages on other origins that may call (CORS,
  // --http_cors_origins); "*" allows any. None by default: a request from
  // another origin is 403.
  std::vector<std::string> cors_origins;
  // Not owned; may be null.
  GatewayCounters* counters = nullptr;
};

class Gateway {
 public:
  static absl::StatusOr<std::unique_ptr<Gateway>> Start(GatewayOptions options,
                                                        engine::Engine* engine);
  ~Gateway();

  int port() const;
  // Whether the listener serves TLS; its certificate, and reading its
  // files again: true when a new certificate was taken, false when they
  // are unchanged, an error (naming the flag) when they do not load, the
  // current one kept. Any thread.
  bool tls() const;
  TlsMaterial certificate() const;
  absl::StatusOr<bool> ReloadCertificates();
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
