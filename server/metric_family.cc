#include "server/metric_family.h"

#include <limits>
#include <utility>

namespace server {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

ClientMetric Sample(double value, MetricType type,
                    std::vector<ClientMetric::Label> labels) {
  ClientMetric m;
  m.label = std::move(labels);
  if (type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return m;
}

void AddCounter(std::vector<MetricFamily>* out, const char* name,
                const char* help, uint64_t value) {
  MetricFamily f = Family(name, help, MetricType::Counter);
  f.metric.push_back(Sample(static_cast<double>(value), MetricType::Counter));
  out->push_back(std::move(f));
}

void AddCounter(std::vector<MetricFamily>* out, const char* name,
                const char* help, const metrics::Counter& c) {
  AddCounter(out, name, help, c.value());
}

void AddGauge(std::vector<MetricFamily>* out, const char* name,
              const char* help, double value) {
  MetricFamily f = Family(name, help, MetricType::Gauge);
  f.metric.push_back(Sample(value, MetricType::Gauge));
  out->push_back(std::move(f));
}

ClientMetric HistogramSample(const metrics::Histogram::Snapshot& s,
                             std::vector<ClientMetric::Label> labels) {
  ClientMetric m;
  m.label = std::move(labels);
  m.histogram.sample_count = s.count;
  m.histogram.sample_sum = s.sum_seconds;
  for (size_t i = 0; i < metrics::Histogram::kBounds.size(); ++i) {
    m.histogram.bucket.push_back(
        {s.cumulative[i], metrics::Histogram::kBounds[i]});
  }
  m.histogram.bucket.push_back(
      {s.count, std::numeric_limits<double>::infinity()});
  return m;
}

ClientMetric HistogramSample(const metrics::Histogram& h,
                             std::vector<ClientMetric::Label> labels) {
  return HistogramSample(h.Read(), std::move(labels));
}

void AddGaugeIf(std::vector<MetricFamily>* out, const char* name,
                const char* help, const absl::optional<double>& value) {
  if (value) AddGauge(out, name, help, *value);
}

void AddCounterIf(std::vector<MetricFamily>* out, const char* name,
                  const char* help, const absl::optional<double>& value) {
  if (!value) return;
  MetricFamily f = Family(name, help, MetricType::Counter);
  f.metric.push_back(Sample(*value, MetricType::Counter));
  out->push_back(std::move(f));
}

}  // namespace server
