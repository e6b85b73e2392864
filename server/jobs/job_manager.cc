// JobManager's API: creation, reading, cancelling, deleting (the runner is
// in job_runner.cc).
#include "server/jobs/job_manager.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/jobs/job_mapping.h"
#include "server/jobs/job_runner.h"

namespace server {
namespace {

constexpr int kDefaultJobsPage = 50;
constexpr int kDefaultResultsPage = 100;
constexpr int kMaxPage = 1000;

int PageSize(int asked, int fallback) {
  if (asked <= 0) return fallback;
  return std::min(asked, kMaxPage);
}

absl::Status NotFound(const std::string& id) {
  return JobError(domain::ErrorReason::kJobNotFound,
                  absl::StrCat("no job ", id));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Start(
    JobOptions options, engine::Engine* engine, const clocks::Clock* clock,
    Warn warn, Log log, Mode mode, JobNotifier::Post notify) {
  absl::StatusOr<std::unique_ptr<jobs::SqliteJobStore>> store =
      jobs::SqliteJobStore::Open(options.path, warn, clock->WallNow());
  if (!store.ok()) return store.status();
  return StartWith(*std::move(store), std::move(options), engine, clock,
                   std::move(log), mode, std::move(notify));
}

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::StartWith(
    std::unique_ptr<jobs::JobStore> store, JobOptions options,
    engine::Engine* engine, const clocks::Clock* clock, Log log, Mode mode,
    JobNotifier::Post notify) {
  absl::StatusOr<std::vector<jobs::JobRecord>> loaded = store->LoadJobs();
  if (!loaded.ok()) {
    // A fleet's Redis not reachable yet: the runner reads the jobs when it
    // is.
    if (!store->shared()) return loaded.status();
    log(absl::StrCat("job store: jobs not read yet: ",
                     loaded.status().ToString()));
    loaded = std::vector<jobs::JobRecord>();
  }
  std::unique_ptr<JobManager> m(
      new JobManager(std::move(options), std::move(store), engine, clock,
                     std::move(log), std::move(notify)));
  {
    absl::MutexLock lock(&m->mu_);
    for (jobs::JobRecord& r : *loaded) {
      if (!m->store_->shared()) {
        m->items_done_total_ += r.items_done;
        m->items_failed_total_ += r.items_failed;
      }
      m->Adopt(std::move(r));
    }
  }
  if (mode == Mode::kOwnThread) {
    m->thread_ = std::thread([p = m.get()] { p->runner_->Loop(); });
    m->notifier_.Start();
  }
  return m;
}

JobManager::JobManager(JobOptions options,
                       std::unique_ptr<jobs::JobStore> store,
                       engine::Engine* engine, const clocks::Clock* clock,
                       Log log, JobNotifier::Post notify)
    : options_(std::move(options)),
      store_(std::move(store)),
      engine_(engine),
      clock_(clock),
      log_(std::move(log)),
      runner_(std::make_unique<JobRunner>(this)),
      notifier_(this, std::move(notify)) {}

JobManager::~JobManager() { Stop(); }

// ---- Reading ----

JobManager::Entry* JobManager::Adopt(jobs::JobRecord r) {
  by_id_[r.id] = r.seq;
  Entry& e = jobs_[r.seq];
  e.record = std::move(r);
  return &e;
}

absl::StatusOr<jobs::PageTokens> JobManager::Tokens() {
  absl::StatusOr<std::string> secret = store_->Secret();
  if (!secret.ok()) {
    return JobError(domain::ErrorReason::kJobStoreUnavailable,
                    std::string(secret.status().message()));
  }
  return jobs::PageTokens(*std::move(secret));
}

absl::StatusOr<JobManager::Entry*> JobManager::Find(const std::string& tenant,
                                                    const std::string& id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) {
    if (!store_->shared()) return NotFound(id);
    // Another replica's job, not read here yet.
    absl::StatusOr<jobs::JobRecord> r = store_->LoadJob(id);
    if (absl::IsNotFound(r.status())) return NotFound(id);
    if (!r.ok()) {
      return JobError(domain::ErrorReason::kJobStoreUnavailable,
                      std::string(r.status().message()));
    }
    if (r->tenant != tenant) return NotFound(id);
    Entry* e = Adopt(*std::move(r));
    Changed(e);
    return e;
  }
  Entry& e = jobs_[it->second];
  // Another tenant's job is not there for this caller.
  if (e.record.tenant != tenant) return NotFound(id);
  return &e;
}

int JobManager::OpenJobs(const std::string& tenant) {
  int n = 0;
  for (const auto& [seq, e] : jobs_) {
    if (e.record.tenant == tenant && !jobs::IsTerminal(e.record.state)) ++n;
  }
  auto uploading = uploading_.find(tenant);
  if (uploading != uploading_.end()) n += uploading->second;
  return n;
}

absl::StatusOr<vin::v1::Job> JobManager::Get(const std::string& tenant,
                                             const std::string& id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> e = Find(tenant, id);
  if (!e.ok()) return e.status();
  return ToJob(**e);
}

absl::StatusOr<vin::v1::Job> JobManager::Get(const std::string& tenant,
                                             const std::string& id,
                                             uint64_t* version) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> e = Find(tenant, id);
  if (!e.ok()) return e.status();
  *version = (*e)->version;
  return ToJob(**e);
}

absl::StatusOr<vin::v1::ListJobsResponse> JobManager::List(
    const std::string& tenant, const vin::v1::ListJobsRequest& request) {
  const std::string scope = absl::StrCat("jobs/", tenant);
  absl::StatusOr<jobs::PageTokens> tokens = Tokens();
  if (!tokens.ok()) return tokens.status();
  int64_t below = INT64_MAX;  // newest first: seqs below this one
  if (!request.page_token().empty()) {
    absl::StatusOr<int64_t> p = tokens->Check(scope, request.page_token());
    if (!p.ok()) {
      return JobError(domain::ErrorReason::kInvalidPageToken,
                      std::string(p.status().message()));
    }
    below = *p;
  }
  const int size = PageSize(request.page_size(), kDefaultJobsPage);
  vin::v1::ListJobsResponse out;
  absl::MutexLock lock(&mu_);
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) {
    if (it->first >= below || it->second.record.tenant != tenant) continue;
    if (out.jobs_size() == size) {
      out.set_next_page_token(tokens->Issue(scope, below));
      break;
    }
    *out.add_jobs() = ToJob(it->second);
    below = it->first;
  }
  return out;
}

