// The service's metrics (exported in Prometheus' text format by
// server/metrics_exporter). Every update is a relaxed atomic operation: no
// lock, no allocation, so the engine's loop and gRPC's threads may update
// them on their hot paths without ever waiting for a scrape.
//
// Thread-safe.
#ifndef VIN_METRICS_METRICS_H_
#define VIN_METRICS_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace metrics {

class Counter {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Gauge {
 public:
  void Set(double v) { v_.store(v, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

// Fixed buckets of seconds, from 1 ms to 60 s.
class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
      0.25,  0.5,    1,     2.5,  5,     10,   60};

  void Observe(absl::Duration d);

  struct Snapshot {
    std::array<uint64_t, kBounds.size()> cumulative{};  // per bound
    uint64_t count = 0;
    double sum_seconds = 0;
  };
  // Counts read one by one: a scrape during updates may be off by the
  // observations in progress, never torn.
  Snapshot Read() const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};  // + Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<int64_t> sum_nanos_{0};
};

// Label values, as enums so that updates index arrays.
enum class Source { kVpic, kCache, kSnapshot, kCount };
enum class Outcome { kDone, kFailed, kCount };
// The kind of request sent to vPIC: DecodeVinValues, DecodeVINValuesBatch,
// or any other endpoint (rule 18's reference requests).
enum class Endpoint { kSingle, kBatch, kReference, kCount };
enum class UpstreamResult { kOk, kRetryable, kRejected, kCancelled, kCount };
// engine::FailureReason, in its order (checked where they are mapped).
enum class Reason {
  kInvalidVin,
  kUpstreamUnavailable,
  kUpstreamRejected,
  kCancelled,
  kShuttingDown,
  kOverloaded,
  kDeadlineExceeded,
  kNoSnapshot,
  kInvalidRequest,
  kCount
};

const char* Name(Source s);
const char* Name(Outcome o);
const char* Name(Endpoint e);
const char* Name(UpstreamResult r);
// The FailureReason name without prefix, lower case ("upstream_unavailable").
const char* Name(Reason r);

template <typename E>
constexpr size_t N() {
  return static_cast<size_t>(E::kCount);
}
template <typename E>
constexpr size_t I(E e) {
  return static_cast<size_t>(e);
}

struct ServiceMetrics {
  // Terminal events of batch items and answers of unary calls.
  Counter decodes[N<Source>()][N<Outcome>()];
  Counter decode_failures[N<Reason>()];
  Histogram decode_duration[N<Source>()];

  // Requests to vPIC, counted when they end.
  Counter upstream_requests[N<Endpoint>()][N<UpstreamResult>()];
  Histogram upstream_request_duration[N<Endpoint>()];
  Counter upstream_vins;     // VINs carried by the requests sent
  Counter upstream_retries;  // attempts after the first, sent
  Counter retry_budget_refused;
  Counter upstream_pushback;
  Gauge upstream_rate_per_minute;  // effective; 0 when unlimited
  // The circuit breaker (rule 13): its state (0 closed, 1 open, 2 half
  // open), the transitions into each state, its probes by result (0
  // failed, 1 answered).
  Gauge upstream_breaker_state;
  Counter upstream_breaker_transitions[3];
  Counter upstream_breaker_probes[2];

  Counter coalesced_waiters;
  Counter cache_hits;
  Counter cache_misses;
  Gauge cache_entries;

  Gauge flights_in_progress;
  Gauge waiting_for_rate;   // flights queued for a token (or a slot)
  Gauge scheduler_pending;  // timers: retries, staggers, deadlines
  Gauge redis_up;           // fleet mode: 1 while Redis answers

  // Rule 17: the wait of a flight at the upstream queue before its request
  // started, by priority (0 interactive, 1 bulk); the share of the rate
  // bulk work may use now (its peak-hour share, or 1); VINs sent by tenant
  // and priority (below).
  Histogram upstream_wait[2];
  Gauge upstream_bulk_share;
  class TenantVins {
   public:
    // Tenants beyond `max` share the label "other".
    void SetMaxTenants(size_t max) {
      absl::MutexLock lock(&mu_);
      max_ = max;
    }
    void Add(const std::string& tenant, int priority, uint64_t n);
    struct Row {
      std::string tenant;
      uint64_t vins[2] = {0, 0};
    };
    std::vector<Row> Read() const;

   private:
    mutable absl::Mutex mu_;
    size_t max_ ABSL_GUARDED_BY(mu_) = 100;
    std::vector<Row> rows_ ABSL_GUARDED_BY(mu_);  // few: a scan is cheapest
  };
  TenantVins upstream_tenant_vins;

  // The loaded snapshot's labels (vin_snapshot_info); set on load and
  // reload, read by scrapes, never by the decode path.
  void SetSnapshot(std::string sha256, std::string data_date);
  void ClearSnapshot();
  bool Snapshot(std::string* sha256, std::string* data_date) const;

 private:
  mutable absl::Mutex snapshot_mu_;
  bool snapshot_loaded_ ABSL_GUARDED_BY(snapshot_mu_) = false;
  std::string snapshot_sha256_ ABSL_GUARDED_BY(snapshot_mu_);
  std::string snapshot_date_ ABSL_GUARDED_BY(snapshot_mu_);
};

}  // namespace metrics

#endif  // VIN_METRICS_METRICS_H_
