#include "server/parity_metrics.h"

#include "server/metric_family.h"

namespace server {

using prometheus::MetricType;

void AddParityMetrics(const ParityChecker& parity,
                      std::vector<prometheus::MetricFamily>* out) {
  prometheus::MetricFamily counts = Family(
      "vin_snapshot_parity_total",
      "Live vPIC answers decoded again from the snapshot and compared, per "
      "variable the snapshot can give and outcome (agree, differ, "
      "snapshot_missing: vPIC gave it and the snapshot did not, "
      "live_missing: the other way round).",
      MetricType::Counter);
  for (const auto& [key, n] : parity.Counts()) {
    counts.metric.push_back(
        Sample(static_cast<double>(n), MetricType::Counter,
               {{"variable", key.first}, {"outcome", key.second}}));
  }
  out->push_back(std::move(counts));
  const vin::v1::ParityReport report = parity.Report();
  AddGauge(out, "vin_snapshot_parity_make_model_year",
           "The share of the last --parity_window compared live answers "
           "whose make, model and model year the snapshot agrees with (0 "
           "before any).",
           report.make_model_year_agreement());
  AddCounter(out, "vin_snapshot_parity_dropped_total",
             "Live answers not compared: the comparisons' queue was full.",
             parity.dropped());
}

}  // namespace server
