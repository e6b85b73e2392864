// vin-server: the VIN decode gRPC service.
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "fleet/redis_url.h"
#include "server/common/listener_checks.h"
#include "server/common/log.h"
#include "server/env_flags.h"
#include "server/flags.h"
#include "server/log_observer.h"
#include "server/server.h"
#include "snapshot/snapshot_reloader.h"

namespace {

using server::log::Field;

void Info(absl::string_view message, const std::vector<Field>& fields = {}) {
  server::log::Event(server::log::Level::kInfo, message, fields);
}

// Usage errors exit 2, before anything is logged.
int UsageError(const std::string& message) {
  std::cerr << "vin-server: " << message << "\nTry 'vin-server --help'."
            << std::endl;
  return 2;
}

// Rule 19: connections are bounded by the server's own caps, not by a
// low default of file descriptors: the soft limit is raised to the hard
// one at start. Returns the limit in force, and the soft limit before.
std::pair<rlim_t, rlim_t> RaiseFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return {0, 0};
  const rlim_t before = r.rlim_cur;
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &r) != 0) r.rlim_cur = before;
  }
  return {r.rlim_cur, before};
}

void LogSnapshot(const server::VinServer& s) {
  if (auto snap = s.snapshot()) {
    const auto& info = snap->info();
    Info("offline snapshot loaded",
         {{"path", info.path},
          {"data_date", info.date},
          {"sha256", info.sha256},
          {"load_seconds", absl::ToDoubleSeconds(info.load_time)},
          {"memory_mb", static_cast<int64_t>(snap->MemoryBytes() >> 20)}});
  }
}

// ", TLS" or ", mutual TLS" after a listener's port ("" for plaintext).
const char* Security(const server::TlsOptions& tls) {
  return !tls.enabled() ? "" : tls.mutual() ? ", mutual TLS" : ", TLS";
}

void LogStarted(const server::ServerOptions& options,
                const server::VinServer& server,
                std::pair<rlim_t, rlim_t> files) {
  const engine::EngineOptions& e = options.engine;
  const char* security = options.tls.cert_file.empty()          ? "plaintext"
                         : options.tls.client_ca_file.empty() ? "TLS"
                                                              : "mutual TLS";
  Info(absl::StrFormat("vin-server listening on %s (port %d, %s)",
                       options.listen, server.port(), security),
       {{"vpic", e.vpic_base_url},
        {"retry_base", absl::FormatDuration(e.retry_base)},
        {"retry_cap", absl::FormatDuration(e.retry_cap)},
        {"max_attempts", e.max_attempts},
        {"upstream_concurrency", e.max_upstream_concurrency},
        {"upstream_rate", e.budget.rate_per_minute > 0
                              ? absl::StrFormat("%.0f/min",
                                                e.budget.rate_per_minute)
                              : std::string("unlimited")},
        {"upstream_burst", e.budget.burst},
        {"upstream_batch_max", e.upstream_batch_max},
        {"retry_budget", e.budget.retry_ratio < 0
                             ? std::string("off")
                             : absl::StrFormat("%.2f", e.budget.retry_ratio)},
        {"retry_budget_min", e.budget.retry_min_per_second}});
  if (!options.fleet.redis_url.empty()) {
    Info("fleet mode: cache, flights and the NHTSA budget shared in Redis",
         {{"redis", fleet::RedactRedisUrl(options.fleet.redis_url)},
          {"redis_password_file", options.fleet.redis_password_file},
          {"signed", options.fleet.secret_file.empty()
                         ? std::string("no (no --fleet_secret_file)")
                         : std::string("yes (HMAC-SHA256)")},
          {"key_prefix", options.fleet.key_prefix},
          {"fleet_size_hint", options.fleet.size_hint},
          {"lease", absl::FormatDuration(options.fleet.lease)},
          {"redis_connect_timeout",
           absl::FormatDuration(options.fleet.connect_timeout)}});
  }
  Info(absl::StrFormat("file descriptors: at most %d (soft limit was %d)",
                       static_cast<int64_t>(files.first),
                       static_cast<int64_t>(files.second)));
  if (server.metrics_port() != 0) {
    Info(absl::StrFormat("metrics on %s://%s/metrics (port %d%s)",
                         options.metrics_tls.enabled() ? "https" : "http",
                         options.metrics_listen, server.metrics_port(),
                         Security(options.metrics_tls)));
  }
  if (server.http_port() != 0) {
    Info(absl::StrFormat("HTTP gateway on %s://%s/ (port %d%s)",
                         options.http.tls.enabled() ? "https" : "http",
                         options.http.listen, server.http_port(),
                         Security(options.http.tls)));
  }
  if (options.snapshot_path.empty()) {
    Info("no --snapshot_path: live decodes only");
  } else if (!server.snapshot_status().ok()) {
    server::log::Event(
        server::log::Level::kWarn,
        "starting without the offline snapshot: live decodes only; SIGHUP "
        "retries the load",
        {{"error", server.snapshot_status().ToString()}});
  } else {
    LogSnapshot(server);
  }
}

