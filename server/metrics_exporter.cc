#include "server/metrics_exporter.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "disk_cache/disk_cache.h"
#include "domain/priority.h"
#include "metrics/process.h"
#include "server/job_metrics.h"
#include "server/metric_family.h"
#include "server/parity_metrics.h"

namespace server {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// What every Prometheus target exposes: the build and the process.
void AddBuildAndProcess(std::vector<MetricFamily>* out) {
  MetricFamily info = Family(
      "vin_build_info", "1; the labels say which build of vin-server runs.",
      MetricType::Gauge);
  info.metric.push_back(Sample(
      1, MetricType::Gauge,
      {{"version", VIN_BUILD_VERSION}, {"revision", VIN_BUILD_REVISION}}));
  out->push_back(std::move(info));
  const metrics::ProcessStats p = metrics::ReadProcessStats();
  AddCounterIf(out, "process_cpu_seconds_total",
               "Total user and system CPU time spent in seconds.",
               p.cpu_seconds);
  AddGaugeIf(out, "process_resident_memory_bytes",
             "Resident memory size in bytes.", p.resident_bytes);
  AddGaugeIf(out, "process_open_fds", "Number of open file descriptors.",
             p.open_fds);
  AddGaugeIf(out, "process_start_time_seconds",
             "Start time of the process since unix epoch in seconds.",
             p.start_time_seconds);
}

using metrics::Endpoint;
using metrics::N;
using metrics::Name;
using metrics::Outcome;
using metrics::Reason;
using metrics::ServiceMetrics;
using metrics::Source;
using metrics::UpstreamResult;

// vin_decodes_total and vin_decode_failures_total.
void AddDecodeCounts(const ServiceMetrics& m, std::vector<MetricFamily>* out) {
  MetricFamily decodes = Family(
      "vin_decodes_total",
      "Decodes answered (batch items' terminal events and unary answers), by "
      "source and outcome.",
      MetricType::Counter);
  for (size_t s = 0; s < N<Source>(); ++s) {
    for (size_t o = 0; o < N<Outcome>(); ++o) {
      decodes.metric.push_back(Sample(
          static_cast<double>(m.decodes[s][o].value()), MetricType::Counter,
          {{"source", Name(static_cast<Source>(s))},
           {"outcome", Name(static_cast<Outcome>(o))}}));
    }
  }
  out->push_back(std::move(decodes));

  MetricFamily failures =
      Family("vin_decode_failures_total", "Failed decodes, by reason.",
             MetricType::Counter);
  for (size_t r = 0; r < N<Reason>(); ++r) {
    failures.metric.push_back(
        Sample(static_cast<double>(m.decode_failures[r].value()),
               MetricType::Counter, {{"reason", Name(static_cast<Reason>(r))}}));
  }
  out->push_back(std::move(failures));
}

// The requests to vPIC by endpoint and result, and the VINs they carried.
void AddUpstreamRequests(const ServiceMetrics& m,
                         std::vector<MetricFamily>* out) {
  MetricFamily requests = Family(
      "vin_upstream_requests_total",
      "Requests to vPIC, by endpoint (single DecodeVinValues or "
      "DecodeVINValuesBatch) and result, counted when they end.",
      MetricType::Counter);
  for (size_t e = 0; e < N<Endpoint>(); ++e) {
    for (size_t r = 0; r < N<UpstreamResult>(); ++r) {
      requests.metric.push_back(Sample(
          static_cast<double>(m.upstream_requests[e][r].value()),
          MetricType::Counter,
          {{"endpoint", Name(static_cast<Endpoint>(e))},
           {"result", Name(static_cast<UpstreamResult>(r))}}));
    }
  }
  out->push_back(std::move(requests));

  AddCounter(out, "vin_upstream_vins_total",
             "VINs carried by the requests sent to vPIC, batch or not.",
             m.upstream_vins);
}

// Rule 17: who the VINs sent were for, how long flights waited, and the
// share of the rate bulk work may use now.
void AddUpstreamSharing(const ServiceMetrics& m,
                        std::vector<MetricFamily>* out) {
  MetricFamily by_tenant = Family(
      "vin_upstream_tenant_vins_total",
      "VINs sent to vPIC by tenant (beyond --max_tenants: \"other\") and "
      "priority.",
      MetricType::Counter);
  for (const auto& row : m.upstream_tenant_vins.Read()) {
    for (int p = 0; p < 2; ++p) {
      by_tenant.metric.push_back(
          Sample(static_cast<double>(row.vins[p]), MetricType::Counter,
                 {{"tenant", row.tenant},
                  {"priority",
                   domain::PriorityLabel(static_cast<domain::Priority>(p))}}));
    }
  }
  out->push_back(std::move(by_tenant));
  MetricFamily wait =
      Family("vin_upstream_wait_seconds",
             "How long a flight waited at the upstream queue (for a token, its "
             "turn, or bulk's share) before its request started, by priority.",
             MetricType::Histogram);
  for (int p = 0; p < 2; ++p) {
    wait.metric.push_back(HistogramSample(
        m.upstream_wait[p],
        {{"priority",
          domain::PriorityLabel(static_cast<domain::Priority>(p))}}));
  }
  out->push_back(std::move(wait));
  AddGauge(out, "vin_upstream_bulk_share_ratio",
           "The share of the rate bulk work may use now: --bulk_peak_share "
           "during --peak_hours, else 1.",
           m.upstream_bulk_share.value());
}

// Retries, refused retries, pushback and the rate cap.
void AddUpstreamPacing(const ServiceMetrics& m,
                       std::vector<MetricFamily>* out) {
  AddCounter(out, "vin_upstream_retries_total",
             "Attempts after a decode's first, sent to vPIC.",
             m.upstream_retries);
  AddCounter(out, "vin_retry_budget_refused_total",
             "Retries the retry budget refused (the decode failed, retryable).",
             m.retry_budget_refused);
  AddCounter(out, "vin_upstream_pushback_total",
             "Pauses of every upstream request after a 429 or a Retry-After.",
             m.upstream_pushback);
  AddGauge(out, "vin_upstream_rate_per_minute",
           "The effective upstream rate cap, requests per minute (0: "
           "unlimited).",
           m.upstream_rate_per_minute.value());
}

// The circuit breaker in front of vPIC: its state, changes and probes.
void AddUpstreamBreaker(const ServiceMetrics& m,
                        std::vector<MetricFamily>* out) {
  AddGauge(out, "vin_upstream_breaker_state",
           "The circuit breaker in front of vPIC: 0 closed, 1 open (nothing "
           "is sent), 2 half open (one probe under way).",
           m.upstream_breaker_state.value());
  MetricFamily transitions =
      Family("vin_upstream_breaker_transitions_total",
             "Changes of the circuit breaker's state, by the state entered.",
             MetricType::Counter);
  const char* const states[] = {"closed", "open", "half_open"};
  for (size_t s = 0; s < 3; ++s) {
    transitions.metric.push_back(
        Sample(static_cast<double>(m.upstream_breaker_transitions[s].value()),
               MetricType::Counter, {{"to", states[s]}}));
  }
  out->push_back(std::move(transitions));
  MetricFamily probes = Family(
      "vin_upstream_breaker_probes_total",
      "Probes of vPIC by the open breaker, by result (answered closes it, "
      "failed reopens it).",
      MetricType::Counter);
  const char* const results[] = {"failed", "answered"};
  for (size_t r = 0; r < 2; ++r) {
    probes.metric.push_back(
        Sample(static_cast<double>(m.upstream_breaker_probes[r].value()),
               MetricType::Counter, {{"result", results[r]}}));
  }
  out->push_back(std::move(probes));
}

// The requests to vPIC: by endpoint and result, the VINs they carried, who
// for, retries, pushback, the rate cap and the breaker (in that order).
void AddUpstream(const ServiceMetrics& m, std::vector<MetricFamily>* out) {
  AddUpstreamRequests(m, out);
  AddUpstreamSharing(m, out);
  AddUpstreamPacing(m, out);
  AddUpstreamBreaker(m, out);
}

// The engine's sharing and queues: coalesced callers, the cache, flights,
// rate waits, scheduled wake-ups.
void AddEngineState(const ServiceMetrics& m, std::vector<MetricFamily>* out) {
  AddCounter(out, "vin_coalesced_waiters_total",
             "Callers that joined a decode of the same VIN already running.",
             m.coalesced_waiters);
  AddCounter(out, "vin_cache_hits_total",
             "Decodes answered from the cache of finished decodes.",
             m.cache_hits);
  AddCounter(out, "vin_cache_misses_total",
             "Live decodes the cache could not answer.", m.cache_misses);
  AddGauge(out, "vin_cache_entries", "Finished decodes in the cache.",
           m.cache_entries.value());
  AddGauge(out, "vin_flights_in_progress",
           "Decodes in progress (one per VIN, whatever its callers).",
           m.flights_in_progress.value());
  AddGauge(out, "vin_waiting_for_rate",
           "Decodes queued for their turn under the upstream rate cap.",
           m.waiting_for_rate.value());
  AddGauge(out, "vin_scheduler_pending",
           "Pending wake-ups: retries, first-attempt staggers, deadlines.",
           m.scheduler_pending.value());
}

void AddBatchGauges(const BatchCounters& batch,
                    std::vector<MetricFamily>* out) {
  AddGauge(out, "vin_batch_streams_open", "DecodeBatch streams open.",
           static_cast<double>(batch.streams.load()));
  AddGauge(out, "vin_batch_items_in_window",
           "Batch items read and not yet answered, all streams together.",
           static_cast<double>(batch.items_outstanding.load()));
  AddGauge(out, "vin_batch_streams_held_by_reader",
           "DecodeBatch streams whose window is full of answers their "
           "client has not read: they read no more items until it does.",
           static_cast<double>(batch.streams_held_by_reader.load()));
}

// The HTTP gateway's connections (rule 19: the caps and accept errors).
void AddHttp(const http::GatewayCounters& h, std::vector<MetricFamily>* out) {
  AddGauge(out, "vin_http_connections_open", "HTTP gateway connections open.",
           static_cast<double>(h.connections_open.load()));
  MetricFamily refused =
      Family("vin_http_connections_refused_total",
             "HTTP connections refused at once: over a client address's share "
             "(429) or over --http_max_connections (503); on TLS closed "
             "unanswered.",
             MetricType::Counter);
  refused.metric.push_back(
      Sample(static_cast<double>(h.refused_per_client.load()),
             MetricType::Counter, {{"limit", "per_client"}}));
  refused.metric.push_back(Sample(static_cast<double>(h.refused_global.load()),
                                  MetricType::Counter, {{"limit", "global"}}));
  out->push_back(std::move(refused));
  AddCounter(out, "vin_http_accept_errors_total",
             "Failed accepts of HTTP connections (out of file descriptors), "
             "each followed by a back-off.",
             h.accept_errors.load());
  MetricFamily requests =
      Family("vin_http_request_duration_seconds",
             "HTTP requests answered, by route and status code: time from the "
             "request's head to its answer (a stream's: to its end).",
             MetricType::Histogram);
  for (const auto& series : h.requests.Read()) {
    requests.metric.push_back(HistogramSample(
        series.snapshot,
        {{"route", series.route}, {"code", absl::StrCat(series.code)}}));
  }
  out->push_back(std::move(requests));
}

// The upstream request and decode duration histograms.
void AddDurations(const ServiceMetrics& m, std::vector<MetricFamily>* out) {
  MetricFamily upstream_duration =
      Family("vin_upstream_request_duration_seconds",
             "Time from sending a request to vPIC to its answer.",
             MetricType::Histogram);
  for (size_t e = 0; e < N<Endpoint>(); ++e) {
    upstream_duration.metric.push_back(
        HistogramSample(m.upstream_request_duration[e],
                        {{"endpoint", Name(static_cast<Endpoint>(e))}}));
  }
  out->push_back(std::move(upstream_duration));

  MetricFamily decode_duration = Family(
      "vin_decode_duration_seconds",
      "Time from a decode's request to its answer, by the answer's source.",
      MetricType::Histogram);
  for (size_t s = 0; s < N<Source>(); ++s) {
    decode_duration.metric.push_back(HistogramSample(
        m.decode_duration[s], {{"source", Name(static_cast<Source>(s))}}));
  }
  out->push_back(std::move(decode_duration));
}

// vin_snapshot_info, while a snapshot is loaded.
void AddSnapshotInfo(const ServiceMetrics& m, absl::Time now,
                     std::vector<MetricFamily>* out) {
  std::string sha256, date;
  if (!m.Snapshot(&sha256, &date)) return;
  MetricFamily info = Family(
      "vin_snapshot_info", "1 while an offline vPIC snapshot is loaded.",
      MetricType::Gauge);
  info.metric.push_back(Sample(
      1, MetricType::Gauge, {{"sha256", sha256}, {"data_date", date}}));
  out->push_back(std::move(info));
  absl::Time data_time;
  std::string error;
  if (absl::ParseTime("%Y-%m-%d", date, absl::UTCTimeZone(), &data_time,
                      &error)) {
    AddGauge(out, "vin_snapshot_age_seconds",
             "How old the loaded snapshot's data is (its newest pattern "
             "change); the snapshot's health turns NOT_SERVING past "
             "--snapshot_max_age.",
             absl::ToDoubleSeconds(now - data_time));
  }
}

// What the sources besides ServiceMetrics give, when they are there: the
// dropped log lines, and Redis in fleet mode.
void AddLogAndRedis(const MetricsSources& src, std::vector<MetricFamily>* out) {
  const ServiceMetrics& m = *src.service;
  if (src.log_dropped) {
    AddCounter(out, "vin_log_dropped_total",
               "Log lines dropped because the log queue was full (logging "
               "never blocks the decode path).",
               src.log_dropped());
  }
  if (src.disk != nullptr) {
    const disk_cache::DiskCache::Stats d = src.disk->stats();
    AddGauge(out, "vin_cache_disk_entries",
             "Finished decodes in the cache file (--cache_path).",
             static_cast<double>(d.entries));
    AddGauge(out, "vin_cache_disk_bytes",
             "Bytes of the cache file's rows (bounded by "
             "--cache_disk_max_bytes).",
             static_cast<double>(d.bytes));
    AddCounter(out, "vin_cache_disk_dropped_total",
               "Decodes not written to the cache file because its write "
               "queue was full (a decode never waits for the disk).",
               d.dropped);
    AddCounter(out, "vin_cache_disk_corrupt_total",
               "Rows of the cache file that did not parse: deleted, never "
               "answered.",
               d.corrupt);
  }
  if (src.redis_errors) {
    AddGauge(out, "vin_redis_up",
             "1 while Redis answers (fleet mode); 0 while this replica "
             "decodes alone.",
             m.redis_up.value());
    AddCounter(out, "vin_redis_errors_total",
               "Redis commands that failed or timed out (each one's caller "
               "went on without Redis).",
               src.redis_errors());
  }
  if (src.redis_commands) {
    AddCounter(out, "vin_redis_commands_total",
               "Commands sent to Redis (fleet mode), each a round trip.",
               src.redis_commands());
  }
  if (src.fleet_events_rejected) {
    AddCounter(out, "vin_fleet_events_rejected_total",
               "Events of the fleet's channel dropped: they did not parse as "
               "a vin.fleet.v1.FleetEvent, or failed its checks (fleet mode; "
               "the event_* kinds of vin_fleet_rejected_total).",
               src.fleet_events_rejected());
  }
  if (src.fleet_rejected) {
    MetricFamily f = Family(
        "vin_fleet_rejected_total",
        "Values read from Redis that were not believed (fleet mode), by what "
        "was wrong: a cached result is deleted and its VIN decoded live, an "
        "event is dropped.",
        MetricType::Counter);
    for (const LabelCount& c : src.fleet_rejected()) {
      f.metric.push_back(Sample(static_cast<double>(c.count),
                                MetricType::Counter, {{"what", c.label}}));
    }
    out->push_back(std::move(f));
  }
}

std::vector<MetricFamily> CollectAll(const MetricsSources& src) {
  const ServiceMetrics& m = *src.service;
  std::vector<MetricFamily> out;
  AddBuildAndProcess(&out);
  AddDecodeCounts(m, &out);
  AddUpstream(m, &out);
  AddEngineState(m, &out);
  if (src.batch != nullptr) AddBatchGauges(*src.batch, &out);
  if (src.http != nullptr) AddHttp(*src.http, &out);
  AddDurations(m, &out);
  AddSnapshotInfo(m, src.wall_now ? src.wall_now() : absl::Now(), &out);
  AddLogAndRedis(src, &out);
  if (src.jobs != nullptr) AddJobMetrics(*src.jobs, &out);
  if (src.parity != nullptr) AddParityMetrics(*src.parity, &out);
  return out;
}

}  // namespace

