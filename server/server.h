// The assembled service: engine, VinDecoderService, health, reflection, on
// one gRPC server.
#ifndef VIN_SERVER_SERVER_H_
#define VIN_SERVER_SERVER_H_

#include <grpcpp/server.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "disk_cache/disk_cache.h"
#include "domain/limits.h"
#include "engine/engine.h"
#include "fleet/redis_fleet.h"
#include "metrics/metrics.h"
#include "server/admin_service.h"
#include "server/certificate_reloader.h"
#include "server/common/admin_access.h"
#include "server/common/tenant.h"
#include "server/decode_service.h"
#include "server/fleet_join.h"
#include "server/health_service.h"
#include "server/http/gateway.h"
#include "server/job_service.h"
#include "server/jobs/job_manager.h"
#include "server/metrics_exporter.h"
#include "server/parity_checker.h"
#include "server/tls.h"
#include "snapshot/golden.h"
#include "snapshot/snapshot_reloader.h"
#include "snapshot/snapshot_store.h"

namespace server {

// Fleet mode (README "Running a fleet"): replicas share a cache, their
// flights and the NHTSA budget in Redis.
struct FleetOptions {
  // redis://[[user]:password@]host[:port][/db], rediss:// for TLS; "" =
  // this process alone. Logged only through fleet::RedactRedisUrl.
  std::string redis_url;
  // The password in a file instead of the URL (not both).
  std::string redis_password_file;
  // rediss://: the CAs that may sign Redis's certificate ("" = the
  // system's), and a client certificate for tls-auth-clients.
  fleet::RedisTlsOptions tls;
  // The fleet's HMAC key in a file ("" = values unsigned): every event and
  // cached value is signed, and unsigned ones are rejected (DESIGN
  // "Beyond one machine").
  std::string secret_file;
  std::string key_prefix = "vin:";
  absl::Duration timeout = absl::Milliseconds(50);  // longest wait on Redis
  // DESIGN rule 16: until Redis has answered, for at most this, health is
  // NOT_SERVING and decode calls are held (server/fleet_join.h); then the
  // replica serves, alone until Redis answers. Zero: serve at once.
  absl::Duration connect_timeout = absl::Seconds(2);
  int size_hint = 1;  // replicas; the fallback bucket is rate / size_hint
  absl::Duration lease = absl::Seconds(5);
};

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free port
  TlsOptions tls;  // gRPC's: plaintext unless a certificate is given
  engine::EngineOptions engine;
  // Items of one DecodeBatch stream in progress at once; beyond it the
  // server stops reading the stream until an item's last event is written.
  int batch_window = 256;
  // The vPIC snapshot file for offline decodes; "" for none (live only).
  std::string snapshot_path;
  // Health of "vin.v1.VinDecoderService.snapshot": SERVING while the loaded
  // snapshot's data is younger than this.
  absl::Duration snapshot_max_age = absl::Hours(24 * 62);
  // A load of the snapshot (at start, or a reload) that takes longer is
  // abandoned: the server keeps what it had.
  absl::Duration snapshot_reload_timeout = absl::Seconds(60);
  // Rule 21: the sha256 a snapshot file must have to be loaded ("" any),
  // the golden set's text (VIN,Make,Model,ModelYear lines; "" the one built
  // in), and how much less (a share: 0.005 is half a point) a reloaded
  // snapshot may agree with it than the current one.
  std::string snapshot_sha256;
  std::string snapshot_golden;
  double snapshot_golden_slack = 0.005;
  // Larger requests are refused by gRPC with RESOURCE_EXHAUSTED.
  int max_receive_message_bytes = domain::kMaxMessageBytes;
  // Per connection: concurrent streams (HTTP/2 MAX_CONCURRENT_STREAMS; a
  // client's further calls wait for a free one), and how long a connection
  // with no call may stay open.
  int max_streams_per_connection = 100;
  absl::Duration max_connection_idle = absl::Minutes(30);
  // Clients may not ping more often than this without sending data; a
  // client that does is sent GOAWAY (too_many_pings).
  absl::Duration min_client_ping_interval = absl::Seconds(10);
  // Bounds the memory gRPC may use for its buffers, all calls together.
  int64_t max_memory_bytes = int64_t{1} << 30;
  // Prometheus metrics on GET /metrics at this address:port ("" = none;
  // port 0 picks a free one): a loopback address, or another with
  // `metrics_tls` or `metrics_public` (rule 19: they name tenants).
  std::string metrics_listen;
  TlsOptions metrics_tls;
  bool metrics_public = false;
  // How often the TLS listeners' certificate files are read again (0: only
  // when ReloadCertificates is called, on SIGHUP).
  absl::Duration tls_reload_interval = absl::Seconds(60);
  // Log lines dropped by a full log queue, for vin_log_dropped_total (may
  // be empty).
  std::function<uint64_t()> log_dropped;
  FleetOptions fleet;
  // The cache that survives restarts (DESIGN rule 14): finished decodes are
  // also kept in this SQLite file ("" = memory only), at most this many
  // bytes (oldest first out), committed at least every interval.
  std::string cache_path;
  int64_t cache_disk_max_bytes = int64_t{2} << 30;
  absl::Duration cache_commit_interval = absl::Milliseconds(250);
  // The HTTP gateway (vPIC's paths and our JSON API; DESIGN "The HTTP
  // gateway"): off while `http.listen` is "".
  http::GatewayOptions http;
  // Rules 17 and 19: who a caller is (its certificate, or the header from
  // a trusted proxy) and which tenants' streams may be interactive (the
  // gateway has its own copy in `http`); the tenants metrics name.
  TenantPolicy tenants;
  int max_tenants = 100;
  // Bulk jobs (DESIGN rule 20): off while `jobs.path` is "".
  JobOptions jobs;
  // Rule 21: live answers compared with the snapshot's decodes.
  ParityOptions parity;
  // Who may read the operators' methods (--admin_tenants).
  AdminPolicy admins;
};

