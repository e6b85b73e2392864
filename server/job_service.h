// vin.v1.VinJobService (DESIGN rule 20) on gRPC's callback API, over the
// JobManager the gateway's /v1/jobs routes share. Without a manager (no
// --job_path) every method is FAILED_PRECONDITION naming the flag.
//
// WatchJob's streams are fed by one thread of the service (the pump), which
// looks at each open stream's job every `watch_interval` and writes the Job
// when its version has moved; a stream ends after the terminal state.
#ifndef VIN_SERVER_JOB_SERVICE_H_
#define VIN_SERVER_JOB_SERVICE_H_

#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "server/common/tenant.h"
#include "server/jobs/job_manager.h"
#include "vin/v1/jobs.grpc.pb.h"

namespace server {

class JobService final : public vin::v1::VinJobService::CallbackService {
 public:
  // `jobs` (may be null: jobs are off) must outlive every call.
  JobService(JobManager* jobs, TenantPolicy tenants,
             absl::Duration watch_interval = absl::Milliseconds(250));
  ~JobService() override;

  grpc::ServerReadReactor<vin::v1::CreateJobRequest>* CreateJob(
      grpc::CallbackServerContext* context, vin::v1::Job* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const vin::v1::GetJobRequest* request,
                                   vin::v1::Job* response) override;
  grpc::ServerUnaryReactor* ListJobs(
      grpc::CallbackServerContext* context,
      const vin::v1::ListJobsRequest* request,
      vin::v1::ListJobsResponse* response) override;
  grpc::ServerWriteReactor<vin::v1::Job>* WatchJob(
      grpc::CallbackServerContext* context,
      const vin::v1::GetJobRequest* request) override;
  grpc::ServerUnaryReactor* ListJobResults(
      grpc::CallbackServerContext* context,
      const vin::v1::ListJobResultsRequest* request,
      vin::v1::ListJobResultsResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* context,
                                      const vin::v1::CancelJobRequest* request,
                                      vin::v1::Job* response) override;
  grpc::ServerUnaryReactor* DeleteJob(
      grpc::CallbackServerContext* context,
      const vin::v1::DeleteJobRequest* request,
      vin::v1::DeleteJobResponse* response) override;

  // Ends every WatchJob stream (the server is stopping).
  void Shutdown();

 private:
  class Upload;
  class Watch;
  void Pump();

  JobManager* const jobs_;
  const TenantPolicy tenants_;
  const absl::Duration watch_interval_;

  absl::Mutex mu_;
  absl::CondVar wake_;
  std::set<Watch*> watches_ ABSL_GUARDED_BY(mu_);  // deleted once done
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread pump_;
};

// A job method's absl::Status (JobManager's, with its reason) as gRPC's,
// with google.rpc.ErrorInfo.
grpc::Status JobStatus(const absl::Status& status);

}  // namespace server

#endif  // VIN_SERVER_JOB_SERVICE_H_
