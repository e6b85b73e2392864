// The runner of bulk jobs (DESIGN rule 20): JobManager's other half. Each
// turn it commits the outcomes the engine has given since the last one (in
// one transaction), ends the jobs that have every outcome, starts waiting
// jobs up to the concurrency (creation order, in turn per tenant, none
// held: not_before, off-peak), and fills each running job's window from
// the store.
//
// An item whose decode fails for a reason that may pass (vPIC unavailable,
// the breaker open, the rate, the server overloaded) is not given that
// failure: it goes back to its job, which pauses for the failure's delay
// (at least a second) and tries it again; a job outlives an outage as it
// outlives its connection. Failures that will not pass (an invalid VIN,
// vPIC's refusal, no snapshot answer) are the item's outcome.
#ifndef VIN_SERVER_JOBS_JOB_RUNNER_H_
#define VIN_SERVER_JOBS_JOB_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/common/proto_mapping.h"
#include "server/jobs/job_manager.h"

namespace server {

// A running job's state in this process.
struct JobRun {
  vin::v1::JobSpec spec;
  int64_t cursor = 0;     // the next index to read from the store
  bool read_out = false;  // the store had no item left from cursor
  std::deque<jobs::PendingItem> again;  // items to try again
  int64_t in_flight = 0;
  absl::Time paused_until = absl::InfinitePast();  // clock Now()
  std::string pause_reason;
  absl::Time renewed = absl::InfinitePast();  // the lease, clock Now()
  // Answers already stored by this run, by the bytes they share, so that
  // a VIN asked many times stores its answer once (bounded).
  absl::flat_hash_map<const std::string*, int64_t> answer_keys;
  std::vector<std::shared_ptr<const engine::DecodeResult>> answers_kept;
  int64_t next_answer_key = 1;
};

class JobRunner {
 public:
  explicit JobRunner(JobManager* manager) : m_(manager) {}
  ~JobRunner();

  // Any thread: there is work for the next turn.
  void Wake();
  // The runner's thread (JobManager::Mode::kOwnThread), until Stop.
  void Loop();
  void RunOnce();
  void Stop();

  // Under the manager's mu_: the job no longer runs here (its waiters
  // leave their flights); End gives it its terminal state, saved: Close
  // (the record's fields), the store, then Ended (the log line, watchers,
  // the notifier).
  void Abandon(JobManager::Entry* e);
  void End(JobManager::Entry* e, jobs::JobState state, std::string message);
  void Close(jobs::JobRecord* r, jobs::JobState state, std::string message);
  void Ended(JobManager::Entry* e);

  int64_t in_flight();

  // The least pause of a job whose item failed for a passing reason, and
  // between two tries of a store that could not take outcomes.
  static constexpr absl::Duration kLeastPause = absl::Seconds(1);

 private:
  struct Completion {
    int64_t seq = 0;
    int64_t index = 0;
    std::shared_ptr<const engine::DecodeResult> result;  // null: failure
    engine::Failure failure;
  };
  // One item's waiter: its terminal event becomes a Completion.
  class ItemListener final : public engine::DecodeListener {
   public:
    ItemListener(JobRunner* runner, int64_t seq, jobs::PendingItem item,
                 CallerExtras extras)
        : runner_(runner),
          seq_(seq),
          item_(std::move(item)),
          extras_(std::move(extras)) {}
    void OnQueued(const engine::Queued&) override {}
    void OnRetrying(const engine::Retrying&) override {}
    void OnDone(std::shared_ptr<const engine::DecodeResult> result) override {
      runner_->Complete(Completion{
          seq_, item_.index, ForCaller(std::move(result), extras_), {}});
    }
    void OnFailed(const engine::Failure& failure) override {
      runner_->Complete(Completion{seq_, item_.index, nullptr, failure});
    }
    engine::CallerInfo Caller() const override;
    jobs::PendingItem& item() { return item_; }
    uint64_t waiter = 0;  // the engine's id, once admitted

   private:
    JobRunner* const runner_;
    const int64_t seq_;
    jobs::PendingItem item_;
    const CallerExtras extras_;  // rule 21: explain, a barcode read
  };
  using ItemKey = std::pair<int64_t, int64_t>;  // (job seq, index)

  void Complete(Completion c);
  void Turn();
  void CommitCompletions();
  // The store could not take the outcomes: they wait (uncommitted_), the
  // running jobs pause and say why; PauseEnds when it takes them again.
  void PauseForStore(const absl::Status& why);
  void PauseEnds();
  // A shared store (job_sharing.cc): leases renewed, the jobs read again
  // (at most every sync_interval; synced_ says whether this turn did).
  void Share();
  void Merge(std::vector<jobs::JobRecord> loaded);
  // Whether this process may work job `e` now: its lease taken, and the
  // job, read again, not ended elsewhere. Always, with a store of its own.
  bool Claim(JobManager::Entry* e);
  void StartJobs();
  void FillWindows();
  void Submit(JobManager::Entry* e, jobs::PendingItem item);
  void FinishJobs();
  void Expire();
  void Start(JobManager::Entry* e);
  bool Held(const jobs::JobRecord& r, absl::Time wall) const;
  // The next wake-up the turn knows of (a pause or hold ending).
  absl::Time NextWake();
  int64_t AnswerKey(JobRun* run, const engine::DecodeResult& result,
                    std::string* bytes);

  JobManager* const m_;
  // Waiters of the engine, until their terminal event is taken (under the
  // manager's mu_).
  absl::flat_hash_map<ItemKey, std::unique_ptr<ItemListener>> listeners_;

  // listeners_.size(), for Complete to see when every item out has come
  // back (then the turn need not wait for more).
  std::atomic<size_t> outstanding_{0};

  absl::Mutex done_mu_;
  absl::CondVar work_;
  std::vector<Completion> completions_ ABSL_GUARDED_BY(done_mu_);
  bool woken_ ABSL_GUARDED_BY(done_mu_) = false;
  bool stop_ ABSL_GUARDED_BY(done_mu_) = false;
  bool stopping_ = false;  // under the manager's mu_
  // Under the manager's mu_: outcomes the store has not taken yet (it was
  // unreachable), and whether it is paused for that.
  std::vector<Completion> uncommitted_;
  bool store_down_ = false;
  absl::Time next_sync_ = absl::InfinitePast();  // clock Now()
  bool synced_ = false;
  // Turns per tenant (under the manager's mu_): when each last started a
  // job, counted in starts.
  absl::flat_hash_map<std::string, uint64_t> last_started_;
  uint64_t starts_ = 0;
};

}  // namespace server

#endif  // VIN_SERVER_JOBS_JOB_RUNNER_H_
