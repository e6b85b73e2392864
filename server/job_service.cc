#include "server/job_service.h"

#include <atomic>
#include <utility>

#include "absl/types/optional.h"
#include "server/common/status_mapping.h"
#include "server/jobs/job_mapping.h"

namespace server {

grpc::Status JobStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return ToGrpcStatus(JobErrorDetails(status));
}

// CreateJob: the spec, then items, each handed to the upload as it comes.
class JobService::Upload final
    : public grpc::ServerReadReactor<vin::v1::CreateJobRequest> {
 public:
  Upload(JobManager* jobs, std::string tenant, vin::v1::Job* response)
      : upload_(jobs->NewUpload(tenant)), response_(response) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client's half is closed: the job is complete
      absl::StatusOr<vin::v1::Job> job = upload_->Finish();
      if (job.ok()) *response_ = std::move(*job);
      Finish(JobStatus(job.status()));
      return;
    }
    absl::Status s;
    if (request_.has_spec()) {
      s = upload_->Spec(request_.spec());
    } else if (request_.has_items()) {
      s = upload_->Items(request_.items());
    } else {
      s = JobError(domain::ErrorReason::kMalformedRequest,
                   "a CreateJobRequest with neither spec nor items");
    }
    if (!s.ok()) {
      upload_.reset();  // nothing stays stored
      Finish(JobStatus(s));
      return;
    }
    StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  std::unique_ptr<JobManager::Upload> upload_;
  vin::v1::Job* const response_;
  vin::v1::CreateJobRequest request_;
};

// WatchJob: the Job now, then when it moves, until it has ended.
class JobService::Watch final : public grpc::ServerWriteReactor<vin::v1::Job> {
 public:
  Watch(JobService* service, std::string tenant, std::string id)
      : service_(service), tenant_(std::move(tenant)), id_(std::move(id)) {}

  // Under the service's mu_: write the job if it moved and no write is in
  // progress; end the stream after its terminal state, or when it is gone.
  // gRPC is called after the stream's own lock is released: OnDone may run
  // on another thread as soon as Finish is called, and the pump may then
  // delete this, so nothing of it is touched after Finish.
  void Poll() {
    absl::optional<grpc::Status> end;
    {
      absl::MutexLock lock(&mu_);
      if (writing_ || finished_) return;
      if (ended_) {
        end = Ending(grpc::Status::OK);
      } else if (cancelled_) {
        end = Ending(grpc::Status::CANCELLED);
      } else {
        uint64_t version = version_;
        absl::StatusOr<vin::v1::Job> job =
            service_->jobs_->Get(tenant_, id_, &version);
        if (!job.ok()) {
          end = Ending(JobStatus(job.status()));
        } else {
          if (sent_any_ && version == version_) return;
          version_ = version;
          sent_any_ = true;
          job_ = std::move(*job);
          ended_ = job_.state() >= vin::v1::JOB_STATE_SUCCEEDED;
          writing_ = true;  // job_ is not touched until OnWriteDone
        }
      }
    }
    if (end.has_value()) return Finish(*end);
    StartWrite(&job_);
  }

  // The server stops: the stream ends now, or when its write is done.
  void Stop() {
    absl::optional<grpc::Status> end;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      if (!writing_) end = Ending(Stopping());
    }
    if (end.has_value()) Finish(*end);
  }

  // A write in progress when the call is cancelled or the server stops
  // ends the stream when it is done (the pump may have stopped): gRPC
  // waits for every stream's Finish, cancelled or not.
  void OnWriteDone(bool ok) override {
    absl::optional<grpc::Status> end;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok || cancelled_) {
        end = Ending(grpc::Status::CANCELLED);
      } else if (stopping_) {
        end = Ending(Stopping());
      } else if (ended_) {
        end = Ending(grpc::Status::OK);
      }
    }
    if (end.has_value()) Finish(*end);
  }

  void OnCancel() override {
    absl::optional<grpc::Status> end;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      if (!writing_) end = Ending(grpc::Status::CANCELLED);
    }
    if (end.has_value()) Finish(*end);
  }

  // The stream is over; the pump (or the service's end) deletes it, so
  // that no lock of the service's is taken here, on whatever thread gRPC
  // calls it from.
  void OnDone() override { done_.store(true); }
  bool done() const { return done_.load(); }

 private:
  // The status to Finish with, the first time the stream is to end (then
  // the caller calls Finish, outside the lock); nullopt after.
  absl::optional<grpc::Status> Ending(grpc::Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return absl::nullopt;
    finished_ = true;
    return status;
  }

  static grpc::Status Stopping() {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "the server is stopping; watch again after it "
                        "restarts");
  }

  JobService* const service_;
  const std::string tenant_;
  const std::string id_;
  absl::Mutex mu_;
  vin::v1::Job job_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool sent_any_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;      // the Job sent is terminal
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // OnCancel came
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;   // the server stops
  bool finished_ ABSL_GUARDED_BY(mu_) = false;   // Finish was called
  std::atomic<bool> done_{false};
};

