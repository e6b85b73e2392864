// Bulk jobs (DESIGN rule 20), transport-neutral: what the gRPC
// VinJobService and the gateway's /v1/jobs routes both call. A job's items
// are stored durably (jobs::JobStore) before it is acknowledged; the runner
// feeds them to the engine as bulk work of the job's tenant, at most
// `window` per job in flight and `concurrency` jobs running (the others wait
// in creation order, in turn per tenant), and commits each outcome once.
//
// Thread-safe. The runner is a thread of its own (Mode::kOwnThread) or, in
// tests, one turn at a time on the caller's thread (RunOnce).
#ifndef VIN_SERVER_JOBS_JOB_MANAGER_H_
#define VIN_SERVER_JOBS_JOB_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "clocks/clock.h"
#include "engine/engine.h"
#include "jobs/job_record.h"
#include "jobs/job_store.h"
#include "jobs/page_token.h"
#include "server/jobs/job_notifier.h"
#include "upstream/peak_hours.h"
#include "vin/v1/jobs.pb.h"

namespace server {

class JobRunner;
struct JobRun;

struct JobOptions {
  std::string path;                      // --job_path: the store ("" = no jobs)
  int window = 256;                      // items of one job in flight
  int concurrency = 4;                   // jobs running at once
  int64_t max_items = 1000000;           // per job
  int max_open = 20;                     // jobs per tenant not yet ended
  int64_t max_bytes = int64_t{1} << 30;  // of the whole store
  absl::Duration retention = absl::Hours(24 * 7);  // after a job ends
  // Hosts a notify_url may name, as written in the URL (empty: none).
  std::vector<std::string> notify_hosts;
  // NHTSA's business day, for JOB_SCHEDULE_OFF_PEAK.
  upstream::PeakHours peak_hours;
  // WatchJob's least interval between two Jobs.
  absl::Duration watch_interval = absl::Milliseconds(250);
  // Outcomes are committed at least this often (and at every 1,000).
  absl::Duration commit_interval = absl::Milliseconds(50);
  // A shared store (a fleet): how long a job's lease lasts unrenewed
  // (--job_lease; renewed every third of it), and how often the jobs other
  // replicas created or changed are read again.
  absl::Duration lease = absl::Seconds(30);
  absl::Duration sync_interval = absl::Milliseconds(250);
};

class JobManager {
 public:
  enum class Mode { kOwnThread, kManual };
  using Warn = std::function<void(const std::string&)>;
  using Log = std::function<void(const std::string&)>;

  // Opens the store (a foreign or corrupt file is set aside, named in
  // `warn`), loads its jobs and resumes the ones that were running.
  // `notify` POSTs a job's end to its notify_url (default: libcurl's).
  static absl::StatusOr<std::unique_ptr<JobManager>> Start(
      JobOptions options, engine::Engine* engine, const clocks::Clock* clock,
      Warn warn, Log log, Mode mode = Mode::kOwnThread,
      JobNotifier::Post notify = JobNotifier::CurlPost());
  // The same over `store` (a fleet's, in Redis: options.path unused). A
  // shared store that cannot be reached yet is read again by the runner.
  static absl::StatusOr<std::unique_ptr<JobManager>> StartWith(
      std::unique_ptr<jobs::JobStore> store, JobOptions options,
      engine::Engine* engine, const clocks::Clock* clock, Log log,
      Mode mode = Mode::kOwnThread,
      JobNotifier::Post notify = JobNotifier::CurlPost());
  ~JobManager();

  // One creation: Spec first, then Items, then Finish (or nothing: the
  // upload is dropped when destroyed unfinished). Each step refuses with a
  // status naming the problem (INVALID_ARGUMENT, RESOURCE_EXHAUSTED), and a
  // refused upload has left nothing in the store.
  class Upload {
   public:
    ~Upload();
    absl::Status Spec(const vin::v1::JobSpec& spec);
    // A CSV job (the gateway's): the posted file's header, as a CSV
    // record, after the spec and before any item.
    absl::Status Columns(std::string columns);
    // `extras` (empty, or one per item): kept beside each item and listed
    // with its result (a CSV job's row: RowExtra).
    absl::Status Items(const vin::v1::JobItems& items,
                       const std::vector<std::string>& extras = {});
    absl::StatusOr<vin::v1::Job> Finish();

   private:
    friend class JobManager;
    Upload(JobManager* manager, std::string tenant)
        : manager_(manager), tenant_(std::move(tenant)) {}
    absl::Status Refuse(absl::Status why);
    // No longer among the tenant's uploads (under the manager's mu_).
    void Uncount() ABSL_EXCLUSIVE_LOCKS_REQUIRED(manager_->mu_);