class VinServer {
 public:
  static absl::StatusOr<std::unique_ptr<VinServer>> Start(
      ServerOptions options);
  // Shuts down with no grace if Shutdown was not called.
  ~VinServer();

  // The bound port (useful with port 0).
  int port() const { return port_; }
  // The HTTP gateway's port, 0 when it is off.
  int http_port() const { return http_ ? http_->port() : 0; }
  // Rule 21's comparisons (tests wait on it with Flush()).
  ParityChecker* parity() const { return parity_.get(); }
  // The metrics port, 0 when metrics are off.
  int metrics_port() const { return exporter_ ? exporter_->port() : 0; }
  const metrics::ServiceMetrics& metrics() const { return *metrics_; }
  engine::Engine& engine() { return *engine_; }
  const BatchCounters& batch_counters() const {
    return decode_->batch_counters();
  }

  // Fleet mode: decode calls held until the replica joins its fleet (0 once
  // it serves, and without a fleet).
  size_t calls_held() const { return join_ ? join_->held() : 0; }

  // Stops accepting calls and reports NOT_SERVING; lets calls in progress
  // finish for up to `grace`; then fails what remains (SHUTTING_DOWN /
  // UNAVAILABLE) and returns once every call has ended. Idempotent.
  void Shutdown(absl::Duration grace);
  // Blocks until Shutdown has completed.
  void Wait();