// What a SIGHUP reload came to (on the reloader's thread).
void OnReloaded(server::VinServer& server,
                snapshot::SnapshotReloader::Loaded loaded) {
  if (loaded.ok()) {
    server.UseSnapshot(*std::move(loaded));
    // The replaced index (tens of MB in many small blocks) is freed unless
    // a decode still holds it: hand the allocator's free pages back to the
    // system, so that RSS does not keep a second index after every reload.
    malloc_trim(0);
    LogSnapshot(server);
  } else if (absl::IsCancelled(loaded.status())) {
    Info("snapshot reload cancelled: the server is stopping");
  } else {
    server::log::Event(
        server::log::Level::kError,
        absl::IsDeadlineExceeded(loaded.status())
            ? "snapshot reload abandoned: past --snapshot_reload_timeout, "
              "keeping the current one"
            : "snapshot reload failed, keeping the current one",
        {{"error", loaded.status().ToString()}});
  }
}

// Parses the command line, after the VIN_<FLAG> variables so that the
// command line's flags win (--flagfile and --fromenv are abseil's own).
// --help lists the server's own flags (server/flags_*.cc) by group, under
// each group's title; --helpfull adds abseil's.
void ParseFlags(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves vin.v1.VinDecoderService (gRPC), decoding VINs with NHTSA vPIC.\n"
      "Example: vin-server --listen=127.0.0.1:50051");
  absl::FlagsUsageConfig usage;
  usage.normalize_filename = server::FlagFileTitle;
  usage.contains_helpshort_flags = server::IsServerFlagFile;
  usage.contains_help_flags = server::IsServerFlagFile;
  absl::SetFlagsUsageConfig(usage);
  std::vector<std::string> env_flags =
      server::FlagsFromEnvironment(environ, [](absl::string_view name) {
        const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
        return flag != nullptr && server::IsServerFlagFile(flag->Filename());
      });
  std::vector<char*> args = {argv[0]};
  for (std::string& f : env_flags) args.push_back(f.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  absl::ParseCommandLine(static_cast<int>(args.size() - 1), args.data());
}

// Blocks the stop signals (and SIGHUP) in every thread, before the first
// one (the logger's) starts: a thread that left them unblocked could take a
// SIGTERM and die of it. main waits for them (ServeUntilStopped).
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

absl::Status StartLogging() {
  const size_t queue_lines = static_cast<size_t>(
      std::max<int64_t>(16, absl::GetFlag(FLAGS_log_queue_lines)));
  return server::log::Init(absl::GetFlag(FLAGS_log_level),
                           absl::GetFlag(FLAGS_log_format), queue_lines);
}

// Rule 19: the gateway may not be what exhausts the descriptors (gRPC
// 1.51 stops accepting for good after a failed accept): its connections
// are lowered to fit the file limit in force.
server::ConnectionBudget FitHttpToFiles(server::ServerOptions& options,
                                        std::pair<rlim_t, rlim_t> files) {
  const server::ConnectionBudget budget = server::FitConnectionsToFiles(
      files.first == RLIM_INFINITY ? 0 : static_cast<int64_t>(files.first),
      absl::GetFlag(FLAGS_fd_reserve), options.http.max_connections,
      options.metrics_listen.empty()
          ? 0
          : server::MetricsExporter::kMaxConnections);
  options.http.max_connections = budget.http_max_connections;
  return budget;
}

