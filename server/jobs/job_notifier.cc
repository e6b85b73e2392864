#include "server/jobs/job_notifier.h"

#include <curl/curl.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/jobs/job_manager.h"

namespace server {
namespace {

constexpr absl::Duration kBase = absl::Seconds(1);
constexpr absl::Duration kCap = absl::Minutes(5);
constexpr long kTimeoutMs = 10000;  // NOLINT(runtime/int): libcurl's type

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

// In a fleet, a replica notifies a job's end while it holds the job's
// lease (every replica sees the job due): longer than the longest pause
// between two tries, so that tries of two replicas never interleave.
constexpr absl::Duration kNotifyHold = absl::Minutes(10);

struct Due {
  int64_t seq;
  std::string id;
  std::string url;
  std::string json;
};

}  // namespace

JobNotifier::Post JobNotifier::CurlPost() {
  return [](const std::string& url, const std::string& json) -> int {
    CURL* c = curl_easy_init();
    if (c == nullptr) return 0;
    curl_slist* headers =
        curl_slist_append(nullptr, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, kTimeoutMs);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, json.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(json.size()));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Discard);
    long status = 0;  // NOLINT(runtime/int)
    if (curl_easy_perform(c) == CURLE_OK) {
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    return static_cast<int>(status);
  };
}

JobNotifier::JobNotifier(JobManager* manager, Post post,
                         retry::Jitter::Uniform uniform)
    : m_(manager),
      post_(std::move(post)),
      jitter_(kBase, kCap, std::move(uniform)) {}

JobNotifier::~JobNotifier() { Stop(); }

void JobNotifier::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void JobNotifier::Wake() {
  absl::MutexLock lock(&mu_);
  woken_ = true;
  cv_.Signal();
}

void JobNotifier::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    cv_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

void JobNotifier::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
    }
    RunOnce();
    absl::MutexLock lock(&mu_);
    const absl::Duration wait = std::min(
        absl::Seconds(1),
        std::max(absl::ZeroDuration(), next_wake_ - m_->clock_->Now()));
    if (!stop_ && !woken_) cv_.WaitWithTimeout(&mu_, wait);
    woken_ = false;
  }
}

bool JobNotifier::Claimed(int64_t seq, const std::string& id) {
  jobs::JobStore& store = *m_->store_;
  if (!store.shared()) return true;
  absl::StatusOr<bool> held = store.Hold(seq, kNotifyHold);
  if (!held.ok() || !*held) return false;
  // Another replica may have told it already.
  absl::StatusOr<jobs::JobRecord> fresh = store.LoadJob(id);
  if (fresh.ok() && fresh->notify == jobs::NotifyState::kDue) return true;
  store.Release(seq);
  if (fresh.ok()) {
    absl::MutexLock lock(&m_->mu_);
    auto it = m_->jobs_.find(seq);
    if (it != m_->jobs_.end()) it->second.record.notify = fresh->notify;
    plans_.erase(seq);
  }
  return false;
}

void JobNotifier::RunOnce() {
  const absl::Time now = m_->clock_->Now();
  std::vector<Due> due;
  {
    absl::MutexLock lock(&m_->mu_);
    const absl::Time wall = m_->clock_->WallNow();
    for (auto& [seq, e] : m_->jobs_) {
      jobs::JobRecord& r = e.record;
      if (r.notify != jobs::NotifyState::kDue) continue;
      if (wall - r.end_time > kGiveUpAfter) {
        r.notify = jobs::NotifyState::kGaveUp;
        m_->store_->SaveNotify(r).IgnoreError();
        m_->store_->Release(seq);
        plans_.erase(seq);
        ++failed_;
        m_->log_(absl::StrCat("job ", r.id,
                              ": notify_url not answered 2xx "
                              "within an hour of the job's end; given up"));
        continue;
      }
      Plan& plan = plans_[seq];
      if (plan.next > now) continue;
      vin::v1::Job job = m_->ToJob(e);
      std::string json;
      (void)google::protobuf::util::MessageToJsonString(job, &json, {});
      due.push_back(Due{seq, r.id, job.spec().notify_url(), std::move(json)});
    }
  }
  for (Due& d : due) {
    if (!Claimed(d.seq, d.id)) continue;
    const int status = post_(d.url, d.json);
    absl::MutexLock lock(&m_->mu_);
    auto it = m_->jobs_.find(d.seq);
    if (it == m_->jobs_.end()) {
      plans_.erase(d.seq);
      continue;
    }
    jobs::JobRecord& r = it->second.record;
    if (status >= 200 && status < 300) {
      r.notify = jobs::NotifyState::kSent;
      m_->store_->SaveNotify(r).IgnoreError();
      m_->store_->Release(d.seq);
      plans_.erase(d.seq);
      ++sent_;
      m_->log_(absl::StrCat("job ", r.id, ": notified ", d.url));
      continue;
    }
    Plan& plan = plans_[d.seq];
    plan.prev =
        jitter_.Next(plan.prev == absl::ZeroDuration() ? kBase : plan.prev);
    plan.next = now + plan.prev;
    m_->log_(absl::StrCat("job ", r.id, ": notify_url answered ",
                          status == 0 ? "nothing" : absl::StrCat(status),
                          "; trying again in ",
                          absl::FormatDuration(plan.prev)));
  }
  next_wake_ = absl::InfiniteFuture();
  for (const auto& [seq, plan] : plans_) {
    next_wake_ = std::min(next_wake_, plan.next);
  }
}

}  // namespace server
