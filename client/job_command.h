// `vinctl job`: bulk jobs (vin.v1.VinJobService, DESIGN rule 20) from the
// command line. `submit` sends a feed (read as `vinctl batch` reads it) as
// a job and prints its id; `status`, `watch`, `cancel`, `delete`, `list`;
// `fetch` writes the job's results as `vinctl batch` writes them for the
// same feed (the input's columns first, merged by index, input order),
// waiting while the job runs, and resuming after an interruption from
// where it stopped (its progress is kept in `<out>.fetch`).
#ifndef VIN_CLIENT_JOB_COMMAND_H_
#define VIN_CLIENT_JOB_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "feed/result_writer.h"
#include "vin/v1/jobs.grpc.pb.h"

namespace vinctl {

enum class JobOp { kSubmit, kStatus, kWatch, kCancel, kDelete, kList, kFetch };

struct JobOptions {
  JobOp op = JobOp::kList;
  std::string id;         // status, watch, cancel, delete, fetch
  std::string in = "-";   // submit, fetch: the feed
  std::string out = "-";  // fetch: the output ("-": stdout, no resuming)
  // submit: the spec.
  std::string name;
  bool off_peak = false;
  std::string not_before;  // RFC 3339, "" none
  std::string idempotency_key;
  std::string notify_url;
  int32_t model_year = 0;
  bool warn_check_digit = false;
  // fetch: as vinctl batch's --format.
  feed::OutputFormat format = feed::OutputFormat::kCsv;
  std::string tenant;  // the x-vin-tenant header ("" none)
};

// Runs `options.op`, printing to `out` (the id, a status line, the
// results) and `err` (errors, "vinctl: ..."). Returns vinctl's exit
// status: 0, 1 (fetch: a record failed; watch: the job did not succeed),
// 2 (an error: usage, I/O, the call failed).
int RunJob(const JobOptions& options,
           vin::v1::VinJobService::StubInterface* stub, std::ostream& out,
           std::ostream& err);

// One line about a job: "<id> <state> <done>/<total> done, <failed> failed
// [held for off-peak until T] [<message>]".
std::string JobLine(const vin::v1::Job& job);

}  // namespace vinctl

#endif  // VIN_CLIENT_JOB_COMMAND_H_