void LogConnectionBudget(const server::ConnectionBudget& budget,
                         int asked_connections) {
  Info(absl::StrFormat(
      "HTTP connections: at most %d%s (%d file descriptors kept for gRPC, "
      "vPIC, Redis and files; --fd_reserve)",
      budget.http_max_connections,
      budget.lowered
          ? absl::StrFormat(", --http_max_connections %d lowered to fit",
                            asked_connections)
          : "",
      budget.reserve));
}

// SIGHUP reloads run on the reloaders' threads, never on this one: this
// thread only waits for signals, so SIGTERM is obeyed whatever a
// snapshot reload is doing (it is abandoned), and after a certificate
// reload, which reads bounded regular files only (util/read_file.h).
// Returns when SIGTERM or SIGINT comes, with `reloader` stopped; says the
// stop will take up to `grace`.
void ServeUntilStopped(server::VinServer& vin,
                       snapshot::SnapshotReloader& reloader,
                       const sigset_t& signals, absl::Duration grace) {
  int sig = 0;
  for (;;) {
    sigwait(&signals, &sig);
    if (sig != SIGHUP) break;
    vin.ReloadCertificates();
    switch (reloader.Request()) {
      case snapshot::SnapshotReloader::Requested::kStarted:
        Info("SIGHUP received: reloading the offline snapshot");
        break;
      case snapshot::SnapshotReloader::Requested::kFolded:
        Info(
            "SIGHUP received while a snapshot reload is in progress: one "
            "more reload follows it");
        break;
      case snapshot::SnapshotReloader::Requested::kStopped:
        break;
    }
  }
  Info(absl::StrCat(sig == SIGTERM ? "SIGTERM" : "SIGINT",
                    " received: not accepting calls; finishing work for up to ",
                    absl::FormatDuration(grace)));
  // A reload in progress is cancelled: its load notices within
  // milliseconds, and the stop waits at most 2 s for it to end.
  reloader.Stop();
}

}  // namespace

int main(int argc, char** argv) {
  ParseFlags(argc, argv);
  // A client or a log reader that goes away must not kill the process.
  signal(SIGPIPE, SIG_IGN);
  const sigset_t signals = BlockStopSignals();
  if (absl::Status s = StartLogging(); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  absl::StatusOr<server::ServerOptions> options = server::OptionsFromFlags();
  if (!options.ok()) return UsageError(std::string(options.status().message()));
  if (absl::GetFlag(FLAGS_fd_reserve) < -1) {
    return UsageError(absl::StrCat(
        "--fd_reserve must be -1 (a quarter of the file limit) or at least 0, "
        "got ",
        absl::GetFlag(FLAGS_fd_reserve)));
  }
  const std::pair<rlim_t, rlim_t> files = RaiseFileLimit();
  const int asked_connections = options->http.max_connections;
  const server::ConnectionBudget budget = FitHttpToFiles(*options, files);
  server::LogObserver observer;
  options->engine.observer = &observer;
  auto server = server::VinServer::Start(*options);
  if (!server.ok() && absl::IsInvalidArgument(server.status())) {
    // A setting only the start could check (an address, a TLS file's
    // pairing, a limit): a usage error as well.
    server::log::Stop(absl::Seconds(2));
    return UsageError(std::string(server.status().message()));
  }
  if (!server.ok()) {
    server::log::Event(server::log::Level::kCritical, "cannot start",
                       {{"error", server.status().ToString()}});
    server::log::Stop(absl::Seconds(2));
    return EXIT_FAILURE;
  }
  LogStarted(*options, **server, files);
  if ((*server)->http_port() != 0 && budget.limited) {
    LogConnectionBudget(budget, asked_connections);
  }
  server::VinServer& vin = **server;
  snapshot::SnapshotReloader reloader(
      vin.SnapshotLoader(),
      [&vin](snapshot::SnapshotReloader::Loaded loaded) {
        OnReloaded(vin, std::move(loaded));
      },
      options->snapshot_reload_timeout);
  const absl::Duration grace = absl::GetFlag(FLAGS_shutdown_grace);
  ServeUntilStopped(vin, reloader, signals, grace);
  (*server)->Shutdown(grace);
  server->reset();  // the engine and gRPC are gone before the logger stops
  Info("stopped");
  // A stdout nobody reads cannot hold the process: the log is given a
  // moment to drain, then the process leaves without it.
  if (!server::log::Stop(absl::Seconds(2))) std::_Exit(EXIT_SUCCESS);
  return EXIT_SUCCESS;
}