    JobManager* const manager_;
    const std::string tenant_;
    jobs::JobRecord job_;
    std::string staging_key_;  // in staging_keys_ while this upload lives
    int64_t store_bytes_ = 0;  // the store's bytes when the spec came
    bool counted_ = false;     // in the manager's uploading_
    bool begun_ = false;       // the staging row exists
    bool done_ = false;        // published, refused or deduplicated
    bool existing_ = false;    // an idempotency key found its job
    int64_t items_ = 0;
    absl::Status refused_;
  };
  std::unique_ptr<Upload> NewUpload(const std::string& tenant);

  absl::StatusOr<vin::v1::Job> Get(const std::string& tenant,
                                   const std::string& id);
  // The same, and its version (WatchJob sends a Job when it moves).
  absl::StatusOr<vin::v1::Job> Get(const std::string& tenant,
                                   const std::string& id, uint64_t* version);
  absl::StatusOr<vin::v1::ListJobsResponse> List(
      const std::string& tenant, const vin::v1::ListJobsRequest& request);
  // The page; with `rows`, also the job's columns and each result's extra
  // (a CSV job's rows, for its CSV results).
  struct Rows {
    std::string columns;
    std::vector<std::string> extras;
  };
  absl::StatusOr<vin::v1::ListJobResultsResponse> Results(
      const std::string& tenant, const vin::v1::ListJobResultsRequest& request,
      Rows* rows = nullptr);
  absl::StatusOr<vin::v1::Job> Cancel(const std::string& tenant,
                                      const std::string& id);
  absl::Status Delete(const std::string& tenant, const std::string& id);

  // Blocks until job `id`'s version is past `*version` (updating it), the
  // job is gone, or `timeout` passes; returns whether it changed. For
  // tests.
  bool WaitForChange(const std::string& id, uint64_t* version,
                     absl::Duration timeout);
  const JobOptions& options() const { return options_; }

  // One turn of the runner (Mode::kManual): outcomes committed, jobs
  // started, windows filled, ends noticed.
  void RunOnce();
  // One pass of the notifier (Mode::kManual).
  void NotifyOnce();
  // Stops the runner: no new item is submitted; outcomes already received
  // are committed; items in flight stay unfinished in the store (they run
  // again after a restart). Called before the engine stops.
  void Stop();

  struct Stats {
    int64_t jobs_by_state[6] = {};
    int64_t items_done = 0;
    int64_t items_failed = 0;
    int64_t items_waiting = 0;  // of jobs not ended, without an outcome
    absl::Duration oldest_running_age = absl::ZeroDuration();
    int64_t in_flight = 0;
    int64_t notifications_sent = 0;    // answered 2xx
    int64_t notifications_failed = 0;  // given up
  };
  Stats GetStats();

 private:
  friend class JobRunner;
  friend class JobNotifier;
  struct Entry {
    jobs::JobRecord record;
    uint64_t version = 0;         // moves whenever what ToJob shows changes
    std::unique_ptr<JobRun> run;  // while running here
  };

  JobManager(JobOptions options, std::unique_ptr<jobs::JobStore> store,
             engine::Engine* engine, const clocks::Clock* clock, Log log,
             JobNotifier::Post notify);

  // A job's shown state changed: watchers and the runner are told.
  void Changed(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  vin::v1::Job ToJob(const Entry& e) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job `id` of `tenant`, or NOT_FOUND (another tenant's job too). A
  // shared store is asked for a job not loaded yet (another replica's).
  absl::StatusOr<Entry*> Find(const std::string& tenant, const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts `r` among the jobs (or refreshes it there).
  Entry* Adopt(jobs::JobRecord r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The page tokens, signed with the store's secret.
  absl::StatusOr<jobs::PageTokens> Tokens();
  // Jobs of `tenant` not yet ended, those being created included.
  int OpenJobs(const std::string& tenant) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const JobOptions options_;
  const std::unique_ptr<jobs::JobStore> store_;
  engine::Engine* const engine_;
  const clocks::Clock* const clock_;
  const Log log_;

  // Before the runner's done_mu_ (the runner takes it under mu_).
  absl::Mutex mu_;
  absl::CondVar changed_;  // a job's version moved, or a job went
  std::map<int64_t, Entry> jobs_ ABSL_GUARDED_BY(mu_);  // by seq
  absl::flat_hash_map<std::string, int64_t> by_id_ ABSL_GUARDED_BY(mu_);
  // "<tenant>\n<idempotency key>" of uploads not yet finished.
  absl::flat_hash_set<std::string> staging_keys_ ABSL_GUARDED_BY(mu_);
  // Uploads past their spec's checks and not yet finished, by tenant: they
  // count among its open jobs.
  absl::flat_hash_map<std::string, int> uploading_ ABSL_GUARDED_BY(mu_);
  int64_t items_done_total_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t items_failed_total_ ABSL_GUARDED_BY(mu_) = 0;
  const std::unique_ptr<JobRunner> runner_;
  JobNotifier notifier_;
  std::thread thread_;
};

}  // namespace server

#endif  // VIN_SERVER_JOBS_JOB_MANAGER_H_
