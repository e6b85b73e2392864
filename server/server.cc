#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "server/common/listener_checks.h"
#include "server/common/log.h"
#include "server/common/proto_mapping.h"
#include "server/fleet_setup.h"
#include "server/snapshot_loading.h"

namespace server {
namespace http::embedded {
extern const char kSnapshotGolden[];  // server/snapshot_golden.csv
}  // namespace http::embedded
namespace {

// The engine's observer for a server: the caller's (may be null), and the
// breaker's state as the health of vin.v1.VinDecoderService.upstream.
class ServerObserver final : public engine::EngineObserver {
 public:
  ServerObserver(engine::EngineObserver* inner, HealthService* health,
                 ParityChecker* parity)
      : inner_(inner), health_(health), parity_(parity) {}
  void OnLiveAnswer(const std::shared_ptr<const engine::DecodeResult>& result,
                    int model_year_hint) override {
    if (parity_ != nullptr) parity_->Offer(result, model_year_hint);
    if (inner_) inner_->OnLiveAnswer(result, model_year_hint);
  }
  void OnRetryScheduled(const std::string& vin,
                        const engine::Retrying& r) override {
    if (inner_) inner_->OnRetryScheduled(vin, r);
  }
  void OnFlightFinished(const engine::FlightSummary& s) override {
    if (inner_) inner_->OnFlightFinished(s);
  }
  void OnPushback(const vpic::UpstreamError& e, absl::Duration p) override {
    if (inner_) inner_->OnPushback(e, p);
  }
  void OnUpstreamRateChanged(double per_minute, double configured) override {
    if (inner_) inner_->OnUpstreamRateChanged(per_minute, configured);
  }
  void OnRetryRefused(const std::string& vin, absl::Duration d) override {
    if (inner_) inner_->OnRetryRefused(vin, d);
  }
  void OnBreakerChanged(const engine::BreakerChange& c) override {
    health_->SetUpstreamReachable(c.to == upstream::BreakerState::kClosed);
    if (inner_) inner_->OnBreakerChanged(c);
  }

