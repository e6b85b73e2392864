// JobRunner's outcomes (job_runner.h): what the engine answered, committed
// to the store once per turn, or kept while the store cannot take them.
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "domain/error_reason.h"
#include "server/common/proto_mapping.h"
#include "server/jobs/job_mapping.h"
#include "server/jobs/job_runner.h"

namespace server {
namespace {

// Answers remembered per run for sharing their stored bytes.
constexpr size_t kAnswersKept = 4096;

// Whether the item's failure may pass: the item is tried again later
// rather than failed.
bool Passing(const engine::Failure& f) {
  return f.retryable && f.reason != domain::FailureReason::kCancelled;
}

}  // namespace

int64_t JobRunner::AnswerKey(JobRun* run, const engine::DecodeResult& result,
                             std::string* bytes) {
  if (result.encoded == nullptr) {
    *bytes = EncodeResult(result);
    return run->next_answer_key++;
  }
  auto it = run->answer_keys.find(result.encoded.get());
  if (it != run->answer_keys.end()) return it->second;
  if (run->answer_keys.size() >= kAnswersKept) {
    run->answer_keys.clear();
    run->answers_kept.clear();
  }
  *bytes = *result.encoded;
  const int64_t key = run->next_answer_key++;
  run->answer_keys[result.encoded.get()] = key;
  return key;
}

void JobRunner::CommitCompletions() {
  std::vector<Completion> taken;
  {
    absl::MutexLock lock(&done_mu_);
    taken.swap(completions_);
  }
  absl::flat_hash_map<int64_t, JobManager::Entry*> touched;
  const absl::Time now = m_->clock_->Now();
  for (Completion& c : taken) {
    auto l = listeners_.find(ItemKey{c.seq, c.index});
    if (l == listeners_.end()) continue;
    std::unique_ptr<ItemListener> listener = std::move(l->second);
    listeners_.erase(l);
    outstanding_.store(listeners_.size());
    auto it = m_->jobs_.find(c.seq);
    // A job cancelled, deleted or stopped meanwhile keeps what it has.
    if (it == m_->jobs_.end() || it->second.run == nullptr) continue;
    JobManager::Entry& e = it->second;
    JobRun* run = e.run.get();
    --run->in_flight;
    if (c.result == nullptr && Passing(c.failure)) {
      run->again.push_back(std::move(listener->item()));
      const absl::Duration pause = std::max(kLeastPause, c.failure.retry_delay);
      if (run->paused_until < now + pause) {
        run->paused_until = now + pause;
        run->pause_reason =
            std::string(domain::ErrorReasonName(domain::ReasonOf(c.failure)));
        e.record.message =
            absl::StrCat("paused until its items can be decoded (",
                         run->pause_reason, "): ", c.failure.message);
        touched[c.seq] = &e;
      }
      continue;
    }
    uncommitted_.push_back(std::move(c));
  }
  if (uncommitted_.empty() && touched.empty()) return;
  std::vector<jobs::Finish> finishes;
  for (const Completion& c : uncommitted_) {
    auto it = m_->jobs_.find(c.seq);
    if (it == m_->jobs_.end() || it->second.run == nullptr) continue;
    JobManager::Entry& e = it->second;
    JobRun* run = e.run.get();
    jobs::Finish f;
    f.seq = c.seq;
    f.index = c.index;
    if (c.result != nullptr) {
      f.outcome = jobs::Outcome::kDone;
      f.answer_key = AnswerKey(run, *c.result, &f.answer);
      if (!f.answer.empty()) run->answers_kept.push_back(c.result);
      ++e.record.items_done;
      e.record.bytes += static_cast<int64_t>(f.answer.size());
    } else {
      f.outcome = jobs::Outcome::kFailed;
      vin::v1::FailedEvent event;
      ToProto(c.failure, &event);
      f.failure = event.SerializeAsString();
      ++e.record.items_failed;
      e.record.bytes += static_cast<int64_t>(f.failure.size());
    }
    finishes.push_back(std::move(f));
    touched[c.seq] = &e;
  }
  std::vector<jobs::JobRecord> records;
  for (auto& [seq, e] : touched) records.push_back(e->record);
  std::vector<int64_t> lost;
  absl::Status s = m_->store_->Commit(finishes, records, &lost);
  if (!s.ok()) {
    // Not stored: the counts go back, and the outcomes wait for the store
    // (their answers are stored with them next time).
    for (const jobs::Finish& f : finishes) {
      JobManager::Entry& e = m_->jobs_[f.seq];
      if (f.outcome == jobs::Outcome::kDone) {
        --e.record.items_done;
        e.record.bytes -= static_cast<int64_t>(f.answer.size());
      } else {
        --e.record.items_failed;
        e.record.bytes -= static_cast<int64_t>(f.failure.size());
      }
      if (e.run != nullptr) {
        e.run->answer_keys.clear();
        e.run->answers_kept.clear();
      }
    }
    PauseForStore(s);
    return;
  }
  uncommitted_.clear();
  for (const jobs::Finish& f : finishes) {
    if (f.outcome == jobs::Outcome::kDone) {
      ++m_->items_done_total_;
    } else {
      ++m_->items_failed_total_;
    }
  }
  for (int64_t seq : lost) {
    // Another replica holds it now, or it ended elsewhere: it is read
    // again from the store, and runs where its lease is.
    auto it = m_->jobs_.find(seq);
    if (it == m_->jobs_.end()) continue;
    m_->log_(absl::StrCat("job ", it->second.record.id,
                          " is no longer held here (its lease went to "
                          "another replica, or it ended): left to the fleet"));
    Abandon(&it->second);
    touched.erase(seq);
    next_sync_ = absl::InfinitePast();
  }
  if (store_down_) PauseEnds();
  for (auto& [seq, e] : touched) m_->Changed(e);
}

}  // namespace server
