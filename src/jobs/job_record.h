// A bulk job as the job store keeps it (DESIGN rule 20): what the job
// methods answer and what the runner needs to schedule it. The spec and the
// items are the API's bytes (vin.v1.JobSpec, vin.v1.DecodeBatchRequest),
// opaque at this layer; the server maps them.
#ifndef VIN_JOBS_JOB_RECORD_H_
#define VIN_JOBS_JOB_RECORD_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace jobs {

// The numbers are vin.v1.JobState's; kStaging is the store's own: a job
// whose items are still arriving (never listed, removed at the next open).
enum class JobState {
  kStaging = 0,
  kPending = 1,
  kRunning = 2,
  kSucceeded = 3,
  kCancelled = 4,
  kFailed = 5,
};

inline bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kCancelled ||
         s == JobState::kFailed;
}

const char* StateName(JobState s);  // "pending", "running"...

// Whether a job's end is still to be told to its notify_url.
enum class NotifyState { kNone = 0, kDue = 1, kSent = 2, kGaveUp = 3 };

struct JobRecord {
  int64_t seq = 0;  // creation order, unique in the store
  std::string id;   // 32 lower-case hex digits (128 random bits)
  std::string tenant;
  std::string idempotency_key;  // "" for none
  std::string spec;             // vin.v1.JobSpec's bytes
  // A CSV job's header (the posted file's columns, as a CSV record); ""
  // for a job of DecodeBatchRequests.
  std::string columns;
  JobState state = JobState::kStaging;
  std::string message;
  int64_t items_total = 0;
  int64_t items_done = 0;
  int64_t items_failed = 0;
  absl::Time create_time = absl::InfinitePast();
  absl::Time start_time = absl::InfinitePast();  // InfinitePast: not yet
  absl::Time end_time = absl::InfinitePast();
  absl::Time not_before = absl::InfinitePast();  // held until
  bool off_peak = false;                         // JOB_SCHEDULE_OFF_PEAK
  int64_t bytes = 0;  // of its items and results in the store
  NotifyState notify = NotifyState::kNone;

  int64_t items_finished() const { return items_done + items_failed; }
  int64_t items_pending() const { return items_total - items_finished(); }
};

// How an item ended.
enum class Outcome { kPending = 0, kDone = 1, kFailed = 2 };

}  // namespace jobs

#endif  // VIN_JOBS_JOB_RECORD_H_