  // Why no snapshot is loaded (OK when one is, or when none was asked for).
  const absl::Status& snapshot_status() const { return snapshot_status_; }
  // The snapshot in use, or null.
  std::shared_ptr<const snapshot::Snapshot> snapshot() const {
    return snapshots_->Current();
  }
  // Loads the snapshot file again (or `path`, when given) within
  // `snapshot_reload_timeout` and swaps it in; decodes in progress finish on
  // the old one. On failure the current snapshot stays. Thread-safe.
  absl::Status ReloadSnapshot(const std::string& path = "");
  // A load of the snapshot file for a SnapshotReloader: owns what it uses,
  // so it may outlive the server. DEADLINE_EXCEEDED names the flag.
  snapshot::SnapshotReloader::LoadFn SnapshotLoader() const;
  // Makes `loaded` the snapshot in use (metrics and health follow).
  void UseSnapshot(std::shared_ptr<const snapshot::Snapshot> loaded);

  // Reads the certificate files of every TLS listener (gRPC, the HTTP
  // gateway, the metrics) again and takes those that changed and load; new
  // connections get them, open ones keep theirs. Logs each listener's
  // outcome (server/certificate_reloader.h). Thread-safe.
  void ReloadCertificates();

 private:
  VinServer() = default;

  // The steps of Start, in order.
  // The snapshot store, and the snapshot at `options.snapshot_path` when
  // there is one (a failure is kept in snapshot_status_, not returned).
  void LoadSnapshot(const ServerOptions& options);
  // Fleet mode: the Redis fleet, and the engine's options that use it.
  absl::Status StartFleet(const FleetOptions& fleet_options,
                          engine::EngineOptions* engine_options);
  // The batch window, streams per connection and memory bound are usable.
  // Bulk jobs: in Redis with --redis_url, in --job_path's file otherwise,
  // or none.
  absl::Status StartJobs(const ServerOptions& options);
  static absl::Status CheckCallLimits(const ServerOptions& options);
  absl::Status StartMetricsExporter(const ServerOptions& options);
  // The reloader of the TLS listeners' certificates, once they listen.
  void StartCertificateReloader(absl::Duration interval);
  // The gRPC server, listening, with the decode and health services (and
  // reflection).
  absl::Status StartGrpc(
      const ServerOptions& options,
      const std::shared_ptr<grpc::ServerCredentials>& credentials);

  // Tells the metrics which snapshot is loaded.
  void NoteSnapshot();

  std::string snapshot_path_;
  absl::Duration snapshot_timeout_;
  std::string snapshot_sha256_;
  std::shared_ptr<const std::vector<snapshot::GoldenVin>> golden_;
  double golden_slack_ = 0.005;
  absl::Status snapshot_status_;
  std::unique_ptr<metrics::ServiceMetrics> metrics_;
  std::unique_ptr<snapshot::SnapshotStore> snapshots_;
  // Fleet mode: holds calls until the replica joins; outlives the fleet
  // (its callbacks) and is stopped before health and gRPC go.
  std::unique_ptr<FleetJoin> join_;
  std::unique_ptr<fleet::RedisFleet> fleet_;  // outlives the engine
  // Outlives the engine: closed (its queue committed) after the engine.
  std::unique_ptr<disk_cache::DiskCache> disk_;
  // Before the engine, which tells them of the breaker until it is gone.
  std::unique_ptr<HealthService> health_;
  // Outlives the engine, whose observer offers it live answers.
  std::unique_ptr<ParityChecker> parity_;
  std::unique_ptr<engine::EngineObserver> observer_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<DecodeService> decode_;
  std::unique_ptr<JobManager> jobs_;  // stopped before the engine
  std::unique_ptr<JobService> job_service_;
  std::unique_ptr<AdminService> admin_;
  // Before the engine goes: its waiters end first. Its counters outlive
  // it and the exporter.
  http::GatewayCounters http_counters_;
  std::unique_ptr<http::Gateway> http_;
  // gRPC's certificates: outlive the server that reads them.
  std::unique_ptr<GrpcTls> grpc_tls_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MetricsExporter> exporter_;
  // Last: stopped before the listeners it reloads go.
  std::unique_ptr<CertificateReloader> reloader_;
  int port_ = 0;
  std::atomic<bool> shut_down_{false};
};

}  // namespace server

#endif  // VIN_SERVER_SERVER_H_
