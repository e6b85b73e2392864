// vin-server's flags, each with its default and help text, and the
// server options made from them (checked: a bad value is INVALID_ARGUMENT
// naming the flag, which main turns into a usage error).
#include "server/flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/log.h"
#include "server/proto_mapping.h"
#include "server/tenant.h"
#include "upstream/peak_hours.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "address:port to serve on");
ABSL_FLAG(std::string, vpic_base_url, "https://vpic.nhtsa.dot.gov/api/vehicles",
          "vPIC API base URL (a mirror or the fake vPIC can stand in)");
ABSL_FLAG(absl::Duration, retry_base, absl::Milliseconds(100),
          "base of the decorrelated-jitter retry delay");
ABSL_FLAG(absl::Duration, retry_cap, absl::Seconds(5),
          "largest retry delay");
ABSL_FLAG(int, max_attempts, 4,
          "upstream attempts per decode, the first included");
ABSL_FLAG(absl::Duration, attempt_timeout, absl::Seconds(15),
          "time limit of one upstream attempt");
ABSL_FLAG(int, max_upstream_concurrency, 8,
          "upstream requests in progress at once, all callers together");
ABSL_FLAG(double, upstream_rate, 1000,
          "upstream requests per minute toward vPIC, all callers, retries "
          "and batch requests together (0: unlimited)");
ABSL_FLAG(int, upstream_burst, 10,
          "upstream requests that may start back to back after a quiet spell");
ABSL_FLAG(int, upstream_batch_max, 50,
          "ready decodes sent together in one DecodeVINValuesBatch request "
          "when a backlog forms (1: no batching; vPIC allows 50)");
ABSL_FLAG(double, retry_budget, 0.1,
          "retries may add at most this share of the first attempts of the "
          "last 10 s (negative: no retry budget)");
ABSL_FLAG(double, retry_budget_min, 1,
          "retries per second the retry budget allows whatever the traffic");
ABSL_FLAG(absl::Duration, retry_after_max, absl::Seconds(60),
          "longest Retry-After waited out; a longer one fails the decode "
          "(retryable)");
ABSL_FLAG(double, bulk_min_share, 0.1,
          "bulk's guaranteed share of the VINs sent to vPIC whenever bulk "
          "work waits, however much interactive work there is (0 to 1)");
ABSL_FLAG(std::string, tenant_weights, "",
          "tenants' weights in their turns at the upstream queue, "
          "name:weight,... (others weigh 1)");
ABSL_FLAG(std::string, peak_hours, "Mon-Fri 06:00-18:00 America/New_York",
          "NHTSA's peak hours, when bulk work uses at most "
          "--bulk_peak_share of the rate (\"none\": no peak hours)");
ABSL_FLAG(double, bulk_peak_share, 0.5,
          "the share of the rate bulk work may use during --peak_hours "
          "(above 0, at most 1)");
ABSL_FLAG(std::string, tenant_header, "x-vin-tenant",
          "the metadata (and HTTP) header naming a caller's tenant when its "
          "client certificate does not");
ABSL_FLAG(std::string, trusted_proxies,
          std::string(server::TrustedProxies::kLoopback),
          "peers (IP addresses or CIDR blocks, comma-separated) whose tenant "
          "header is believed: the last value in the request, as the proxy "
          "nearest this server set it; from other peers it is ignored (the "
          "tenant is \"default\" without a client certificate); \"\": "
          "nobody");
ABSL_FLAG(std::string, interactive_tenants, "*",
          "tenants whose DecodeBatch streams and lists of VINs may ask for "
          "PRIORITY_INTERACTIVE (comma-separated; quote a name with commas: "
          "\"CN=a,O=b\"); others' are bulk whatever they ask; \"*\": "
          "every tenant's; single decodes may always be interactive");
ABSL_FLAG(int, max_tenants, 100,
          "tenants named in metrics; the rest share the label \"other\"");
ABSL_FLAG(int, breaker_failures, 5,
          "upstream requests failed in a row (unreachable or broken vPIC) "
          "that open the circuit breaker (0: no breaker)");
ABSL_FLAG(absl::Duration, breaker_cooldown, absl::Seconds(5),
          "how long the open breaker waits before its one probe of vPIC");
ABSL_FLAG(absl::Duration, breaker_cooldown_max, absl::Minutes(2),
          "the longest cool-down, grown with jitter after each failed probe");
