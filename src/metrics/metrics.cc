#include "metrics/metrics.h"

#include <utility>

namespace metrics {

void Histogram::Observe(absl::Duration d) {
  const double s = absl::ToDoubleSeconds(d);
  size_t i = 0;
  while (i < kBounds.size() && s > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(absl::ToInt64Nanoseconds(d), std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot out;
  uint64_t running = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out.cumulative[i] = running;
  }
  running += buckets_[kBounds.size()].load(std::memory_order_relaxed);
  out.count = running;  // consistent with the buckets, unlike count_
  out.sum_seconds =
      static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
  return out;
}

const char* Name(Source s) {
  switch (s) {
    case Source::kVpic:
      return "vpic";
    case Source::kCache:
      return "cache";
    default:
      return "snapshot";
  }
}

const char* Name(Outcome o) { return o == Outcome::kDone ? "done" : "failed"; }

const char* Name(Endpoint e) {
  switch (e) {
    case Endpoint::kSingle:
      return "single";
    case Endpoint::kBatch:
      return "batch";
    default:
      return "reference";
  }
}

const char* Name(UpstreamResult r) {
  switch (r) {
    case UpstreamResult::kOk:
      return "ok";
    case UpstreamResult::kRetryable:
      return "retryable";
    case UpstreamResult::kRejected:
      return "rejected";
    default:
      return "cancelled";
  }
}

const char* Name(Reason r) {
  static constexpr const char* kNames[] = {
      "invalid_vin",       "upstream_unavailable", "upstream_rejected",
      "cancelled",         "shutting_down",        "overloaded",
      "deadline_exceeded", "no_snapshot",          "invalid_request"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == N<Reason>());
  return kNames[I(r)];
}

void ServiceMetrics::TenantVins::Add(const std::string& tenant, int priority,
                                     uint64_t n) {
  if (priority < 0 || priority > 1 || n == 0) return;
  absl::MutexLock lock(&mu_);
  for (Row& r : rows_) {
    if (r.tenant == tenant) {
      r.vins[priority] += n;
      return;
    }
  }
  const std::string label = rows_.size() < max_ ? tenant : "other";
  for (Row& r : rows_) {
    if (r.tenant == label) {
      r.vins[priority] += n;
      return;
    }
  }
  rows_.push_back(Row{label, {0, 0}});
  rows_.back().vins[priority] += n;
}

std::vector<ServiceMetrics::TenantVins::Row> ServiceMetrics::TenantVins::Read()
    const {
  absl::MutexLock lock(&mu_);
  return rows_;
}

void ServiceMetrics::SetSnapshot(std::string sha256, std::string data_date) {
  absl::MutexLock lock(&snapshot_mu_);
  snapshot_loaded_ = true;
  snapshot_sha256_ = std::move(sha256);
  snapshot_date_ = std::move(data_date);
}

void ServiceMetrics::ClearSnapshot() {
  absl::MutexLock lock(&snapshot_mu_);
  snapshot_loaded_ = false;
}

bool ServiceMetrics::Snapshot(std::string* sha256,
                              std::string* data_date) const {
  absl::MutexLock lock(&snapshot_mu_);
  *sha256 = snapshot_sha256_;
  *data_date = snapshot_date_;
  return snapshot_loaded_;
}

}  // namespace metrics
