// Bulk jobs (DESIGN rule 20): where they are stored, how many run, their
// limits and where their ends may be told.
// --help lists these flags under "jobs (bulk jobs: store, window, limits,
// notifications)" (server/flags.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "server/flag_groups.h"

ABSL_FLAG(std::string, job_path, "",
          "SQLite file keeping bulk jobs, their items and results (\"\": "
          "jobs are off); scripts/serve.sh passes .data/jobs.db");
ABSL_FLAG(int, job_window, 256, "items of one job in flight at once");
ABSL_FLAG(int, job_concurrency, 4,
          "jobs running at once; the others wait in creation order, in turn "
          "per tenant");
ABSL_FLAG(int64_t, job_max_items, 1000000, "items one job may hold");
ABSL_FLAG(int, job_max_open, 20, "jobs one tenant may have not yet ended");
ABSL_FLAG(int64_t, job_max_bytes, int64_t{1} << 30,
          "bytes of items and results the job store may hold; a job that "
          "would take it past is refused");
ABSL_FLAG(absl::Duration, job_retention, absl::Hours(24 * 7),
          "how long an ended job and its results are kept");
ABSL_FLAG(absl::Duration, job_lease, absl::Seconds(30),
          "with --redis_url: how long a replica holds a job it works without "
          "renewing its lease (every third of it); a replica that dies leaves "
          "its jobs to another after this long");
ABSL_FLAG(std::string, job_notify_hosts, "",
          "comma-separated hosts (as written in the URL, host or host:port) "
          "a job's notify_url may name; empty: no job may ask to be told");

namespace server {

absl::Status JobsFromFlags(ServerOptions& options) {
  JobOptions& j = options.jobs;
  j.path = absl::GetFlag(FLAGS_job_path);
  j.window = absl::GetFlag(FLAGS_job_window);
  j.concurrency = absl::GetFlag(FLAGS_job_concurrency);
  j.max_items = absl::GetFlag(FLAGS_job_max_items);
  j.max_open = absl::GetFlag(FLAGS_job_max_open);
  j.max_bytes = absl::GetFlag(FLAGS_job_max_bytes);
  j.retention = absl::GetFlag(FLAGS_job_retention);
  j.lease = absl::GetFlag(FLAGS_job_lease);
  j.notify_hosts.clear();
  for (absl::string_view h :
       absl::StrSplit(absl::GetFlag(FLAGS_job_notify_hosts), ',',
                      absl::SkipWhitespace())) {
    j.notify_hosts.emplace_back(absl::StripAsciiWhitespace(h));
  }
  struct {
    const char* flag;
    int64_t value;
  } positive[] = {{"--job_window", j.window},
                  {"--job_concurrency", j.concurrency},
                  {"--job_max_items", j.max_items},
                  {"--job_max_open", j.max_open},
                  {"--job_max_bytes", j.max_bytes}};
  for (const auto& p : positive) {
    if (p.value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(p.flag, " must be positive, not ", p.value));
    }
  }
  if (j.retention <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--job_retention must be positive");
  }
  if (j.lease < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--job_lease must be at least 1s");
  }
  return absl::OkStatus();
}

}  // namespace server