ABSL_FLAG(int64_t, cache_capacity, 100000,
          "finished decodes kept in memory (0 disables the cache)");
ABSL_FLAG(absl::Duration, cache_ttl, absl::Hours(24),
          "how long a finished decode is served from the cache");
ABSL_FLAG(absl::Duration, cache_stale_max, absl::Hours(24 * 30),
          "entries older than --cache_ttl are kept this long in all, to "
          "answer (labelled stale) when vPIC cannot");
ABSL_FLAG(std::string, cache_path, "",
          "SQLite file keeping finished decodes across restarts (\"\": "
          "memory only); scripts/serve.sh passes .data/cache.db");
ABSL_FLAG(int64_t, cache_disk_max_bytes, int64_t{2} << 30,
          "bound on the cache file's rows; the oldest decodes go first");
ABSL_FLAG(int64_t, max_pending, 1000000,
          "decodes waiting at once, all callers together; beyond it, callers "
          "get RESOURCE_EXHAUSTED / OVERLOADED");
ABSL_FLAG(int, batch_window, 256,
          "items of one DecodeBatch stream (or /v1/decode:batch) in progress "
          "at once; the server reads no further while the window is full "
          "(backpressure)");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "on SIGTERM/SIGINT, how long work in progress may finish");
ABSL_FLAG(std::string, snapshot_path, "",
          "the vPIC snapshot file (scripts/fetch_snapshot.sh writes "
          ".data/vpic.lite.db) for offline decodes; empty: live only. SIGHUP "
          "reloads it without a restart");
ABSL_FLAG(absl::Duration, snapshot_reload_timeout, absl::Seconds(60),
          "a load of --snapshot_path (at start, or on SIGHUP) taking longer "
          "is abandoned and the server keeps what it had (the pinned "
          "snapshot loads in about 0.5 s)");
ABSL_FLAG(absl::Duration, snapshot_max_age, absl::Hours(24 * 62),
          "health of vin.v1.VinDecoderService.snapshot is SERVING while the "
          "loaded snapshot's data is younger than this");
ABSL_FLAG(std::string, source_preference, "auto",
          "for requests that leave it unspecified: auto (live_then_snapshot "
          "when a snapshot is loaded, live_only otherwise), live_only, "
          "snapshot_only or live_then_snapshot");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate chain to serve TLS with (with --tls_key_file); "
          "empty: plaintext");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA bundle: clients must present a certificate it signed (mTLS)");
ABSL_FLAG(absl::Duration, tls_reload_interval, absl::Seconds(60),
          "how often every TLS listener's certificate files (--tls_*, "
          "--http_tls_*, --metrics_tls_*) are read again: changed files that "
          "load are taken for new connections, open ones keep theirs; SIGHUP "
          "reloads at once (0: on SIGHUP only)");
ABSL_FLAG(std::string, http_tls_cert_file, "",
          "PEM certificate chain for the HTTP gateway to serve TLS with "
          "(with --http_tls_key_file); empty: plaintext");
ABSL_FLAG(std::string, http_tls_key_file, "",
          "PEM private key of --http_tls_cert_file");
ABSL_FLAG(std::string, http_tls_client_ca_file, "",
          "PEM CA bundle: HTTP clients must present a certificate it signed, "
          "whose subject is then their tenant, as over gRPC");
ABSL_FLAG(std::string, metrics_tls_cert_file, "",
          "PEM certificate chain for the metrics port to serve TLS with (with "
          "--metrics_tls_key_file); empty: plaintext");
ABSL_FLAG(std::string, metrics_tls_key_file, "",
          "PEM private key of --metrics_tls_cert_file");
ABSL_FLAG(std::string, metrics_tls_client_ca_file, "",
          "PEM CA bundle: scrapers must present a certificate it signed");
ABSL_FLAG(bool, metrics_public, false,
          "allow --metrics_listen on an address that is not loopback without "
          "TLS (the metrics name tenants and count their traffic)");
ABSL_FLAG(int, max_streams_per_connection, 100,
          "concurrent calls (HTTP/2 streams) per client connection; further "
          "calls wait for a free one");
ABSL_FLAG(absl::Duration, max_connection_idle, absl::Minutes(30),
          "a client connection without calls for this long is closed");
ABSL_FLAG(int64_t, max_memory, int64_t{1} << 30,
          "bytes of buffer memory gRPC may use, all calls together");
