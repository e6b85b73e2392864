// vin-server: the VIN decode gRPC service.
#include <signal.h>

#include <cstdlib>
#include <string>

#include <spdlog/spdlog.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "server/server.h"

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
ABSL_FLAG(int64_t, cache_capacity, 100000,
          "finished decodes kept in memory (0 disables the cache)");
ABSL_FLAG(absl::Duration, cache_ttl, absl::Hours(24),
          "how long a finished decode is served from the cache");
ABSL_FLAG(int64_t, max_pending, 1000000,
          "decodes waiting at once, all callers together; beyond it, callers "
          "get RESOURCE_EXHAUSTED / OVERLOADED");
ABSL_FLAG(int, batch_window, 256,
          "items of one DecodeBatch stream in progress at once; the server "
          "reads no further while the window is full (backpressure)");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "on SIGTERM/SIGINT, how long work in progress may finish");
ABSL_FLAG(std::string, snapshot_path, "",
          "the vPIC snapshot file (scripts/fetch_snapshot.sh writes "
          ".data/vpic.lite.db) for offline decodes; empty: live only. SIGHUP "
          "reloads it without a restart");
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
ABSL_FLAG(int, max_streams_per_connection, 100,
          "concurrent calls (HTTP/2 streams) per client connection; further "
          "calls wait for a free one");
ABSL_FLAG(absl::Duration, max_connection_idle, absl::Minutes(30),
          "a client connection without calls for this long is closed");
ABSL_FLAG(int64_t, max_memory, int64_t{1} << 30,
          "bytes of buffer memory gRPC may use, all calls together");
ABSL_FLAG(std::string, metrics_listen, "",
          "address:port for Prometheus metrics (GET /metrics); empty: no "
          "metrics (scripts/serve.sh passes 127.0.0.1:9464)");
ABSL_FLAG(std::string, log_level, "info",
          "trace, debug, info, warn, error, critical or off");

namespace {

// One log line per finished decode, one per scheduled retry, and one for
// each pushback, each retry the budget refuses, and each change of the
// effective upstream rate.
class LogObserver final : public engine::EngineObserver {
 public:
  void OnPushback(const vpic::UpstreamError& error,
                  absl::Duration pause) override {
    spdlog::warn(
        "pushback: vPIC answered {}; pausing every upstream request for {}",
        error.message, absl::FormatDuration(pause));
  }
  void OnUpstreamRateChanged(double per_minute, double configured) override {
    spdlog::warn("upstream rate now {:.0f}/min (configured {:.0f}/min)",
                 per_minute, configured);
  }
  // At most one line a second: in an outage the budget refuses many.
  void OnRetryRefused(const std::string& vin, absl::Duration delay) override {
    ++refused_;
    const absl::Time now = absl::Now();
    if (now - last_refusal_log_ < absl::Seconds(1)) return;
    spdlog::warn(
        "retry budget spent: {} retr{} refused since the last such line "
        "(latest vin={}, suggested delay {})",
        refused_, refused_ == 1 ? "y" : "ies", vin,
        absl::FormatDuration(delay));
    refused_ = 0;
    last_refusal_log_ = now;
  }
  void OnRetryScheduled(const std::string& vin,
                        const engine::Retrying& r) override {
    spdlog::warn("retry vin={} attempt={} next_delay={} error={} {}", vin,
                 r.attempt, absl::FormatDuration(r.next_delay), r.error.kind,
                 r.error.message);
  }
  void OnFlightFinished(const engine::FlightSummary& s) override {
    const auto level = s.ok ? spdlog::level::info : spdlog::level::warn;
    spdlog::log(level,
                "decode vin={} model_year={} outcome=\"{}\" attempts={} "
                "latency_ms={:.1f} waiters={}",
                s.vin, s.model_year, s.outcome, s.attempts,
                absl::ToDoubleMilliseconds(s.latency), s.waiters);
  }

