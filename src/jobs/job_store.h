// The durable store of bulk jobs (DESIGN rule 20, `--job_path`): jobs, their
// items and their outcomes in one SQLite file in WAL mode with
// synchronous=FULL, so that a job acknowledged, or an item committed as
// finished, survives a crash of the process or of the machine.
//
// Opened as the disk cache's file is (disk_cache::OpenStoreFile): a file
// that is not a job store (another program's, damaged, a newer schema) is
// set aside as `<path>.broken-<UTC time>`, named in a warning, and an empty
// store started. Jobs whose items were still arriving when the process
// stopped (kStaging) are removed at open: they were never acknowledged.
//
// An item's outcome is either an answer (a decode's bytes, kept once per
// job under a key the runner chooses, so that a feed that names one VIN a
// thousand times stores its answer once) or a failure's bytes.
//
// Thread-safe: one connection behind a mutex.
#ifndef VIN_JOBS_JOB_STORE_H_
#define VIN_JOBS_JOB_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "jobs/job_record.h"

namespace jobs {

// One item's outcome, committed by JobStore::Commit.
struct Finish {
  int64_t seq = 0;    // the job
  int64_t index = 0;  // the item
  Outcome outcome = Outcome::kDone;
  // kDone: the answer's key within the job, and its bytes when this is the
  // first item to name the key ("" when an earlier commit stored them).
  int64_t answer_key = 0;
  std::string answer;
  // kFailed: the failure's bytes.
  std::string failure;
};

// An item not yet finished.
struct PendingItem {
  int64_t index = 0;
  std::string request;
};

// A finished item, as listed.
struct StoredResult {
  int64_t index = 0;
  std::string request;
  Outcome outcome = Outcome::kDone;
  std::string bytes;  // the answer's or the failure's
  std::string extra;  // what AddItems kept beside the request ("" none)
};

class JobStore {
 public:
  using Warn = std::function<void(const std::string&)>;

  // Opens (or creates) the store at `path`. Fails only when no store can be
  // had there (see disk_cache::OpenStoreFile); the status names the path.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path,
                                                        const Warn& warn,
                                                        absl::Time now);

  // The secret page tokens are signed with: 32 random bytes made with the
  // file and kept in it.
  const std::string& secret() const { return secret_; }

  // Every job but staging ones, in creation order.
  absl::StatusOr<std::vector<JobRecord>> LoadJobs();

  // Creation, in steps, so that a slow upload holds no lock: the job as
  // kStaging (its seq is chosen here and set in `job`), its items in
  // chunks, then Publish (kPending, with its totals) or Drop.
  absl::Status BeginJob(JobRecord* job);
  // `extras` (empty, or one per request): bytes kept beside each request
  // and listed with its result (a CSV job's row).
  absl::Status AddItems(int64_t seq, int64_t first_index,
                        const std::vector<std::string>& requests,
                        const std::vector<std::string>& extras = {});
  absl::Status Publish(const JobRecord& job);
  // Removes a job, its items and its answers (a refused creation, a
  // deletion, the retention).
  absl::Status Drop(int64_t seq);

  // Up to `limit` items of job `seq` without an outcome, from `from_index`
  // on, in order.
  absl::StatusOr<std::vector<PendingItem>> Pending(int64_t seq,
                                                   int64_t from_index,
                                                   int limit);
  // The largest answer key job `seq` has used (0: none).
  absl::StatusOr<int64_t> MaxAnswerKey(int64_t seq);

  // In one transaction: the items' outcomes (an item that already has one
  // keeps it: an outcome, once committed, never changes), and the jobs'
  // records (state, message, counts, times, bytes, notify).
  absl::Status Commit(const std::vector<Finish>& finishes,
                      const std::vector<JobRecord>& jobs);
  // Gives every item of job `seq` without an outcome the failure
  // `failure`, and saves `job` (whose counts the caller has set from the
  // returned number), in one transaction. Returns how many it failed.
  absl::StatusOr<int64_t> FailPending(int64_t seq, absl::string_view failure,
                                      JobRecord* job);

  // Finished items of job `seq` from `from_index` on, in order, at most
  // `limit`, stopping before the first item without an outcome.
  absl::StatusOr<std::vector<StoredResult>> Results(int64_t seq,
                                                    int64_t from_index,
                                                    int limit);

  // The bytes of every job in the store.
  int64_t TotalBytes();

  ~JobStore();

 private:
  struct Sqlite;
  explicit JobStore(std::unique_ptr<Sqlite> db, std::string secret);
  absl::Status SaveLocked(const JobRecord& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<Sqlite> db_ ABSL_GUARDED_BY(mu_);
  const std::string secret_;
};

}  // namespace jobs

#endif  // VIN_JOBS_JOB_STORE_H_