 private:
  engine::EngineObserver* const inner_;
  HealthService* const health_;
  ParityChecker* const parity_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<VinServer>> VinServer::Start(
    ServerOptions options) {
  if (absl::Status st = CheckMetricsExposure(
          options.metrics_listen, options.metrics_tls, options.metrics_public);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckTlsReloadInterval(options.tls_reload_interval);
      !st.ok()) {
    return st;
  }
  if (options.http.listen.empty() &&
      (options.http.tls.enabled() || options.http.tls.mutual())) {
    return absl::InvalidArgumentError(
        "--http_tls_cert_file, --http_tls_key_file and "
        "--http_tls_client_ca_file need --http_listen");
  }
  auto grpc_tls = GrpcTls::Create(options.tls);
  if (!grpc_tls.ok()) return grpc_tls.status();
  std::unique_ptr<VinServer> s(new VinServer());
  s->grpc_tls_ = *std::move(grpc_tls);
  s->metrics_ = std::make_unique<metrics::ServiceMetrics>();
  s->metrics_->upstream_tenant_vins.SetMaxTenants(
      static_cast<size_t>(std::max(1, options.max_tenants)));
  s->health_ = std::make_unique<HealthService>(options.snapshot_max_age);
  {
    absl::StatusOr<std::vector<snapshot::GoldenVin>> golden =
        snapshot::ParseGolden(
            options.snapshot_golden.empty()
                ? absl::string_view(http::embedded::kSnapshotGolden)
                : absl::string_view(options.snapshot_golden));
    if (!golden.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--snapshot_golden: ", golden.status().message()));
    }
    s->golden_ = std::make_shared<const std::vector<snapshot::GoldenVin>>(
        *std::move(golden));
  }
  s->LoadSnapshot(options);
  options.engine.snapshots = s->snapshots_.get();
  options.engine.metrics = s->metrics_.get();
  options.engine.encoder = EncodeResult;
  options.engine.decoder = DecodeResultBytes;
  options.engine.as_cache_answer = CacheAnswerBytes;
  if (!options.cache_path.empty()) {
    disk_cache::Options d;
    d.path = options.cache_path;
    d.max_bytes = static_cast<uint64_t>(std::max<int64_t>(1, options.cache_disk_max_bytes));
    d.commit_interval = options.cache_commit_interval;
    d.keep_for = std::max({options.engine.cache_ttl, options.engine.reference_ttl,
                           options.engine.cache_stale_max});
    auto disk = disk_cache::DiskCache::Open(d, [](const std::string& warning) {
      log::Event(log::Level::kWarn, warning, {});
    });
    if (!disk.ok()) return disk.status();
    s->disk_ = *std::move(disk);
    options.engine.disk_cache = s->disk_.get();
  }
  s->parity_ = std::make_unique<ParityChecker>(
      options.parity, s->snapshots_.get(),
      [h = s->health_.get()](bool ok) { h->SetSnapshotParity(ok); },
      [](bool warning, const std::string& line) {
        log::Event(warning ? log::Level::kWarn : log::Level::kInfo, line, {});
      });
  s->observer_ = std::make_unique<ServerObserver>(
      options.engine.observer, s->health_.get(), s->parity_.get());
  options.engine.observer = s->observer_.get();
  if (!options.fleet.redis_url.empty()) {
    if (absl::Status st = s->StartFleet(options.fleet, &options.engine);
        !st.ok()) {
      return st;
    }
  }
  auto engine = engine::Engine::Create(options.engine);
  if (!engine.ok()) return engine.status();
  s->engine_ = *std::move(engine);
  if (absl::Status st = CheckCallLimits(options); !st.ok()) return st;
  if (absl::Status st = s->StartJobs(options); !st.ok()) return st;
  s->job_service_ =
      std::make_unique<JobService>(s->jobs_.get(), options.tenants);
  s->admin_ = std::make_unique<AdminService>(s->parity_.get(), options.tenants,
                                             options.admins);
  s->decode_ =
      std::make_unique<DecodeService>(s->engine_.get(), options.batch_window,
                                      s->metrics_.get(), options.tenants);
  if (!options.metrics_listen.empty()) {
    if (absl::Status st = s->StartMetricsExporter(options); !st.ok()) {
      return st;
    }
  }
  if (absl::Status st = s->StartGrpc(
          options, s->grpc_tls_ != nullptr ? s->grpc_tls_->credentials()
                                           : grpc::InsecureServerCredentials());
      !st.ok()) {
    return st;
  }
  if (!options.http.listen.empty()) {
    http::GatewayOptions h = options.http;
    h.cache_ttl = options.engine.cache_ttl;
    h.reference_ttl = options.engine.reference_ttl;
    h.stream_window = static_cast<size_t>(options.batch_window);
    h.counters = &s->http_counters_;
    h.jobs = s->jobs_.get();
    h.parity = [p = s->parity_.get()] { return p->Report(); };
    h.admins = options.admins;
    auto gateway = http::Gateway::Start(std::move(h), s->engine_.get());
    if (!gateway.ok()) return gateway.status();
    s->http_ = *std::move(gateway);
  }
  s->StartCertificateReloader(options.tls_reload_interval);
  return s;
}

void VinServer::LoadSnapshot(const ServerOptions& options) {
  snapshots_ = std::make_unique<snapshot::SnapshotStore>();
  snapshot_path_ = options.snapshot_path;
  snapshot_timeout_ = options.snapshot_reload_timeout;
  snapshot_sha256_ = options.snapshot_sha256;
  golden_slack_ = options.snapshot_golden_slack;
  if (!snapshot_path_.empty()) {
    const snapshot::LoadLimit limit(absl::Now() + snapshot_timeout_);
    auto loaded = SnapshotLoader()(limit);
    snapshot_status_ = loaded.status();
    if (loaded.ok()) UseSnapshot(*std::move(loaded));
  }
}

absl::Status VinServer::StartFleet(const FleetOptions& fleet_options,
                                   engine::EngineOptions* engine_options) {
  if (fleet_options.connect_timeout > absl::ZeroDuration()) {
    join_ = std::make_unique<FleetJoin>(
        fleet::RedactRedisUrl(fleet_options.redis_url),
        fleet_options.connect_timeout, health_.get());
  }
  auto fleet = StartRedisFleet(fleet_options, *engine_options, metrics_.get(),
                               join_.get());
  if (!fleet.ok()) return fleet.status();
  fleet_ = *std::move(fleet);
  engine_options->fleet = fleet_.get();
  engine_options->fleet_lease = fleet_options.lease;
  return absl::OkStatus();
}

absl::Status VinServer::StartJobs(const ServerOptions& options) {
  auto warn = [](const std::string& warning) {
    log::Event(log::Level::kWarn, warning, {});
  };
  auto info = [](const std::string& line) {
    log::Event(log::Level::kInfo, line, {});
  };
  absl::StatusOr<std::unique_ptr<JobManager>> jobs;
  if (!options.fleet.redis_url.empty()) {
    // A fleet's jobs live in Redis, where every replica finds them.
    if (!options.jobs.path.empty()) {
      return absl::InvalidArgumentError(
          "--job_path with --redis_url: a fleet keeps its jobs in Redis, "
          "where every replica finds them; drop --job_path");
    }
    auto store = StartRedisJobStore(options.fleet, options.engine,
                                    fleet_->replica(), warn);
    if (!store.ok()) return store.status();
    const std::string durability = (*store)->DurabilityWarning();
    if (!durability.empty()) warn(durability);
    jobs = JobManager::StartWith(*std::move(store), options.jobs, engine_.get(),
                                 clocks::Clock::Real(), info);
  } else if (!options.jobs.path.empty()) {
    jobs = JobManager::Start(options.jobs, engine_.get(), clocks::Clock::Real(),
                             warn, info);
  } else {
    return absl::OkStatus();
  }
  if (!jobs.ok()) return jobs.status();
  jobs_ = *std::move(jobs);
  return absl::OkStatus();
}

absl::Status VinServer::CheckCallLimits(const ServerOptions& options) {
  if (options.batch_window < 1) {
    return absl::InvalidArgumentError("batch window must be at least 1");
  }
  if (options.max_streams_per_connection < 1) {
    return absl::InvalidArgumentError(
        "--max_streams_per_connection must be at least 1");
  }
  if (options.max_memory_bytes < (int64_t{1} << 20)) {
    return absl::InvalidArgumentError("--max_memory must be at least 1 MiB");
  }
  return absl::OkStatus();
}

absl::Status VinServer::StartMetricsExporter(const ServerOptions& options) {
  MetricsSources sources;
  sources.service = metrics_.get();
  sources.batch = &decode_->batch_counters();
  if (!options.http.listen.empty()) sources.http = &http_counters_;
  sources.log_dropped = options.log_dropped;
  if (fleet_ != nullptr) {
    sources.redis_errors = [f = fleet_.get()] { return f->errors(); };
    sources.redis_commands = [f = fleet_.get()] { return f->commands(); };
    sources.fleet_events_rejected = [f = fleet_.get()] {
      return f->events_rejected();
    };
    sources.fleet_rejected = [f = fleet_.get()] {
      std::vector<LabelCount> out;
      for (size_t i = 0; i < fleet::kRejections; ++i) {
        const auto what = static_cast<fleet::Rejection>(i);
        out.push_back({fleet::RejectionName(what), f->rejected(what)});
      }
      return out;
    };
  }
  sources.disk = disk_.get();
  sources.jobs = jobs_.get();
  sources.parity = parity_.get();
  auto exporter = MetricsExporter::Start(
      options.metrics_listen, options.metrics_tls, std::move(sources));
  if (!exporter.ok()) return exporter.status();
  exporter_ = *std::move(exporter);
  return absl::OkStatus();
}

void VinServer::StartCertificateReloader(absl::Duration interval) {
  std::vector<CertificateReloader::Listener> listeners;
  if (grpc_tls_ != nullptr) {
    listeners.push_back({"grpc", [t = grpc_tls_.get()] { return t->Reload(); },
                         [t = grpc_tls_.get()] { return t->certificate(); }});
  }
  for (auto [name, gateway] :
       {std::pair<const char*, http::Gateway*>{"http", http_.get()},
        {"metrics", exporter_ != nullptr ? &exporter_->listener() : nullptr}}) {
    if (gateway == nullptr || !gateway->tls()) continue;
    listeners.push_back({name,
                         [gateway] { return gateway->ReloadCertificates(); },
                         [gateway] { return gateway->certificate(); }});
  }
  if (listeners.empty()) return;
  reloader_ =
      std::make_unique<CertificateReloader>(interval, std::move(listeners));
}

void VinServer::ReloadCertificates() {
  if (reloader_ != nullptr) reloader_->ReloadNow();
}

absl::Status VinServer::StartGrpc(
    const ServerOptions& options,
    const std::shared_ptr<grpc::ServerCredentials>& credentials) {
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &port_);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             options.max_streams_per_connection);
  builder.AddChannelArgument(
      GRPC_ARG_MAX_CONNECTION_IDLE_MS,
      static_cast<int>(std::min<int64_t>(
          INT32_MAX, absl::ToInt64Milliseconds(options.max_connection_idle))));
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      static_cast<int>(absl::ToInt64Milliseconds(options.min_client_ping_interval)));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  grpc::ResourceQuota quota("vin-server");
  quota.Resize(static_cast<size_t>(options.max_memory_bytes));
  builder.SetResourceQuota(quota);
  if (join_ != nullptr) {
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        hold;
    hold.push_back(join_->HoldCalls());
    builder.experimental().SetInterceptorCreators(std::move(hold));
  }
  builder.RegisterService(decode_.get());
  builder.RegisterService(health_.get());
  builder.RegisterService(job_service_.get());
  builder.RegisterService(admin_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (address in use, or not an address of this machine?)"));
  }
  return absl::OkStatus();
}

