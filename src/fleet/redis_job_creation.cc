// RedisJobStore's creation half (redis_job_store.h): a job staged with
// its idempotency key claimed, its items in chunks, then published or
// dropped.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet/redis_job_scripts.h"
#include "fleet/redis_job_store.h"
#include "fleet/redis_job_values.h"

namespace fleet {
namespace {

using job_values::IntOf;
using job_values::Unavailable;

// Items sent in one script.
constexpr size_t kChunk = 1000;

}  // namespace

absl::Status RedisJobStore::BeginJob(jobs::JobRecord* job) {
  absl::StatusOr<RedisValue> n =
      redis_->Call({"INCR", absl::StrCat(options_.prefix, "jobs:seq")});
  if (!n.ok()) return Unavailable(n.status());
  job->seq = n->integer;
  job->state = jobs::JobState::kStaging;
  const bool idem = !job->idempotency_key.empty();
  const std::string idem_key =
      idem ? IdemKey(job->tenant, job->idempotency_key) : IdKey(job->id);
  absl::StatusOr<RedisValue> r =
      Script(job_scripts::kBegin, {JobKey(job->seq), IdKey(job->id), idem_key},
             {absl::StrCat(job->seq), Meta(*job),
              absl::StrCat(absl::ToInt64Milliseconds(options_.staging_ttl)),
              absl::StrCat(job->bytes), idem ? "1" : "0"});
  if (!r.ok()) return r.status();
  if (r->elements.size() == 1 && IntOf(r->elements[0]) == 1) {
    absl::MutexLock lock(&mu_);
    staging_[job->seq] = {IdKey(job->id), idem_key};
    return absl::OkStatus();
  }
  if (r->elements.size() == 2 && IntOf(r->elements[0]) == 0) {
    const int64_t prev = IntOf(r->elements[1]);
    absl::StatusOr<jobs::JobRecord> existing = LoadSeq(prev);
    if (existing.ok() && existing->tenant == job->tenant &&
        existing->idempotency_key == job->idempotency_key) {
      if (existing->state == jobs::JobState::kStaging) {
        return absl::AbortedError(
            "a job with this idempotency_key is being created right now; "
            "send again once it is");
      }
      *job = *std::move(existing);
      return absl::AlreadyExistsError(job->id);
    }
    if (!existing.ok() && !absl::IsNotFound(existing.status())) {
      return existing.status();
    }
    // The key names a job that is gone, or not this key's: it goes, and
    // the job is staged again.
    redis_->Call({"DEL", idem_key}).IgnoreError();
    return BeginJob(job);
  }
  return absl::DataLossError("job store: a reply of BeginJob's shape");
}

absl::Status RedisJobStore::AddItems(int64_t seq, int64_t first_index,
                                     const std::vector<std::string>& requests,
                                     const std::vector<std::string>& extras) {
  for (size_t at = 0; at < requests.size(); at += kChunk) {
    const size_t n = std::min(kChunk, requests.size() - at);
    std::vector<std::string> args = {
        absl::StrCat(first_index + static_cast<int64_t>(at)),
        absl::StrCat(absl::ToInt64Milliseconds(options_.staging_ttl)),
        absl::StrCat(n)};
    const std::string items_key = JobKey(seq, ":items");
    for (size_t i = at; i < at + n; ++i) {
      args.push_back(Sign(
          absl::StrCat(items_key, ":", first_index + static_cast<int64_t>(i)),
          requests[i]));
    }
    if (!extras.empty()) {
      for (size_t i = at; i < at + n; ++i) {
        args.push_back(i < extras.size() ? extras[i] : std::string());
      }
    }
    // The job's keys live on while its items arrive.
    std::pair<std::string, std::string> named;
    {
      absl::MutexLock lock(&mu_);
      auto it = staging_.find(seq);
      if (it != staging_.end()) named = it->second;
    }
    if (named.first.empty()) named = {JobKey(seq), JobKey(seq)};
    absl::StatusOr<RedisValue> r =
        Script(job_scripts::kAddItems,
               {items_key, JobKey(seq, ":extra"), JobKey(seq), named.first,
                named.second},
               std::move(args));
    if (!r.ok()) return r.status();
    if (r->integer != 1) {
      return absl::FailedPreconditionError(
          r->integer < 0 ? "job store: the job being created expired in Redis"
                         : "job store: items out of order");
    }
  }
  return absl::OkStatus();
}

absl::Status RedisJobStore::Publish(const jobs::JobRecord& job) {
  const std::string idem_key = job.idempotency_key.empty()
                                   ? IdKey(job.id)
                                   : IdemKey(job.tenant, job.idempotency_key);
  absl::StatusOr<RedisValue> r = Script(
      job_scripts::kPublish,
      {JobKey(job.seq), JobKey(job.seq, ":items"), JobKey(job.seq, ":extra"),
       IdKey(job.id), idem_key, absl::StrCat(options_.prefix, "jobs")},
      {absl::StrCat(job.seq), Meta(job), absl::StrCat(job.bytes)});
  if (!r.ok()) return r.status();
  {
    absl::MutexLock lock(&mu_);
    staging_.erase(job.seq);
  }
  if (r->integer != 1) {
    return absl::FailedPreconditionError(
        "job store: the job being created expired in Redis");
  }
  return absl::OkStatus();
}

absl::Status RedisJobStore::Drop(int64_t seq) {
  {
    absl::MutexLock lock(&mu_);
    staging_.erase(seq);
  }
  // The id and idempotency keys are named in the meta; a job whose meta
  // cannot be read loses its own keys only.
  std::string id_key = JobKey(seq, ":lease");
  std::string idem_key = id_key;
  absl::StatusOr<jobs::JobRecord> r = LoadSeq(seq);
  if (!r.ok() && absl::IsUnavailable(r.status())) return r.status();
  if (r.ok()) {
    id_key = IdKey(r->id);
    if (!r->idempotency_key.empty()) {
      idem_key = IdemKey(r->tenant, r->idempotency_key);
    }
  }
  absl::StatusOr<RedisValue> d =
      Script(job_scripts::kDrop,
             {JobKey(seq), JobKey(seq, ":items"), JobKey(seq, ":extra"),
              JobKey(seq, ":out"), JobKey(seq, ":ans"), JobKey(seq, ":lease"),
              id_key, idem_key, absl::StrCat(options_.prefix, "jobs")},
             {absl::StrCat(seq)});
  return d.status();
}

}  // namespace fleet