ABSL_FLAG(std::string, metrics_listen, "",
          "address:port for Prometheus metrics (GET /metrics); empty: no "
          "metrics (scripts/serve.sh passes 127.0.0.1:9464); an address "
          "that is not loopback needs --metrics_tls_cert_file or "
          "--metrics_public");
ABSL_FLAG(std::string, http_listen, "",
          "address:port for the HTTP gateway: vPIC's own paths "
          "(/api/vehicles/DecodeVinValues/{vin}...) and the JSON API "
          "(/v1/decode); empty: off (scripts/serve.sh passes 127.0.0.1:8080)");
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
ABSL_FLAG(int64_t, log_queue_lines, 8192,
          "log lines waiting for stdout at most; beyond it lines are dropped "
          "(and counted), never waited for");
ABSL_FLAG(std::string, redis_url, "",
          "fleet mode: redis://[[user]:password@]host[:port][/db] holding the "
          "cache, the flights and the NHTSA budget the replicas share "
          "(rediss:// for TLS; user and password percent-encoded, sent as "
          "AUTH; logged without the password); empty: this process alone");
ABSL_FLAG(std::string, redis_password_file, "",
          "fleet mode: a file whose one line is Redis's password (AUTH, with "
          "the user of --redis_url if it names one), kept out of the command "
          "line; not with a password in --redis_url");
ABSL_FLAG(std::string, redis_tls_ca_file, "",
          "rediss:// --redis_url: PEM CA certificates that may sign Redis's "
          "certificate (empty: the system's); its name or IP must be the "
          "host of --redis_url");
ABSL_FLAG(std::string, redis_tls_cert_file, "",
          "rediss:// --redis_url: PEM client certificate (chain) to present "
          "to a Redis with tls-auth-clients (with --redis_tls_key_file)");
ABSL_FLAG(std::string, redis_tls_key_file, "",
          "the PEM private key of --redis_tls_cert_file");
ABSL_FLAG(std::string, fleet_secret_file, "",
          "fleet mode: a file holding the fleet's secret (16 to 4096 bytes, "
          "the same on every replica): every event published and every "
          "decode stored in Redis is signed with HMAC-SHA256, and unsigned "
          "or badly signed ones are rejected; empty: unsigned (values are "
          "still checked)");
ABSL_FLAG(std::string, redis_key_prefix, "vin:",
          "prefix of every Redis key and channel of this fleet");
ABSL_FLAG(absl::Duration, redis_timeout, absl::Milliseconds(50),
          "longest wait on Redis (a command's answer; a new connection's "
          "connect, TLS handshake and greeting together); later counts as "
          "Redis being down");
ABSL_FLAG(absl::Duration, redis_connect_timeout, absl::Seconds(2),
          "fleet mode: at start, health is NOT_SERVING and calls wait (held, "
          "not failed) until Redis answers, for at most this; then the "
          "replica serves alone until Redis answers (0: serve at once)");
ABSL_FLAG(int, fleet_size_hint, 1,
          "replicas in the fleet: while Redis is down each one sends at most "
          "--upstream_rate / this");
ABSL_FLAG(absl::Duration, fleet_lease, absl::Seconds(5),
          "a flight's lease in Redis: a replica that dies leaves its flights "
          "to the others after at most this");
ABSL_FLAG(std::string, log_level, "info",
          "trace, debug, info, warn, error, critical or off");
ABSL_FLAG(std::string, log_format, "text",
          "text, or json (one JSON object per line)");

