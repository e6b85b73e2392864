#include "server/jobs/job_runner.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "domain/error_reason.h"
#include "server/common/proto_mapping.h"
#include "server/jobs/job_mapping.h"

namespace server {
namespace {

// Outcomes are committed at least every this many.
constexpr size_t kCommitEvery = 1000;
// A turn waits at most this long for work.
constexpr absl::Duration kIdleTurn = absl::Seconds(1);
// How long Stop waits for the engine to give back the items in flight.
constexpr absl::Duration kStopWait = absl::Seconds(5);

}  // namespace

JobRunner::~JobRunner() = default;

engine::CallerInfo JobRunner::ItemListener::Caller() const {
  return {"job", absl::StrCat("#", item_.index)};
}

void JobRunner::Wake() {
  absl::MutexLock lock(&done_mu_);
  woken_ = true;
  work_.Signal();
}

void JobRunner::Complete(Completion c) {
  absl::MutexLock lock(&done_mu_);
  completions_.push_back(std::move(c));
  if (completions_.size() >= std::min(kCommitEvery, outstanding_.load())) {
    work_.Signal();
  }
}

void JobRunner::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&done_mu_);
      if (stop_) return;
    }
    RunOnce();
    absl::Time wake;
    {
      absl::MutexLock lock(&m_->mu_);
      wake = NextWake();
    }
    absl::MutexLock lock(&done_mu_);
    const absl::Time now = absl::Now();
    const absl::Time until =
        std::min(now + kIdleTurn, now + (wake - m_->clock_->Now()));
    const absl::Time gather = now + m_->options_.commit_interval;
    // Outcomes gather until every item out has come back, 1,000 of them,
    // or commit_interval; with none, the turn waits for work or `until`.
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(done_mu_) {
      return stop_ || woken_ ||
             (!completions_.empty() &&
              completions_.size() >=
                  std::min(kCommitEvery, outstanding_.load()));
    };
    while (!ready()) {
      const absl::Time deadline =
          completions_.empty() ? until : std::min(until, gather);
      if (work_.WaitWithDeadline(&done_mu_, deadline)) break;
    }
    woken_ = false;
  }
}

void JobRunner::RunOnce() {
  absl::MutexLock lock(&m_->mu_);
  Turn();
}

void JobRunner::Turn() {
  CommitCompletions();
  if (stopping_) return;
  if (m_->store_->shared()) Share();
  // While the store cannot take outcomes, nothing ends, starts or is sent.
  if (!uncommitted_.empty()) return;
  FinishJobs();
  Expire();
  StartJobs();
  FillWindows();
}

void JobRunner::Stop() {
  {
    absl::MutexLock lock(&done_mu_);
    if (stop_) return;
    stop_ = true;
    work_.Signal();
  }
  if (m_->thread_.joinable()) m_->thread_.join();
  absl::MutexLock lock(&m_->mu_);
  // What has come back is committed; the items still in flight stay
  // unfinished in the store: they run again after a restart. Their waiters
  // leave, and their events are awaited so that no listener outlives this.
  CommitCompletions();
  stopping_ = true;
  for (auto& [seq, e] : m_->jobs_) {
    if (e.run == nullptr) continue;
    Abandon(&e);
    // Another replica goes on with it at once.
    m_->store_->Release(seq);
  }
  const absl::Time deadline = absl::Now() + kStopWait;
  while (!listeners_.empty()) {
    CommitCompletions();
    if (listeners_.empty()) break;
    m_->mu_.Unlock();
    {
      absl::MutexLock done(&done_mu_);
      if (completions_.empty()) work_.WaitWithDeadline(&done_mu_, deadline);
    }
    m_->mu_.Lock();
    if (absl::Now() >= deadline) break;
  }
}

int64_t JobRunner::in_flight() {
  return static_cast<int64_t>(listeners_.size());
}

// ---- Jobs starting and ending ----

bool JobRunner::Held(const jobs::JobRecord& r, absl::Time wall) const {
  if (r.not_before > wall) return true;
  return r.off_peak && m_->options_.peak_hours.Contains(wall);
}

