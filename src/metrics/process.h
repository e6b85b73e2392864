// The process metrics every Prometheus target exposes (process_*), read
// from Linux's /proc for this process: CPU seconds, resident memory, open
// file descriptors, the start time. Bounded reads; a value that cannot be
// read is absent rather than wrong.
#ifndef VIN_METRICS_PROCESS_H_
#define VIN_METRICS_PROCESS_H_

#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace metrics {

struct ProcessStats {
  absl::optional<double> cpu_seconds;  // user + system
  absl::optional<double> resident_bytes;
  absl::optional<double> open_fds;
  absl::optional<double> start_time_seconds;  // since the Unix epoch
};

ProcessStats ReadProcessStats();

// Parsing, apart for tests: /proc/self/stat's text, the clock ticks per
// second, the page size and /proc/stat's boot time (btime).
struct StatFields {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double start_seconds_after_boot = 0;
};
absl::optional<StatFields> ParseProcStat(absl::string_view stat, long ticks,
                                         long page_size);
absl::optional<double> ParseBootTime(absl::string_view proc_stat);

}  // namespace metrics

#endif  // VIN_METRICS_PROCESS_H_