JobService::JobService(JobManager* jobs, TenantPolicy tenants,
                       absl::Duration watch_interval)
    : jobs_(jobs),
      tenants_(std::move(tenants)),
      watch_interval_(watch_interval) {
  if (jobs_ != nullptr) pump_ = std::thread([this] { Pump(); });
}

// After the gRPC server has stopped: every stream has had its OnDone.
JobService::~JobService() {
  Shutdown();
  if (pump_.joinable()) pump_.join();
  absl::MutexLock lock(&mu_);
  for (Watch* w : watches_) delete w;
}

void JobService::Shutdown() {
  absl::MutexLock lock(&mu_);
  stop_ = true;
  wake_.Signal();
  for (Watch* w : watches_) w->Stop();
}

void JobService::Pump() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    for (auto it = watches_.begin(); it != watches_.end();) {
      Watch* w = *it;
      if (w->done()) {
        delete w;
        it = watches_.erase(it);
        continue;
      }
      w->Poll();
      ++it;
    }
    wake_.WaitWithTimeout(&mu_, watch_interval_);
  }
}

grpc::ServerReadReactor<vin::v1::CreateJobRequest>* JobService::CreateJob(
    grpc::CallbackServerContext* context, vin::v1::Job* response) {
  if (jobs_ == nullptr) {
    class Refused final
        : public grpc::ServerReadReactor<vin::v1::CreateJobRequest> {
     public:
      Refused() { Finish(JobStatus(JobsNotConfigured())); }
      void OnDone() override { delete this; }
    };
    return new Refused();
  }
  return new Upload(jobs_, tenants_.TenantOf(*context), response);
}

namespace {

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 const absl::Status& status) {
  grpc::ServerUnaryReactor* r = context->DefaultReactor();
  r->Finish(JobStatus(status));
  return r;
}

template <typename T>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 absl::StatusOr<T> result, T* response) {
  if (result.ok()) *response = std::move(*result);
  return Answer(context, result.status());
}

}  // namespace

grpc::ServerUnaryReactor* JobService::GetJob(
    grpc::CallbackServerContext* context, const vin::v1::GetJobRequest* request,
    vin::v1::Job* response) {
  if (jobs_ == nullptr) return Answer(context, JobsNotConfigured());
  return Answer(context,
                jobs_->Get(tenants_.TenantOf(*context), request->job_id()),
                response);
}

grpc::ServerUnaryReactor* JobService::ListJobs(
    grpc::CallbackServerContext* context,
    const vin::v1::ListJobsRequest* request,
    vin::v1::ListJobsResponse* response) {
  if (jobs_ == nullptr) return Answer(context, JobsNotConfigured());
  return Answer(context, jobs_->List(tenants_.TenantOf(*context), *request),
                response);
}

grpc::ServerUnaryReactor* JobService::ListJobResults(
    grpc::CallbackServerContext* context,
    const vin::v1::ListJobResultsRequest* request,
    vin::v1::ListJobResultsResponse* response) {
  if (jobs_ == nullptr) return Answer(context, JobsNotConfigured());
  return Answer(context, jobs_->Results(tenants_.TenantOf(*context), *request),
                response);
}

grpc::ServerUnaryReactor* JobService::CancelJob(
    grpc::CallbackServerContext* context,
    const vin::v1::CancelJobRequest* request, vin::v1::Job* response) {
  if (jobs_ == nullptr) return Answer(context, JobsNotConfigured());
  return Answer(context,
                jobs_->Cancel(tenants_.TenantOf(*context), request->job_id()),
                response);
}

grpc::ServerUnaryReactor* JobService::DeleteJob(
    grpc::CallbackServerContext* context,
    const vin::v1::DeleteJobRequest* request, vin::v1::DeleteJobResponse*) {
  if (jobs_ == nullptr) return Answer(context, JobsNotConfigured());
  return Answer(context,
                jobs_->Delete(tenants_.TenantOf(*context), request->job_id()));
}

grpc::ServerWriteReactor<vin::v1::Job>* JobService::WatchJob(
    grpc::CallbackServerContext* context,
    const vin::v1::GetJobRequest* request) {
  if (jobs_ == nullptr) {
    class Refused final : public grpc::ServerWriteReactor<vin::v1::Job> {
     public:
      Refused() { Finish(JobStatus(JobsNotConfigured())); }
      void OnDone() override { delete this; }
    };
    return new Refused();
  }
  auto* watch = new Watch(this, tenants_.TenantOf(*context), request->job_id());
  absl::MutexLock lock(&mu_);
  if (stop_) {
    watch->Stop();
    return watch;
  }
  watches_.insert(watch);
  watch->Poll();  // the Job now
  return watch;
}

}  // namespace server