void JobRunner::Start(JobManager::Entry* e) {
  auto run = std::make_unique<JobRun>();
  run->spec.ParseFromString(e->record.spec);
  run->renewed = m_->clock_->Now();
  absl::StatusOr<int64_t> key = m_->store_->MaxAnswerKey(e->record.seq);
  run->next_answer_key = key.ok() ? *key + 1 : 1;
  e->run = std::move(run);
  if (e->record.state != jobs::JobState::kRunning) {
    e->record.state = jobs::JobState::kRunning;
    e->record.start_time = m_->clock_->WallNow();
    e->record.message.clear();
    m_->log_(absl::StrCat("job ", e->record.id, " of tenant ", e->record.tenant,
                          " running: ", e->record.items_total, " items"));
  } else {
    m_->log_(absl::StrCat("job ", e->record.id, " resumed: ",
                          e->record.items_pending(), " items left"));
  }
  std::vector<int64_t> lost;
  absl::Status s = m_->store_->Commit({}, {e->record}, &lost);
  if (!s.ok()) m_->log_(absl::StrCat("job store: ", s.ToString()));
  m_->Changed(e);
}

void JobRunner::StartJobs() {
  const bool shared = m_->store_->shared();
  // A shared store's jobs are claimed on the turns that read them again.
  if (shared && !synced_) return;
  int running = 0;
  absl::flat_hash_map<std::string, int> by_tenant;
  for (auto& [seq, e] : m_->jobs_) {
    if (e.run == nullptr) continue;
    ++running;
    ++by_tenant[e.record.tenant];
  }
  // Jobs that were running when their process stopped run again first
  // (this process's own, all of them; a fleet's, up to the concurrency).
  for (auto& [seq, e] : m_->jobs_) {
    if (e.record.state != jobs::JobState::kRunning || e.run != nullptr) {
      continue;
    }
    if (shared && running >= m_->options_.concurrency) break;
    if (!Claim(&e)) continue;
    Start(&e);
    ++running;
    ++by_tenant[e.record.tenant];
  }
  const absl::Time wall = m_->clock_->WallNow();
  // In turn per tenant: the tenant with the fewest jobs running, of those
  // the one whose last start is the oldest (never: first), its oldest
  // waiting job (jobs_ is in creation order).
  auto turn = [&](const std::string& tenant) {
    auto it = last_started_.find(tenant);
    return std::make_pair(by_tenant[tenant],
                          it == last_started_.end() ? 0 : it->second);
  };
  absl::flat_hash_set<int64_t> taken;  // by another replica, this turn
  while (running < m_->options_.concurrency) {
    JobManager::Entry* next = nullptr;
    for (auto& [seq, e] : m_->jobs_) {
      if (e.record.state != jobs::JobState::kPending) continue;
      if (Held(e.record, wall) || taken.contains(seq)) continue;
      if (next == nullptr ||
          turn(e.record.tenant) < turn(next->record.tenant)) {
        next = &e;
      }
    }
    if (next == nullptr) break;
    if (!Claim(next)) {
      taken.insert(next->record.seq);
      continue;
    }
    if (next->record.state != jobs::JobState::kPending &&
        next->record.state != jobs::JobState::kRunning) {
      continue;
    }
    Start(next);
    last_started_[next->record.tenant] = ++starts_;
    ++running;
    ++by_tenant[next->record.tenant];
  }
}

void JobRunner::FinishJobs() {
  for (auto& [seq, e] : m_->jobs_) {
    JobRun* run = e.run.get();
    if (run == nullptr || !run->read_out || !run->again.empty() ||
        run->in_flight > 0) {
      continue;
    }
    if (e.record.items_pending() > 0) {
      // Counted unfinished, yet nothing left to read: read again from the
      // start (an outcome not committed went back).
      run->read_out = false;
      run->cursor = 0;
      continue;
    }
    Abandon(&e);
    End(&e, jobs::JobState::kSucceeded, "");
  }
}

void JobRunner::Abandon(JobManager::Entry* e) {
  if (e->run == nullptr) return;
  for (auto& [key, listener] : listeners_) {
    if (key.first == e->record.seq && listener->waiter != 0) {
      m_->engine_->Cancel(listener->waiter);
    }
  }
  e->run.reset();
}

void JobRunner::Close(jobs::JobRecord* r, jobs::JobState state,
                      std::string message) {
  r->state = state;
  r->message = std::move(message);
  r->end_time = m_->clock_->WallNow();
  if (r->start_time == absl::InfinitePast()) r->start_time = r->end_time;
  vin::v1::JobSpec spec;
  spec.ParseFromString(r->spec);
  if (!spec.notify_url().empty()) r->notify = jobs::NotifyState::kDue;
}

void JobRunner::Ended(JobManager::Entry* e) {
  const jobs::JobRecord& r = e->record;
  if (r.notify == jobs::NotifyState::kDue) m_->notifier_.Wake();
  m_->log_(absl::StrCat(
      "job ", r.id, " ", jobs::StateName(r.state), ": ", r.items_done,
      " done, ", r.items_failed, " failed",
      r.message.empty() ? "" : absl::StrCat(" (", r.message, ")")));
  m_->Changed(e);
}