 private:
  // Called on the engine's loop thread only.
  int64_t refused_ = 0;
  absl::Time last_refusal_log_ = absl::InfinitePast();
};

bool ParseSourcePreference(const std::string& text,
                           engine::SourcePreference* out) {
  using P = engine::SourcePreference;
  if (text == "auto") *out = P::kUnspecified;
  else if (text == "live_only") *out = P::kLiveOnly;
  else if (text == "snapshot_only") *out = P::kSnapshotOnly;
  else if (text == "live_then_snapshot") *out = P::kLiveThenSnapshot;
  else return false;
  return true;
}

void LogSnapshot(const server::VinServer& s) {
  if (auto snap = s.snapshot()) {
    const auto& info = snap->info();
    spdlog::info(
        "offline snapshot {} (data up to {}, sha256 {}) loaded in {:.2f}s, "
        "~{} MB",
        info.path, info.date, info.sha256,
        absl::ToDoubleSeconds(info.load_time), snap->MemoryBytes() >> 20);
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves vin.v1.VinDecoderService (gRPC), decoding VINs with NHTSA vPIC.\n"
      "Example: vin-server --listen=127.0.0.1:50051");
  absl::ParseCommandLine(argc, argv);

  const auto level =
      spdlog::level::from_str(absl::GetFlag(FLAGS_log_level));
  spdlog::set_level(level);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  // Block the stop signals in every thread; main waits for them below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  LogObserver observer;
  server::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.snapshot_path = absl::GetFlag(FLAGS_snapshot_path);
  options.batch_window = absl::GetFlag(FLAGS_batch_window);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.max_streams_per_connection =
      absl::GetFlag(FLAGS_max_streams_per_connection);
  options.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  options.max_memory_bytes = absl::GetFlag(FLAGS_max_memory);
  options.tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  engine::EngineOptions& e = options.engine;
  e.vpic_base_url = absl::GetFlag(FLAGS_vpic_base_url);
  e.retry_base = absl::GetFlag(FLAGS_retry_base);
  e.retry_cap = absl::GetFlag(FLAGS_retry_cap);
  e.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  e.attempt_timeout = absl::GetFlag(FLAGS_attempt_timeout);
  e.max_upstream_concurrency = absl::GetFlag(FLAGS_max_upstream_concurrency);
  e.retry_after_max = absl::GetFlag(FLAGS_retry_after_max);
  e.budget.rate_per_minute = absl::GetFlag(FLAGS_upstream_rate);
  e.budget.burst = absl::GetFlag(FLAGS_upstream_burst);
  e.budget.retry_ratio = absl::GetFlag(FLAGS_retry_budget);
  e.budget.retry_min_per_second = absl::GetFlag(FLAGS_retry_budget_min);
  e.upstream_batch_max = absl::GetFlag(FLAGS_upstream_batch_max);
  e.cache_capacity = static_cast<size_t>(
      std::max<int64_t>(0, absl::GetFlag(FLAGS_cache_capacity)));
  e.cache_ttl = absl::GetFlag(FLAGS_cache_ttl);
  e.max_waiters = static_cast<size_t>(
      std::max<int64_t>(1, absl::GetFlag(FLAGS_max_pending)));
  e.observer = &observer;
  if (!ParseSourcePreference(absl::GetFlag(FLAGS_source_preference),
                             &e.default_source)) {
    spdlog::critical(
        "--source_preference must be auto, live_only, snapshot_only or "
        "live_then_snapshot, got \"{}\"",
        absl::GetFlag(FLAGS_source_preference));
    return EXIT_FAILURE;
  }

  auto server = server::VinServer::Start(options);
  if (!server.ok()) {
    spdlog::critical("cannot start: {}", server.status().ToString());
    return EXIT_FAILURE;
  }
  spdlog::info(
      "vin-server listening on {} (port {}, {}); vPIC at {}; retry base={} "
      "cap={} max_attempts={}; upstream concurrency {}, rate {}, burst {}, "
      "batches of up to {}; retry budget {} (at least {}/s)",
      options.listen, (*server)->port(),
      options.tls.cert_file.empty()          ? "plaintext"
      : options.tls.client_ca_file.empty() ? "TLS"
                                             : "mutual TLS",
      e.vpic_base_url,
      absl::FormatDuration(e.retry_base), absl::FormatDuration(e.retry_cap),
      e.max_attempts, e.max_upstream_concurrency,
      e.budget.rate_per_minute > 0
          ? absl::StrFormat("%.0f/min", e.budget.rate_per_minute)
          : std::string("unlimited"),
      e.budget.burst, e.upstream_batch_max,
      e.budget.retry_ratio < 0 ? std::string("off")
                               : absl::StrFormat("%.2f", e.budget.retry_ratio),
      e.budget.retry_min_per_second);

  if ((*server)->metrics_port() != 0) {
    spdlog::info("metrics on http://{}/metrics (port {})",
                 options.metrics_listen, (*server)->metrics_port());
  }
  if (options.snapshot_path.empty()) {
    spdlog::info("no --snapshot_path: live decodes only");
  } else if (!(*server)->snapshot_status().ok()) {
    spdlog::warn("starting without the offline snapshot ({}): live decodes "
                 "only; SIGHUP retries the load",
                 (*server)->snapshot_status().ToString());
  } else {
    LogSnapshot(**server);
  }

  int sig = 0;
  for (;;) {
    sigwait(&signals, &sig);
    if (sig != SIGHUP) break;
    spdlog::info("SIGHUP received: reloading the offline snapshot");
    const absl::Status reloaded = (*server)->ReloadSnapshot();
    if (reloaded.ok()) {
      LogSnapshot(**server);
    } else {
      spdlog::error("snapshot reload failed, keeping the current one: {}",
                    reloaded.ToString());
    }
  }
  const absl::Duration grace = absl::GetFlag(FLAGS_shutdown_grace);
  spdlog::info("{} received: not accepting calls; finishing work for up to {}",
               sig == SIGTERM ? "SIGTERM" : "SIGINT",
               absl::FormatDuration(grace));
  (*server)->Shutdown(grace);
  spdlog::info("stopped");
  return EXIT_SUCCESS;
}