namespace server {
namespace {

// "auto", or a SourcePreference value's name without its prefix, in lower
// case ("live_only"): the proto's enum is the one list of names.
bool ParseSourcePreference(const std::string& text,
                           engine::SourcePreference* out) {
  vin::v1::SourcePreference value = vin::v1::SOURCE_PREFERENCE_UNSPECIFIED;
  if (text != "auto" &&
      (text != absl::AsciiStrToLower(text) || text == "unspecified" ||
       !vin::v1::SourcePreference_Parse(
           absl::StrCat("SOURCE_PREFERENCE_", absl::AsciiStrToUpper(text)),
           &value))) {
    return false;
  }
  *out = server::FromProto(value);
  return true;
}

// The listeners' addresses and their TLS files (checked by
// VinServer::Start: listener_checks.h).
void ListenersFromFlags(ServerOptions& options) {
  options.listen = absl::GetFlag(FLAGS_listen);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.metrics_public = absl::GetFlag(FLAGS_metrics_public);
  options.http.listen = absl::GetFlag(FLAGS_http_listen);
  options.tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  options.tls_reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  options.http.tls.cert_file = absl::GetFlag(FLAGS_http_tls_cert_file);
  options.http.tls.key_file = absl::GetFlag(FLAGS_http_tls_key_file);
  options.http.tls.client_ca_file =
      absl::GetFlag(FLAGS_http_tls_client_ca_file);
  options.metrics_tls.cert_file = absl::GetFlag(FLAGS_metrics_tls_cert_file);
  options.metrics_tls.key_file = absl::GetFlag(FLAGS_metrics_tls_key_file);
  options.metrics_tls.client_ca_file =
      absl::GetFlag(FLAGS_metrics_tls_client_ca_file);
}

// The finished decodes kept (memory, disk) and the offline snapshot.
absl::Status CacheFromFlags(ServerOptions& options) {
  options.snapshot_path = absl::GetFlag(FLAGS_snapshot_path);
  options.snapshot_max_age = absl::GetFlag(FLAGS_snapshot_max_age);
  options.snapshot_reload_timeout =
      absl::GetFlag(FLAGS_snapshot_reload_timeout);
  if (options.snapshot_reload_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--snapshot_reload_timeout must be a duration above 0 (e.g. 60s), "
        "got ",
        absl::FormatDuration(options.snapshot_reload_timeout)));
  }
  engine::EngineOptions& e = options.engine;
  e.cache_capacity = static_cast<size_t>(
      std::max<int64_t>(0, absl::GetFlag(FLAGS_cache_capacity)));
  e.cache_ttl = absl::GetFlag(FLAGS_cache_ttl);
  e.cache_stale_max = absl::GetFlag(FLAGS_cache_stale_max);
  options.cache_path = absl::GetFlag(FLAGS_cache_path);
  options.cache_disk_max_bytes = absl::GetFlag(FLAGS_cache_disk_max_bytes);
  return absl::OkStatus();
}

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

// What one caller, one connection and all of them together may hold.
void LimitsFromFlags(ServerOptions& options) {
  options.batch_window = absl::GetFlag(FLAGS_batch_window);
  options.max_streams_per_connection =
      absl::GetFlag(FLAGS_max_streams_per_connection);
  options.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  options.max_memory_bytes = absl::GetFlag(FLAGS_max_memory);
  options.engine.max_waiters = static_cast<size_t>(
      std::max<int64_t>(1, absl::GetFlag(FLAGS_max_pending)));
}

// Fleet mode: Redis, and what the replicas share there.
absl::Status FleetFromFlags(FleetOptions& fleet) {
  fleet.redis_url = absl::GetFlag(FLAGS_redis_url);
  fleet.redis_password_file = absl::GetFlag(FLAGS_redis_password_file);
  fleet.tls.ca_file = absl::GetFlag(FLAGS_redis_tls_ca_file);
  fleet.tls.cert_file = absl::GetFlag(FLAGS_redis_tls_cert_file);
  fleet.tls.key_file = absl::GetFlag(FLAGS_redis_tls_key_file);
  fleet.secret_file = absl::GetFlag(FLAGS_fleet_secret_file);
  fleet.key_prefix = absl::GetFlag(FLAGS_redis_key_prefix);
  fleet.timeout = absl::GetFlag(FLAGS_redis_timeout);
  fleet.connect_timeout = absl::GetFlag(FLAGS_redis_connect_timeout);
  if (fleet.connect_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--redis_connect_timeout must be a duration of 0 or more (e.g. 2s, "
        "300ms), got ",
        absl::FormatDuration(fleet.connect_timeout)));
  }
  fleet.size_hint = absl::GetFlag(FLAGS_fleet_size_hint);
  fleet.lease = absl::GetFlag(FLAGS_fleet_lease);
  return absl::OkStatus();
}

