#include "client/progress.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace vinctl {
namespace {

double PerSecond(int64_t n, absl::Duration elapsed) {
  const double s = absl::ToDoubleSeconds(elapsed);
  return s > 0 ? static_cast<double>(n) / s : 0.0;
}

std::string FormatRate(double rate) {
  return rate >= 10 ? absl::StrFormat("%.0f", rate)
                    : absl::StrFormat("%.1f", rate);
}

}  // namespace

std::string FormatProgressLine(const ProgressSnapshot& s) {
  const int64_t finished = s.done + s.failed;
  const double rate = PerSecond(finished, s.elapsed);
  std::string line = absl::StrCat(s.done, " done, ", s.failed, " failed, ",
                                  s.retrying, " retrying now, ");
  if (s.waiting_for_rate > 0) {
    const absl::Duration longest =
        absl::Seconds(std::ceil(absl::ToDoubleSeconds(
            std::max(s.longest_rate_wait, absl::ZeroDuration()))));
    absl::StrAppend(&line, s.waiting_for_rate,
                    " waiting for the rate cap (up to ",
                    longest == absl::ZeroDuration()
                        ? "0s"
                        : absl::FormatDuration(longest),
                    s.waiting_at_peak > 0 ? ", bulk at NHTSA's peak hours" : "",
                    "), ");
  }
  absl::StrAppend(&line, FormatRate(rate), "/s");
  if (s.input_size > 0 && s.bytes_read > 0 && s.records_read > 0 && rate > 0) {
    // Records in the whole input, estimated from the bytes read so far.
    const double total = static_cast<double>(s.records_read) *
                         static_cast<double>(s.input_size) /
                         static_cast<double>(s.bytes_read);
    const double remaining = std::max(0.0, total - finished);
    const absl::Duration eta = absl::Seconds(std::ceil(remaining / rate));
    absl::StrAppend(&line, ", ETA ", absl::FormatDuration(eta));
  }
  if (!s.vpic_unreachable_since.empty()) {
    absl::StrAppend(&line, "; vPIC unreachable since ",
                    s.vpic_unreachable_since);
  }
  return line;
}

std::string FormatSummary(const BatchSummary& s) {
  std::string line = absl::StrCat("vinctl: ", s.records,
                                  s.records == 1 ? " record, " : " records, ",
                                  s.done, " done, ", s.failed, " failed");
  if (!s.failed_by_reason.empty()) {
    std::vector<std::string> parts;
    for (const auto& [reason, n] : s.failed_by_reason) {
      parts.push_back(absl::StrCat(reason, " ", n));
    }
    absl::StrAppend(&line, " (", absl::StrJoin(parts, ", "), ")");
  }
  absl::StrAppend(
      &line, ", in ", absl::StrFormat("%.1f", absl::ToDoubleSeconds(s.elapsed)),
      " s (", FormatRate(PerSecond(s.done + s.failed, s.elapsed)), "/s)");
  if (!s.vpic_unreachable_since.empty()) {
    absl::StrAppend(&line, "; vPIC unreachable since ",
                    s.vpic_unreachable_since);
  }
  return line;
}

}  // namespace vinctl
