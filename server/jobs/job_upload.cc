// JobManager::Upload: a job's creation, step by step (job_manager.h).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "domain/limits.h"
#include "server/jobs/job_manager.h"
#include "server/jobs/job_mapping.h"
#include "server/jobs/job_runner.h"

namespace server {

std::unique_ptr<JobManager::Upload> JobManager::NewUpload(
    const std::string& tenant) {
  return std::unique_ptr<Upload>(new Upload(this, tenant));
}

JobManager::Upload::~Upload() {
  if (begun_ && !done_) manager_->store_->Drop(job_.seq).IgnoreError();
  absl::MutexLock lock(&manager_->mu_);
  if (!staging_key_.empty()) manager_->staging_keys_.erase(staging_key_);
  Uncount();
}

void JobManager::Upload::Uncount() {
  if (!counted_) return;
  counted_ = false;
  auto it = manager_->uploading_.find(tenant_);
  if (it != manager_->uploading_.end() && --it->second <= 0) {
    manager_->uploading_.erase(it);
  }
}

absl::Status JobManager::Upload::Refuse(absl::Status why) {
  if (begun_ && !done_) manager_->store_->Drop(job_.seq).IgnoreError();
  done_ = true;
  refused_ = why;
  return why;
}

absl::Status JobManager::Upload::Spec(const vin::v1::JobSpec& spec) {
  if (!refused_.ok()) return refused_;
  if (begun_ || existing_) {
    return Refuse(JobError(
        domain::ErrorReason::kInvalidJobSpec,
        "a job has one JobSpec, in the first message; this one came again"));
  }
  if (absl::Status s = CheckSpec(spec, manager_->options_.notify_hosts);
      !s.ok()) {
    return Refuse(s);
  }
  JobManager& m = *manager_;
  {
    absl::MutexLock lock(&m.mu_);
    if (!spec.idempotency_key().empty()) {
      for (auto& [seq, e] : m.jobs_) {
        if (e.record.tenant == tenant_ &&
            e.record.idempotency_key == spec.idempotency_key()) {
          existing_ = true;
          job_ = e.record;
          return absl::OkStatus();
        }
      }
      std::string key = absl::StrCat(tenant_, "\n", spec.idempotency_key());
      if (!m.staging_keys_.insert(key).second) {
        return Refuse(JobError(
            domain::ErrorReason::kJobLimitReached,
            "a job with this idempotency_key is being created right now; "
            "send again once it is"));
      }
      staging_key_ = std::move(key);
    }
    if (m.OpenJobs(tenant_) >= m.options_.max_open) {
      return Refuse(JobError(
          domain::ErrorReason::kJobLimitReached,
          absl::StrCat(
              "tenant ", tenant_, " has ", m.options_.max_open,
              " jobs not yet ended (--job_max_open); wait for one to end, or "
              "cancel one")));
    }
    ++m.uploading_[tenant_];
    counted_ = true;
  }
  store_bytes_ = m.store_->TotalBytes();
  if (store_bytes_ >= m.options_.max_bytes) {
    return Refuse(JobError(
        domain::ErrorReason::kJobLimitReached,
        absl::StrCat("the job store holds ", store_bytes_,
                     " bytes, its limit "
                     "(--job_max_bytes ",
                     m.options_.max_bytes, "); delete finished jobs")));
  }
  job_.id = jobs::NewJobId();
  job_.tenant = tenant_;
  job_.idempotency_key = spec.idempotency_key();
  job_.spec = spec.SerializeAsString();
  job_.create_time = m.clock_->WallNow();
  if (spec.has_not_before()) {
    job_.not_before = absl::FromUnixSeconds(spec.not_before().seconds()) +
                      absl::Nanoseconds(spec.not_before().nanos());
  }
  job_.off_peak = spec.schedule() == vin::v1::JOB_SCHEDULE_OFF_PEAK;
  job_.bytes = static_cast<int64_t>(job_.spec.size());
  if (absl::Status s = m.store_->BeginJob(&job_); !s.ok()) {
    // A shared store keeps the idempotency keys of every replica's jobs.
    if (absl::IsAlreadyExists(s)) {
      existing_ = true;
      return absl::OkStatus();
    }
    if (absl::IsAborted(s)) {
      return Refuse(JobError(domain::ErrorReason::kJobLimitReached,
                             std::string(s.message())));
    }
    return Refuse(s);
  }
  begun_ = true;
  return absl::OkStatus();
}

absl::Status JobManager::Upload::Columns(std::string columns) {
  if (!refused_.ok()) return refused_;
  if (!begun_ && !existing_) {
    return Refuse(JobError(domain::ErrorReason::kInvalidJobSpec,
                           "the first message of CreateJob must be the "
                           "JobSpec"));
  }
  job_.bytes += static_cast<int64_t>(columns.size());
  job_.columns = std::move(columns);
  return absl::OkStatus();
}

absl::Status JobManager::Upload::Items(const vin::v1::JobItems& items,
                                       const std::vector<std::string>& extras) {
  if (!refused_.ok()) return refused_;
  if (!begun_ && !existing_) {
    return Refuse(JobError(domain::ErrorReason::kInvalidJobSpec,
                           "the first message of CreateJob must be the "
                           "JobSpec"));
  }
  const JobOptions& o = manager_->options_;
  if (items_ + items.items_size() > o.max_items) {
    return Refuse(
        JobError(domain::ErrorReason::kJobTooManyItems,
                 absl::StrCat("a job holds at most ", o.max_items,
                              " items (--job_max_items); this one has more")));
  }
  std::vector<std::string> rows;
  rows.reserve(items.items_size());
  int64_t bytes = 0;
  for (const vin::v1::DecodeBatchRequest& item : items.items()) {
    const int64_t index = items_ + static_cast<int64_t>(rows.size());
    if (item.vin().size() > kMaxJobVinBytes) {
      return Refuse(
          JobError(domain::ErrorReason::kMalformedRequest,
                   absl::StrCat("item ", index, ": vin is longer than ",
                                kMaxJobVinBytes, " bytes")));
    }
    if (item.request_id().size() > domain::kMaxRequestIdBytes) {
      return Refuse(
          JobError(domain::ErrorReason::kFieldTooLong,
                   absl::StrCat("item ", index, ": request_id is longer than ",
                                domain::kMaxRequestIdBytes, " bytes")));
    }
    rows.push_back(item.SerializeAsString());
    bytes += static_cast<int64_t>(rows.back().size());
  }
  for (const std::string& e : extras) bytes += static_cast<int64_t>(e.size());
  if (store_bytes_ + job_.bytes + bytes > o.max_bytes) {
    return Refuse(JobError(
        domain::ErrorReason::kJobLimitReached,
        absl::StrCat(
            "the job would take the job store past its limit (--job_max_bytes ",
            o.max_bytes, ")")));
  }
  if (existing_) {  // the job exists: what is sent again is not stored
    items_ += static_cast<int64_t>(rows.size());
    return absl::OkStatus();
  }
  if (absl::Status s =
          manager_->store_->AddItems(job_.seq, items_, rows, extras);
      !s.ok()) {
    return Refuse(s);
  }
  items_ += static_cast<int64_t>(rows.size());
  job_.bytes += bytes;
  return absl::OkStatus();
}

absl::StatusOr<vin::v1::Job> JobManager::Upload::Finish() {
  if (!refused_.ok()) return refused_;
  JobManager& m = *manager_;
  if (existing_) {
    done_ = true;
    absl::MutexLock lock(&m.mu_);
    auto it = m.by_id_.find(job_.id);
    if (it != m.by_id_.end()) return m.ToJob(m.jobs_[it->second]);
    // Another replica's job (a shared store), not read here yet.
    if (!m.store_->shared()) {
      return JobError(domain::ErrorReason::kJobNotFound,
                      absl::StrCat("no job ", job_.id));
    }
    return m.ToJob(*m.Adopt(job_));
  }
  if (!begun_) {
    return Refuse(JobError(domain::ErrorReason::kInvalidJobSpec,
                           "CreateJob ended without a JobSpec: send the spec "
                           "first"));
  }
  job_.state = jobs::JobState::kPending;
  job_.items_total = items_;
  if (absl::Status s = m.store_->Publish(job_); !s.ok()) return Refuse(s);
  done_ = true;
  absl::MutexLock lock(&m.mu_);
  Uncount();  // now one of the tenant's jobs
  Entry& e = *m.Adopt(job_);
  m.log_(absl::StrCat("job ", job_.id, " of tenant ", job_.tenant,
                      " created: ", items_, " items"));
  m.Changed(&e);
  return m.ToJob(e);
}

}  // namespace server
