// Our /v1/jobs routes (exchange.h; DESIGN rule 20), over the JobManager
// the gRPC VinJobService shares: POST /v1/jobs (NDJSON of
// DecodeBatchRequest in JSON, or text/csv: a feed as vinctl reads it; the
// spec in the query), GET /v1/jobs, GET /v1/jobs/{id},
// GET /v1/jobs/{id}/results (NDJSON: a JobResult a line, then
// {"nextPageToken": ..., "complete": ...}; format=csv: vinctl batch's
// columns, the header on every page), POST
// /v1/jobs/{id}:cancel, DELETE /v1/jobs/{id}. Messages in protobuf's JSON
// mapping; errors as google.rpc.Status with the job reasons.
#ifndef VIN_SERVER_HTTP_API_JOBS_H_
#define VIN_SERVER_HTTP_API_JOBS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/http/exchange.h"
#include "server/jobs/job_manager.h"
#include "vin/v1/jobs.pb.h"

namespace server {
namespace http {
namespace internal {

class ApiJobs final : public Exchange {
 public:
  using Exchange::Exchange;
  void Start() override;

 private:
  void Create(JobManager* jobs);
  absl::Status ReadNdjson(JobManager::Upload* upload);
  absl::Status ReadCsv(JobManager::Upload* upload);
  void ListResults(JobManager* jobs);
  void SendCsv(const vin::v1::ListJobResultsResponse& page,
               const JobManager::Rows& rows);
  void Fail(const absl::Status& status);
};

// The JobSpec of POST /v1/jobs's query: display_name, schedule (now,
// off_peak), not_before (RFC 3339), source_preference, check_digit_policy
// (the enum's name, or its tail in any case: "live_only"), notify_url,
// idempotency_key. INVALID_ARGUMENT names a bad parameter.
absl::StatusOr<vin::v1::JobSpec> SpecOfQuery(absl::string_view target);

// What a CSV job keeps beside each item: a CSV record of the row's problem
// ("" when it was sent; else the row is failed BAD_ROW, as vinctl fails
// it) and its fields.
std::string RowExtra(const std::string& problem,
                     const std::vector<std::string>& fields);

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_API_JOBS_H_