void JobRunner::End(JobManager::Entry* e, jobs::JobState state,
                    std::string message) {
  jobs::JobRecord ended = e->record;
  Close(&ended, state, std::move(message));
  std::vector<int64_t> lost;
  absl::Status s = m_->store_->Commit({}, {ended}, &lost);
  if (!s.ok() || !lost.empty()) {
    // Not saved: the job is read again from the store (a shared one), or
    // ends again at the next turn.
    m_->log_(absl::StrCat("job store: job ", e->record.id, " not ended: ",
                          s.ok() ? "it is no longer held here" : s.ToString()));
    next_sync_ = absl::InfinitePast();
    return;
  }
  e->record = std::move(ended);
  Ended(e);
}

void JobRunner::Expire() {
  const absl::Time cutoff = m_->clock_->WallNow() - m_->options_.retention;
  for (auto it = m_->jobs_.begin(); it != m_->jobs_.end();) {
    const jobs::JobRecord& r = it->second.record;
    if (!jobs::IsTerminal(r.state) || r.end_time > cutoff) {
      ++it;
      continue;
    }
    if (!m_->store_->Drop(r.seq).ok()) {
      ++it;
      continue;
    }
    m_->log_(absl::StrCat("job ", r.id, " removed: ended over ",
                          absl::FormatDuration(m_->options_.retention),
                          " ago (--job_retention)"));
    m_->by_id_.erase(r.id);
    it = m_->jobs_.erase(it);
    m_->changed_.SignalAll();
  }
}

// ---- Windows ----

void JobRunner::FillWindows() {
  const absl::Time now = m_->clock_->Now();
  for (auto& [seq, e] : m_->jobs_) {
    JobRun* run = e.run.get();
    if (run == nullptr || run->paused_until > now) continue;
    if (!run->pause_reason.empty()) {
      run->pause_reason.clear();
      e.record.message.clear();
      m_->Changed(&e);
    }
    while (run->in_flight < m_->options_.window && !run->again.empty()) {
      jobs::PendingItem item = std::move(run->again.front());
      run->again.pop_front();
      Submit(&e, std::move(item));
    }
    const int room = m_->options_.window - static_cast<int>(run->in_flight);
    if (room <= 0 || run->read_out) continue;
    absl::StatusOr<std::vector<jobs::PendingItem>> items =
        m_->store_->Pending(seq, run->cursor, room);
    if (!items.ok()) {
      if (absl::IsUnavailable(items.status())) {
        PauseForStore(items.status());
      } else {
        m_->log_(absl::StrCat("job store: ", items.status().ToString()));
      }
      continue;
    }
    if (store_down_) PauseEnds();
    if (static_cast<int>(items->size()) < room) run->read_out = true;
    for (jobs::PendingItem& item : *items) {
      run->cursor = item.index + 1;
      // In flight already (read again after a failed commit): not twice.
      if (listeners_.contains(ItemKey{seq, item.index})) continue;
      Submit(&e, std::move(item));
    }
  }
}

void JobRunner::Submit(JobManager::Entry* e, jobs::PendingItem item) {
  JobRun* run = e->run.get();
  vin::v1::DecodeBatchRequest request;
  request.ParseFromString(item.request);
  const engine::DecodeRequest decode =
      RequestOfItem(request, run->spec, e->record.tenant);
  const ItemKey key{e->record.seq, item.index};
  auto owned = std::make_unique<ItemListener>(this, key.first, std::move(item),
                                              ExtrasOf(request));
  ItemListener* listener = owned.get();
  listeners_[key] = std::move(owned);
  outstanding_.store(listeners_.size());
  ++run->in_flight;
  // A cache answer arrives inside Submit (Complete takes only done_mu_).
  const engine::Admission admission = m_->engine_->Submit(decode, listener);
  if (admission.ok()) {
    listener->waiter = admission.id();
    return;
  }
  listener->OnFailed(admission.failure());
}

absl::Time JobRunner::NextWake() {
  absl::Time wake = absl::InfiniteFuture();
  const absl::Time now = m_->clock_->Now();
  if (!uncommitted_.empty()) wake = now + JobRunner::kLeastPause;
  if (m_->store_->shared()) wake = std::min(wake, next_sync_);
  const absl::Time wall = m_->clock_->WallNow();
  for (auto& [seq, e] : m_->jobs_) {
    if (e.run != nullptr && e.run->paused_until > now) {
      wake = std::min(wake, e.run->paused_until);
    }
    if (e.record.state == jobs::JobState::kPending &&
        e.record.not_before > wall) {
      wake = std::min(wake, now + (e.record.not_before - wall));
    }
  }
  return wake;
}

}  // namespace server