// The requests to vPIC: where, how fast, how often again, and the breaker.
void UpstreamFromFlags(engine::EngineOptions& e) {
  e.vpic_base_url = absl::GetFlag(FLAGS_vpic_base_url);
  e.retry_base = absl::GetFlag(FLAGS_retry_base);
  e.retry_cap = absl::GetFlag(FLAGS_retry_cap);
  e.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  e.attempt_timeout = absl::GetFlag(FLAGS_attempt_timeout);
  e.max_upstream_concurrency = absl::GetFlag(FLAGS_max_upstream_concurrency);
  e.retry_after_max = absl::GetFlag(FLAGS_retry_after_max);
  e.breaker.failures = std::max(0, absl::GetFlag(FLAGS_breaker_failures));
  e.breaker.cooldown = absl::GetFlag(FLAGS_breaker_cooldown);
  e.breaker.cooldown_max = absl::GetFlag(FLAGS_breaker_cooldown_max);
  e.budget.rate_per_minute = absl::GetFlag(FLAGS_upstream_rate);
  e.budget.burst = absl::GetFlag(FLAGS_upstream_burst);
  e.budget.retry_ratio = absl::GetFlag(FLAGS_retry_budget);
  e.budget.retry_min_per_second = absl::GetFlag(FLAGS_retry_budget_min);
  e.upstream_batch_max = absl::GetFlag(FLAGS_upstream_batch_max);
}

// Bulk's shares of the rate, the tenants' weights and the peak hours.
absl::Status SharesFromFlags(engine::EngineOptions& e) {
  e.share.bulk_min_share = absl::GetFlag(FLAGS_bulk_min_share);
  if (!(e.share.bulk_min_share >= 0 && e.share.bulk_min_share <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bulk_min_share must be between 0 and 1, got ",
        e.share.bulk_min_share));
  }
  e.bulk_peak_share = absl::GetFlag(FLAGS_bulk_peak_share);
  if (!(e.bulk_peak_share > 0 && e.bulk_peak_share <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bulk_peak_share must be above 0 and at most 1, got ",
        e.bulk_peak_share));
  }
  auto weights = server::ParseTenantWeights(absl::GetFlag(FLAGS_tenant_weights));
  if (!weights.ok()) return weights.status();
  e.share.tenant_weights = *std::move(weights);
  auto peak = upstream::PeakHours::Parse(absl::GetFlag(FLAGS_peak_hours));
  if (!peak.ok()) return peak.status();
  e.peak_hours = *std::move(peak);
  return absl::OkStatus();
}

// Who a caller is, whose work may be interactive, and the tenants named
// in metrics.
absl::Status TenantsFromFlags(ServerOptions& options) {
  options.tenants.header =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_tenant_header));
  if (options.tenants.header.empty()) {
    return absl::InvalidArgumentError("--tenant_header cannot be empty");
  }
  auto proxies = TrustedProxies::Parse(absl::GetFlag(FLAGS_trusted_proxies));
  if (!proxies.ok()) return proxies.status();
  options.tenants.trusted_proxies = *std::move(proxies);
  const std::string interactive = absl::GetFlag(FLAGS_interactive_tenants);
  if (interactive != "*") {
    auto names = ParseTenantList(interactive, "--interactive_tenants");
    if (!names.ok()) return names.status();
    options.tenants.interactive_tenants.emplace(names->begin(), names->end());
  }
  options.http.tenants = options.tenants;
  options.max_tenants = std::max(1, absl::GetFlag(FLAGS_max_tenants));
  return absl::OkStatus();
}

absl::Status SourcePreferenceFromFlags(engine::EngineOptions& e) {
  if (!ParseSourcePreference(absl::GetFlag(FLAGS_source_preference),
                             &e.default_source)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--source_preference must be auto, live_only, snapshot_only or "
        "live_then_snapshot, got \"",
        absl::GetFlag(FLAGS_source_preference), "\""));
  }
  return absl::OkStatus();
}

}  // namespace

// The checks run in the order they always have (the first bad flag is the
// one reported).
absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions options;
  ListenersFromFlags(options);
  if (absl::Status s = CacheFromFlags(options); !s.ok()) return s;
  if (absl::Status s = HttpFromFlags(options.http); !s.ok()) return s;
  LimitsFromFlags(options);
  options.log_dropped = server::log::Dropped;
  if (absl::Status s = FleetFromFlags(options.fleet); !s.ok()) return s;
  UpstreamFromFlags(options.engine);
  if (absl::Status s = SharesFromFlags(options.engine); !s.ok()) return s;
  if (absl::Status s = TenantsFromFlags(options); !s.ok()) return s;
  if (absl::Status s = SourcePreferenceFromFlags(options.engine); !s.ok()) {
    return s;
  }
  return options;
}

}  // namespace server
