// JobRunner's side of a shared store (a fleet's Redis, DESIGN rule 20):
// leases renewed, the fleet's jobs read again, jobs claimed; and the pause
// while the store cannot take outcomes (either store).
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/jobs/job_runner.h"

namespace server {
namespace {

constexpr char kStorePause[] = "paused: the job store cannot be reached";

// Whether two records of one job show the same.
bool Same(const jobs::JobRecord& a, const jobs::JobRecord& b) {
  return a.state == b.state && a.message == b.message &&
         a.items_done == b.items_done && a.items_failed == b.items_failed &&
         a.start_time == b.start_time && a.end_time == b.end_time &&
         a.notify == b.notify && a.bytes == b.bytes;
}

}  // namespace

void JobRunner::Share() {
  const absl::Time now = m_->clock_->Now();
  synced_ = false;
  if (now < next_sync_) return;
  next_sync_ = now + m_->options_.sync_interval;
  // Leases are renewed every third of their time.
  for (auto& [seq, e] : m_->jobs_) {
    JobRun* run = e.run.get();
    if (run == nullptr || now - run->renewed < m_->options_.lease / 3) continue;
    absl::StatusOr<bool> held = m_->store_->Hold(seq, m_->options_.lease);
    // The store out of reach: its commits say whether the job is still ours.
    if (!held.ok()) continue;
    if (!*held) {
      m_->log_(absl::StrCat("job ", e.record.id,
                            ": its lease went to another replica; left to it"));
      Abandon(&e);
      continue;
    }
    run->renewed = now;
  }
  absl::StatusOr<std::vector<jobs::JobRecord>> loaded = m_->store_->LoadJobs();
  if (!loaded.ok()) return;
  synced_ = true;
  Merge(*std::move(loaded));
}

void JobRunner::Merge(std::vector<jobs::JobRecord> loaded) {
  absl::flat_hash_set<int64_t> present;
  for (jobs::JobRecord& r : loaded) {
    present.insert(r.seq);
    auto it = m_->jobs_.find(r.seq);
    if (it == m_->jobs_.end()) {
      m_->Changed(m_->Adopt(std::move(r)));
      continue;
    }
    JobManager::Entry& e = it->second;
    if (e.run != nullptr) {
      // Worked here: this process's record is the newest, unless the job
      // ended elsewhere (cancelled on another replica).
      if (!jobs::IsTerminal(r.state)) continue;
      Abandon(&e);
    }
    if (Same(e.record, r)) continue;
    e.record = std::move(r);
    m_->Changed(&e);
  }
  for (auto it = m_->jobs_.begin(); it != m_->jobs_.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    // Gone from the store: deleted, or removed by the retention elsewhere.
    Abandon(&it->second);
    m_->by_id_.erase(it->second.record.id);
    it = m_->jobs_.erase(it);
    m_->changed_.SignalAll();
  }
}

bool JobRunner::Claim(JobManager::Entry* e) {
  if (!m_->store_->shared()) return true;
  absl::StatusOr<bool> held =
      m_->store_->Hold(e->record.seq, m_->options_.lease);
  if (!held.ok() || !*held) return false;
  // The lease is ours: the job as the store has it now (another replica
  // may have ended it since this process last read it).
  absl::StatusOr<jobs::JobRecord> fresh = m_->store_->LoadJob(e->record.id);
  if (!fresh.ok() || jobs::IsTerminal(fresh->state)) {
    m_->store_->Release(e->record.seq);
    if (fresh.ok() && !Same(e->record, *fresh)) {
      e->record = *std::move(fresh);
      m_->Changed(e);
    }
    return false;
  }
  e->record = *std::move(fresh);
  return true;
}

void JobRunner::PauseForStore(const absl::Status& why) {
  if (store_down_) return;
  store_down_ = true;
  m_->log_(absl::StrCat("job store: ", why.ToString(),
                        "; running jobs pause until it answers"));
  for (auto& [seq, e] : m_->jobs_) {
    if (e.run == nullptr) continue;
    e.record.message = absl::StrCat(kStorePause, " (", why.message(), ")");
    m_->Changed(&e);
  }
}

void JobRunner::PauseEnds() {
  store_down_ = false;
  m_->log_("job store: answering again; running jobs go on");
  for (auto& [seq, e] : m_->jobs_) {
    if (e.run == nullptr || !absl::StartsWith(e.record.message, kStorePause)) {
      continue;
    }
    e.record.message.clear();
    m_->Changed(&e);
  }
}

}  // namespace server
