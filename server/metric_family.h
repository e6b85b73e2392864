// Building blocks of the metric families a scrape returns
// (server/metrics_exporter.cc): a family, a sample, a counter or gauge of
// one sample, a histogram's sample from metrics::Histogram.
#ifndef VIN_SERVER_METRIC_FAMILY_H_
#define VIN_SERVER_METRIC_FAMILY_H_

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

#include <cstdint>
#include <vector>

#include "absl/types/optional.h"
#include "metrics/metrics.h"

namespace server {

prometheus::MetricFamily Family(const char* name, const char* help,
                                prometheus::MetricType type);

// One sample: a counter's value when `type` is Counter, else a gauge's.
prometheus::ClientMetric Sample(
    double value, prometheus::MetricType type,
    std::vector<prometheus::ClientMetric::Label> labels = {});

// A family of one sample.
void AddCounter(std::vector<prometheus::MetricFamily>* out, const char* name,
                const char* help, uint64_t value);
void AddCounter(std::vector<prometheus::MetricFamily>* out, const char* name,
                const char* help, const metrics::Counter& c);
void AddGauge(std::vector<prometheus::MetricFamily>* out, const char* name,
              const char* help, double value);
// Nothing when `value` is unknown.
void AddGaugeIf(std::vector<prometheus::MetricFamily>* out, const char* name,
                const char* help, const absl::optional<double>& value);
void AddCounterIf(std::vector<prometheus::MetricFamily>* out, const char* name,
                  const char* help, const absl::optional<double>& value);

// Cumulative buckets at metrics::Histogram::kBounds, then +Inf.
prometheus::ClientMetric HistogramSample(
    const metrics::Histogram::Snapshot& s,
    std::vector<prometheus::ClientMetric::Label> labels);
prometheus::ClientMetric HistogramSample(
    const metrics::Histogram& h,
    std::vector<prometheus::ClientMetric::Label> labels);

}  // namespace server

#endif  // VIN_SERVER_METRIC_FAMILY_H_