VinServer::~VinServer() {
  Shutdown(absl::ZeroDuration());
  if (join_ != nullptr) join_->Stop();  // also when Start failed half way
}

void VinServer::Shutdown(absl::Duration grace) {
  if (shut_down_.exchange(true) || server_ == nullptr) return;
  // Health says NOT_SERVING (and Watch streams end); the engine starts no
  // new upstream request and fails the decodes that wait for a retry or
  // for the rate cap; streams read no more items and end right after their
  // last answer, idle ones at once. What is left are the requests already
  // in flight, which may finish within the grace.
  health_->SetNotServing();
  // Calls still held for the fleet's join go on now, into the drain.
  if (join_ != nullptr) join_->Stop();
  // Jobs submit no more items; those in flight stay unfinished in the
  // store, to run again after the restart (rule 20).
  job_service_->Shutdown();
  if (jobs_ != nullptr) jobs_->Stop();
  engine_->Drain();
  decode_->Drain();
  // gRPC stops accepting calls at once and waits for the ones in progress.
  // If they are not done within the grace period, the engine fails what
  // remains, which finishes those calls; gRPC's own deadline, a little
  // later, is only a backstop.
  absl::Notification drained;
  std::thread waiter([&] {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace + absl::Seconds(5)));
    drained.Notify();
  });
  if (!drained.WaitForNotificationWithTimeout(grace)) engine_->Shutdown();
  waiter.join();
  engine_->Shutdown();
  // Its requests still waiting end with SHUTTING_DOWN (503) from the engine.
  if (http_ != nullptr) http_->Shutdown();
}

