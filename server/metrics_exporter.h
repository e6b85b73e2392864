// Serves the service's metrics in Prometheus' text format on GET /metrics
// (--metrics_listen), rendered with prometheus-cpp's text serializer and
// served by the HTTP gateway's machinery on a thread of its own (one
// route, the gateway's limits, TLS with --metrics_tls_*: DESIGN rule 19
// says why not prometheus-cpp's civetweb exposer). A scrape reads the
// atomics of metrics::ServiceMetrics and of the batch counters: it never
// takes a lock the decode path takes.
#ifndef VIN_SERVER_METRICS_EXPORTER_H_
#define VIN_SERVER_METRICS_EXPORTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "metrics/metrics.h"
#include "server/batch_call.h"
#include "server/common/tls_files.h"
#include "server/http/gateway.h"

namespace disk_cache {
class DiskCache;
}

namespace server {

class ParityChecker;

class JobManager;

// A count under one label value.
struct LabelCount {
  std::string label;
  uint64_t count = 0;
};

// What a scrape reads besides ServiceMetrics. Not owned; must outlive the
// exporter.
struct MetricsSources {
  const metrics::ServiceMetrics* service = nullptr;
  // The calendar clock ages are measured on (null: the real one).
  std::function<absl::Time()> wall_now;
  const BatchCounters* batch = nullptr;
  // The HTTP gateway's (null: no gateway, and no vin_http_* metrics).
  const http::GatewayCounters* http = nullptr;
  // Log lines dropped because the log queue was full (null: none kept).
  std::function<uint64_t()> log_dropped;
  // Fleet mode: failed Redis commands, for vin_redis_errors_total (empty:
  // no fleet, and no vin_redis_* metrics).
  std::function<uint64_t()> redis_errors;
  std::function<uint64_t()> redis_commands;
  // Fleet mode: events of the channel that did not parse.
  std::function<uint64_t()> fleet_events_rejected;
  // The cache file under the memory cache (null: none, and no
  // vin_cache_disk_* metrics).
  const disk_cache::DiskCache* disk = nullptr;
  // Fleet mode: values read from Redis that were not believed, by what was
  // wrong (fleet::RejectionName), for vin_fleet_rejected_total{what}.
  std::function<std::vector<LabelCount>()> fleet_rejected;
  // Bulk jobs (null: --job_path not given, and no vin_job* metrics).
  JobManager* jobs = nullptr;
  // Rule 21's parity (null: no vin_snapshot_parity* metrics).
  const ParityChecker* parity = nullptr;
};

// The text of every metric, as a scrape of /metrics returns it.
std::string RenderMetrics(const MetricsSources& sources);

class MetricsExporter {
 public:
  // Listens on `listen` ("127.0.0.1:9464"; port 0 picks a free one), over
  // TLS when `tls` names a certificate. Errors say "cannot serve metrics
  // on ...", with the code of the cause (INVALID_ARGUMENT for a flag).
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& listen, const TlsOptions& tls, MetricsSources sources);
  ~MetricsExporter();

  int port() const { return listener_->port(); }
  // The listener, for its TLS certificate (tls(), ReloadCertificates).
  http::Gateway& listener() { return *listener_; }

  static constexpr int kMaxConnections = 64;
  static constexpr int kMaxConnectionsPerClient = 16;

 private:
  explicit MetricsExporter(std::unique_ptr<http::Gateway> listener);
  std::unique_ptr<http::Gateway> listener_;
};

}  // namespace server

#endif  // VIN_SERVER_METRICS_EXPORTER_H_