std::string RenderMetrics(const MetricsSources& sources) {
  return prometheus::TextSerializer().Serialize(CollectAll(sources));
}

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const std::string& listen, const TlsOptions& tls, MetricsSources sources) {
  http::GatewayOptions o;
  o.listen = listen;
  o.name = "metrics";
  o.flag_prefix = "--metrics";
  o.tls = tls;
  o.metrics = [sources = std::move(sources)] { return RenderMetrics(sources); };
  // A scraper or two: one thread, and few connections, each client's
  // share of them smaller still.
  o.threads = 1;
  o.max_connections = kMaxConnections;
  o.max_connections_per_client = kMaxConnectionsPerClient;
  auto listener = http::Gateway::Start(std::move(o), /*engine=*/nullptr);
  if (!listener.ok()) {
    return absl::Status(
        listener.status().code(),
        absl::StrCat("cannot serve metrics on ", listen, ": ",
                     listener.status().message(),
                     absl::IsUnavailable(listener.status())
                         ? " (address in use, or not an address of this "
                           "machine?)"
                         : ""));
  }
  return std::unique_ptr<MetricsExporter>(
      new MetricsExporter(*std::move(listener)));
}

MetricsExporter::MetricsExporter(std::unique_ptr<http::Gateway> listener)
    : listener_(std::move(listener)) {}

MetricsExporter::~MetricsExporter() = default;

}  // namespace server