void VinServer::Wait() { server_->Wait(); }

absl::Status VinServer::ReloadSnapshot(const std::string& path) {
  const snapshot::LoadLimit limit(absl::Now() + snapshot_timeout_);
  auto loaded = LoadSnapshotFile(
      path.empty() ? snapshot_path_ : path, limit, snapshot_timeout_,
      SnapshotChecks{snapshot_sha256_, golden_, golden_slack_,
                     snapshots_.get()});
  if (!loaded.ok()) return loaded.status();
  UseSnapshot(*std::move(loaded));
  return absl::OkStatus();
}

snapshot::SnapshotReloader::LoadFn VinServer::SnapshotLoader() const {
  const SnapshotChecks checks{snapshot_sha256_, golden_, golden_slack_,
                              snapshots_.get()};
  return [path = snapshot_path_, timeout = snapshot_timeout_,
          checks](const snapshot::LoadLimit& limit) {
    return LoadSnapshotFile(path, limit, timeout, checks);
  };
}

void VinServer::UseSnapshot(std::shared_ptr<const snapshot::Snapshot> loaded) {
  snapshots_->Swap(std::move(loaded));
  NoteSnapshot();
}

void VinServer::NoteSnapshot() {
  if (auto snap = snapshots_->Current()) {
    metrics_->SetSnapshot(snap->info().sha256, snap->info().date);
    absl::Time data_time;
    std::string error;
    if (absl::ParseTime("%Y-%m-%d", snap->info().date, absl::UTCTimeZone(),
                        &data_time, &error)) {
      health_->SetSnapshot(data_time);
    } else {
      health_->SetSnapshot(absl::InfinitePast());  // undated: stale
    }
  } else {
    metrics_->ClearSnapshot();
    health_->SetSnapshot(absl::nullopt);
  }
}

}  // namespace server
