// The durable store of bulk jobs (DESIGN rule 20). SqliteJobStore
// (`--job_path`) keeps jobs, their
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

// What the job manager keeps jobs in: one process's SQLite file
// (SqliteJobStore, below) or a fleet's Redis (fleet::RedisJobStore), where
// other processes create, change and remove jobs too (shared()), and a job
// is worked by the one process that holds its lease.
//
// Errors: UNAVAILABLE when the store cannot be reached now (the caller
// tries again later); others name what failed.
class JobStore {
 public:
  virtual ~JobStore() = default;

  // The secret page tokens are signed with: 32 random bytes kept in the
  // store, the same for every process that shares it (UNAVAILABLE while a
  // shared store cannot be reached to read it).
  virtual absl::StatusOr<std::string> Secret() = 0;
  // Whether other processes share the store: their jobs appear, change and
  // go without this one (LoadJobs again), and a job runs where its lease
  // is held (Hold).
  virtual bool shared() const { return false; }

  // Every published job, in creation order.
  virtual absl::StatusOr<std::vector<JobRecord>> LoadJobs() = 0;
  // The published job `id` (another process's too): NOT_FOUND when none.
  virtual absl::StatusOr<JobRecord> LoadJob(const std::string& id) = 0;

  // Creation, in steps, so that a slow upload holds no lock: the job as
  // kStaging (its seq is chosen here and set in `job`), its items in
  // chunks, then Publish (kPending, with its totals) or Drop. A shared
  // store claims the job's idempotency key here: ALREADY_EXISTS, with the
  // seq of the job that holds the key in `job->seq`, when another has it.
  virtual absl::Status BeginJob(JobRecord* job) = 0;
  // `extras` (empty, or one per request): bytes kept beside each request
  // and listed with its result (a CSV job's row).
  virtual absl::Status AddItems(int64_t seq, int64_t first_index,
                                const std::vector<std::string>& requests,
                                const std::vector<std::string>& extras) = 0;
  virtual absl::Status Publish(const JobRecord& job) = 0;
  // Removes a job, its items and its answers (a refused creation, a
  // deletion, the retention).
  virtual absl::Status Drop(int64_t seq) = 0;

  // Up to `limit` items of job `seq` without an outcome, from `from_index`
  // on, in order; fewer only when no more are left.
  virtual absl::StatusOr<std::vector<PendingItem>> Pending(int64_t seq,
                                                           int64_t from_index,
                                                           int limit) = 0;
  // The largest answer key job `seq` has used (0: none).
  virtual absl::StatusOr<int64_t> MaxAnswerKey(int64_t seq) = 0;

  // The items' outcomes (an item that already has one keeps it: an
  // outcome, once committed, never changes), and the jobs' records (state,
  // message, counts, times, bytes, notify), all or nothing per job. In a
  // shared store only the job's holder commits to a job not ended: the
  // seqs of jobs this process no longer holds (or that ended elsewhere)
  // go to `lost`, with nothing of theirs stored.
  virtual absl::Status Commit(const std::vector<Finish>& finishes,
                              const std::vector<JobRecord>& jobs,
                              std::vector<int64_t>* lost = nullptr) = 0;
  // An ended job's notify state (whoever holds it).
  virtual absl::Status SaveNotify(const JobRecord& job) = 0;
  // Ends job `seq` as `job` says (cancelled): every item without an
  // outcome gets the failure `failure`; the counts of `job` are set from
  // the store's. Returns how many it failed (0 when the job had ended).
  virtual absl::StatusOr<int64_t> FailPending(int64_t seq,
                                              absl::string_view failure,
                                              JobRecord* job) = 0;

  // Finished items of job `seq` from `from_index` on, in order, at most
  // `limit`, stopping before the first item without an outcome.
  virtual absl::StatusOr<std::vector<StoredResult>> Results(int64_t seq,
                                                            int64_t from_index,
                                                            int limit) = 0;

  // The bytes of every job in the store.
  virtual int64_t TotalBytes() = 0;

  // ---- Leases (a shared store; one process holds every job otherwise) ----
  // Takes job `seq`'s lease for `ttl`, or renews it when this process holds
  // it: false when another does.
  virtual absl::StatusOr<bool> Hold(int64_t seq, absl::Duration ttl) {
    return true;
  }
  // Gives the lease up (held by this process only).
  virtual void Release(int64_t seq) {}
};

// The store of one process: a SQLite file.
class SqliteJobStore final : public JobStore {
 public:
  using Warn = std::function<void(const std::string&)>;

  // Opens (or creates) the store at `path`. Fails only when no store can be
  // had there (see disk_cache::OpenStoreFile); the status names the path.
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(
      const std::string& path, const Warn& warn, absl::Time now);
  ~SqliteJobStore() override;

  absl::StatusOr<std::string> Secret() override { return secret_; }
  absl::StatusOr<std::vector<JobRecord>> LoadJobs() override;
  absl::StatusOr<JobRecord> LoadJob(const std::string& id) override;
  absl::Status BeginJob(JobRecord* job) override;
  absl::Status AddItems(int64_t seq, int64_t first_index,
                        const std::vector<std::string>& requests,
                        const std::vector<std::string>& extras) override;
  absl::Status Publish(const JobRecord& job) override;
  absl::Status Drop(int64_t seq) override;
  absl::StatusOr<std::vector<PendingItem>> Pending(int64_t seq,
                                                   int64_t from_index,
                                                   int limit) override;
  absl::StatusOr<int64_t> MaxAnswerKey(int64_t seq) override;
  absl::Status Commit(const std::vector<Finish>& finishes,
                      const std::vector<JobRecord>& jobs,
                      std::vector<int64_t>* lost = nullptr) override;
  absl::Status SaveNotify(const JobRecord& job) override;
  absl::StatusOr<int64_t> FailPending(int64_t seq, absl::string_view failure,
                                      JobRecord* job) override;
  absl::StatusOr<std::vector<StoredResult>> Results(int64_t seq,
                                                    int64_t from_index,
                                                    int limit) override;
  int64_t TotalBytes() override;

 private:
  struct Sqlite;
  explicit SqliteJobStore(std::unique_ptr<Sqlite> db, std::string secret);
  absl::Status SaveLocked(const JobRecord& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<Sqlite> db_ ABSL_GUARDED_BY(mu_);
  const std::string secret_;
};

}  // namespace jobs

#endif  // VIN_JOBS_JOB_STORE_H_
