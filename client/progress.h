// What `vinctl batch` tells the person at the terminal: the progress line and
// the summary. Pure formatting; safe from any thread.
#ifndef VIN_CLIENT_PROGRESS_H_
#define VIN_CLIENT_PROGRESS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"

namespace vinctl {

// Counts of a batch in progress.
struct ProgressSnapshot {
  int64_t done = 0;
  int64_t failed = 0;
  int64_t retrying = 0;  // items whose last event is RETRYING
  // Items whose last event is a QUEUED saying they wait for the server's
  // upstream rate cap.
  int64_t waiting_for_rate = 0;
  // Of those, the bulk items held to bulk's share of the rate because
  // NHTSA's peak hours hold (the server's --peak_hours).
  int64_t waiting_at_peak = 0;
  // The longest of their estimated waits, from now.
  absl::Duration longest_rate_wait;
  int64_t records_read = 0;
  int64_t bytes_read = 0;
  int64_t input_size = 0;  // bytes; 0 when unknown (no ETA then)
  absl::Duration elapsed;
  // Set while the latest answers say the server finds vPIC unreachable
  // (its circuit breaker is open): since when, as the server wrote it.
  std::string vpic_unreachable_since;
};

// "120 done, 3 failed, 2 retrying now, 40 waiting for the rate cap (up to
// 12s, bulk at NHTSA's peak hours), 85/s, ETA 1m12s" (the rate-cap part only
// when some wait, the peak hours only when the server says some of them
// wait for them, the ETA only when the input size is known and something
// has finished), then "; vPIC unreachable since 2026-12-03T14:02:11Z" while
// the server says so.
std::string FormatProgressLine(const ProgressSnapshot& s);

// The outcome of a whole batch.
struct BatchSummary {
  int64_t records = 0;
  int64_t done = 0;
  int64_t failed = 0;
  std::map<std::string, int64_t> failed_by_reason;  // "INVALID_VIN" -> 2
  absl::Duration elapsed;
  // Set when the server's last word on vPIC was that it is unreachable.
  std::string vpic_unreachable_since;
};

// "vinctl: 7 records, 4 done, 3 failed (INVALID_VIN 2, UPSTREAM_REJECTED 1),
// in 1.2 s (5.8/s)", then "; vPIC unreachable since ..." when the server
// last said so.
std::string FormatSummary(const BatchSummary& s);

}  // namespace vinctl

#endif  // VIN_CLIENT_PROGRESS_H_