absl::StatusOr<vin::v1::ListJobResultsResponse> JobManager::Results(
    const std::string& tenant, const vin::v1::ListJobResultsRequest& request,
    Rows* rows_out) {
  int64_t seq = 0;
  int64_t total = 0;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Entry*> e = Find(tenant, request.job_id());
    if (!e.ok()) return e.status();
    seq = (*e)->record.seq;
    total = (*e)->record.items_total;
    if (rows_out != nullptr) rows_out->columns = (*e)->record.columns;
  }
  const std::string scope = absl::StrCat("results/", request.job_id());
  absl::StatusOr<jobs::PageTokens> tokens = Tokens();
  if (!tokens.ok()) return tokens.status();
  int64_t from = 0;
  if (!request.page_token().empty()) {
    absl::StatusOr<int64_t> p = tokens->Check(scope, request.page_token());
    if (!p.ok()) {
      return JobError(domain::ErrorReason::kInvalidPageToken,
                      std::string(p.status().message()));
    }
    from = *p;
  }
  absl::StatusOr<std::vector<jobs::StoredResult>> rows = store_->Results(
      seq, from, PageSize(request.page_size(), kDefaultResultsPage));
  if (!rows.ok()) {
    return JobError(
        domain::ErrorReason::kJobStoreUnavailable,
        absl::StrCat("results not read: ", rows.status().message()));
  }
  vin::v1::ListJobResultsResponse out;
  for (const jobs::StoredResult& r : *rows) {
    *out.add_results() = ToJobResult(r);
    if (rows_out != nullptr) rows_out->extras.push_back(r.extra);
  }
  const int64_t next = from + static_cast<int64_t>(rows->size());
  out.set_complete(next >= total);
  if (!out.complete()) out.set_next_page_token(tokens->Issue(scope, next));
  return out;
}

bool JobManager::WaitForChange(const std::string& id, uint64_t* version,
                               absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::MutexLock lock(&mu_);
  while (true) {
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return true;  // gone
    const uint64_t v = jobs_[it->second].version;
    if (v != *version) {
      *version = v;
      return true;
    }
    if (changed_.WaitWithDeadline(&mu_, deadline)) return false;
  }
}

// ---- Cancelling, deleting ----

