// The metrics of rule 21's parity, for a scrape of /metrics: live answers
// compared with the snapshot per variable and outcome, the make/model/year
// agreement over --parity_window, and answers not compared (a full queue).
#ifndef VIN_SERVER_PARITY_METRICS_H_
#define VIN_SERVER_PARITY_METRICS_H_

#include <prometheus/metric_family.h>

#include <vector>

#include "server/parity_checker.h"

namespace server {

void AddParityMetrics(const ParityChecker& parity,
                      std::vector<prometheus::MetricFamily>* out);

}  // namespace server

#endif  // VIN_SERVER_PARITY_METRICS_H_
