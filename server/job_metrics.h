// The metrics of bulk jobs (DESIGN rule 20), for a scrape of /metrics:
// jobs by state, items finished by outcome, items waiting, the oldest
// running job's age, notifications sent and given up.
#ifndef VIN_SERVER_JOB_METRICS_H_
#define VIN_SERVER_JOB_METRICS_H_

#include <prometheus/metric_family.h>

#include <vector>

#include "server/jobs/job_manager.h"

namespace server {

void AddJobMetrics(JobManager& jobs,
                   std::vector<prometheus::MetricFamily>* out);

}  // namespace server

#endif  // VIN_SERVER_JOB_METRICS_H_