absl::StatusOr<vin::v1::Job> JobManager::Cancel(const std::string& tenant,
                                                const std::string& id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> found = Find(tenant, id);
  if (!found.ok()) return found.status();
  Entry* e = *found;
  if (jobs::IsTerminal(e->record.state)) return ToJob(*e);
  jobs::JobRecord after = e->record;
  runner_->Close(&after, jobs::JobState::kCancelled, "cancelled by its caller");
  absl::StatusOr<int64_t> failed =
      store_->FailPending(after.seq, CancelledFailureBytes(), &after);
  if (!failed.ok()) {
    return JobError(domain::ErrorReason::kJobStoreUnavailable,
                    absl::StrCat("job ", id, " not cancelled: ",
                                 failed.status().message()));
  }
  runner_->Abandon(e);
  items_failed_total_ += *failed;
  e->record = after;
  runner_->Ended(e);
  return ToJob(*e);
}

absl::Status JobManager::Delete(const std::string& tenant,
                                const std::string& id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Entry*> found = Find(tenant, id);
  if (!found.ok()) return found.status();
  Entry* e = *found;
  if (!jobs::IsTerminal(e->record.state) && store_->shared()) {
    // Another replica may have ended it since this one last read it.
    absl::StatusOr<jobs::JobRecord> fresh = store_->LoadJob(id);
    if (fresh.ok() && e->run == nullptr) e->record = *std::move(fresh);
  }
  if (!jobs::IsTerminal(e->record.state)) {
    return JobError(
        domain::ErrorReason::kJobNotEnded,
        absl::StrCat("job ", id, " is ", jobs::StateName(e->record.state),
                     "; cancel it before deleting it"));
  }
  if (absl::Status s = store_->Drop(e->record.seq); !s.ok()) return s;
  log_(absl::StrCat("job ", id, " deleted"));
  by_id_.erase(id);
  jobs_.erase(e->record.seq);
  changed_.SignalAll();
  return absl::OkStatus();
}

void JobManager::RunOnce() { runner_->RunOnce(); }

void JobManager::NotifyOnce() { notifier_.RunOnce(); }

void JobManager::Stop() {
  notifier_.Stop();
  runner_->Stop();
}

JobManager::Stats JobManager::GetStats() {
  absl::MutexLock lock(&mu_);
  Stats s;
  s.items_done = items_done_total_;
  s.items_failed = items_failed_total_;
  s.in_flight = runner_->in_flight();
  s.notifications_sent = notifier_.sent();
  s.notifications_failed = notifier_.failed();
  const absl::Time wall = clock_->WallNow();
  for (const auto& [seq, e] : jobs_) {
    const jobs::JobRecord& r = e.record;
    ++s.jobs_by_state[static_cast<int>(r.state)];
    if (!jobs::IsTerminal(r.state)) s.items_waiting += r.items_pending();
    if (r.state == jobs::JobState::kRunning &&
        r.start_time != absl::InfinitePast()) {
      s.oldest_running_age =
          std::max(s.oldest_running_age, wall - r.start_time);
    }
  }
  return s;
}

// ---- The Job ----

void JobManager::Changed(Entry* e) {
  ++e->version;
  changed_.SignalAll();
  runner_->Wake();
}

vin::v1::Job JobManager::ToJob(const Entry& e) const {
  const jobs::JobRecord& r = e.record;
  vin::v1::Job j;
  j.set_job_id(r.id);
  j.mutable_spec()->ParseFromString(r.spec);
  j.set_state(static_cast<vin::v1::JobState>(r.state));
  j.set_message(r.message);
  j.set_items_total(r.items_total);
  j.set_items_done(r.items_done);
  j.set_items_failed(r.items_failed);
  j.set_items_pending(r.items_pending());
  j.set_tenant(r.tenant);
  ToTimestamp(r.create_time, j.mutable_create_time());
  if (r.start_time != absl::InfinitePast()) {
    ToTimestamp(r.start_time, j.mutable_start_time());
  }
  if (r.end_time != absl::InfinitePast()) {
    ToTimestamp(r.end_time, j.mutable_end_time());
  }
  const absl::Time wall = clock_->WallNow();
  if (r.state == jobs::JobState::kPending) {
    absl::Time start = std::max(wall, r.not_before);
    if (r.off_peak) {
      start = OffPeakStart(options_.peak_hours, start);
      j.set_held_for_off_peak(options_.peak_hours.Contains(wall));
    }
    if (start > wall) ToTimestamp(start, j.mutable_estimated_start());
  }
  if (r.state == jobs::JobState::kRunning && r.items_finished() > 0 &&
      r.start_time != absl::InfinitePast()) {
    const absl::Duration per_item =
        (wall - r.start_time) / static_cast<double>(r.items_finished());
    const absl::Duration left =
        per_item * static_cast<double>(r.items_pending());
    j.mutable_estimated_remaining()->set_seconds(absl::ToInt64Seconds(left));
  }
  return j;
}

}  // namespace server
