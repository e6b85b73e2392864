#include "server/job_metrics.h"

#include "server/metric_family.h"

namespace server {

using prometheus::MetricType;

void AddJobMetrics(JobManager& jobs,
                   std::vector<prometheus::MetricFamily>* out) {
  const JobManager::Stats s = jobs.GetStats();
  prometheus::MetricFamily by_state =
      Family("vin_jobs", "Bulk jobs in the store (--job_path), by state.",
             MetricType::Gauge);
  for (jobs::JobState st :
       {jobs::JobState::kPending, jobs::JobState::kRunning,
        jobs::JobState::kSucceeded, jobs::JobState::kCancelled,
        jobs::JobState::kFailed}) {
    by_state.metric.push_back(
        Sample(static_cast<double>(s.jobs_by_state[static_cast<int>(st)]),
               MetricType::Gauge, {{"state", jobs::StateName(st)}}));
  }
  out->push_back(std::move(by_state));
  prometheus::MetricFamily items = Family(
      "vin_job_items_total",
      "Job items finished, by outcome (done: a decode; failed: a failure "
      "that will not pass, or cancelled), over the jobs in the store.",
      MetricType::Counter);
  items.metric.push_back(Sample(static_cast<double>(s.items_done),
                                MetricType::Counter, {{"outcome", "done"}}));
  items.metric.push_back(Sample(static_cast<double>(s.items_failed),
                                MetricType::Counter, {{"outcome", "failed"}}));
  out->push_back(std::move(items));
  AddGauge(out, "vin_job_items_waiting",
           "Items of jobs not yet ended that have no outcome yet.",
           static_cast<double>(s.items_waiting));
  AddGauge(out, "vin_job_items_in_flight",
           "Job items given to the engine and not yet answered (at most "
           "--job_window per running job).",
           static_cast<double>(s.in_flight));
  AddGauge(out, "vin_job_oldest_running_seconds",
           "How long the longest-running job has run (0: none runs).",
           absl::ToDoubleSeconds(s.oldest_running_age));
  AddCounter(out, "vin_job_notifications_total",
             "Notifications of a job's end POSTed to its notify_url and "
             "answered 2xx.",
             static_cast<uint64_t>(s.notifications_sent));
  AddCounter(out, "vin_job_notifications_failed_total",
             "Notifications given up after an hour of retries.",
             static_cast<uint64_t>(s.notifications_failed));
}

}  // namespace server
