// What tests read from the fake vPIC's request log.
#ifndef VIN_TESTS_TESTING_REQUEST_LOG_H_
#define VIN_TESTS_TESTING_REQUEST_LOG_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fake_vpic/fake_vpic.h"

namespace testing_util {

// The most requests the fake saw within any `window` (half open).
inline size_t DensestWindow(std::vector<fakevpic::RequestRecord> log,
                            absl::Duration window) {
  std::sort(log.begin(), log.end(),
            [](const auto& a, const auto& b) { return a.time < b.time; });
  size_t densest = 0;
  for (size_t i = 0, j = 0; i < log.size(); ++i) {
    while (log[i].time - log[j].time >= window) ++j;
    densest = std::max(densest, i - j + 1);
  }
  return densest;
}

// The most requests the fake saw within any one second.
inline size_t DensestSecond(std::vector<fakevpic::RequestRecord> log) {
  return DensestWindow(std::move(log), absl::Seconds(1));
}

// Whether `vin` went in one of the first `n` requests that arrived at or
// after `asked` (a single request or a batch).
inline bool InFirstRequestsAfter(const std::vector<fakevpic::RequestRecord>& log,
                                 const std::string& vin, absl::Time asked, int n) {
  int after = 0;
  for (const auto& r : log) {
    if (r.time < asked) continue;
    if (r.vin == vin) return true;
    for (const auto& [v, year] : r.batch) {
      if (v == vin) return true;
    }
    if (++after == n) return false;
  }
  return false;
}

// For a failure message: the requests from `asked` up to the one that
// carried `vin`, as "+<ms> <VINs in it>", the one with `vin` marked.
inline std::string RequestsAfter(const std::vector<fakevpic::RequestRecord>& log,
                                 const std::string& vin, absl::Time asked) {
  std::string out;
  for (const auto& r : log) {
    if (r.time < asked) continue;
    bool carried = r.vin == vin;
    for (const auto& [v, year] : r.batch) carried = carried || v == vin;
    absl::StrAppend(&out, out.empty() ? "" : ", ", "+",
                    absl::ToInt64Milliseconds(r.time - asked), "ms ",
                    std::max<size_t>(1, r.batch.size()), " VINs",
                    carried ? " (it)" : "");
    if (carried) break;
  }
  return out;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_REQUEST_LOG_H_
