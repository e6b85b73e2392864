// vinctl's progress line and summary (client/progress.h).
#include "client/progress.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vinctl {
namespace {

using testing::HasSubstr;

TEST(Progress, LineWithAndWithoutEta) {
  ProgressSnapshot s;
  s.done = 120;
  s.failed = 3;
  s.retrying = 2;
  s.elapsed = absl::Seconds(2);
  EXPECT_EQ(FormatProgressLine(s), "120 done, 3 failed, 2 retrying now, 62/s");
  // 123 finished of 200 read from a quarter of the file: ~800 records in
  // all, 677 to go at 61.5/s: 11.01 s, rounded up.
  s.records_read = 200;
  s.bytes_read = 1000;
  s.input_size = 4000;
  EXPECT_EQ(FormatProgressLine(s),
            "120 done, 3 failed, 2 retrying now, 62/s, ETA 12s");
  s.waiting_for_rate = 40;
  s.longest_rate_wait = absl::Milliseconds(79200);  // rounded up to seconds
  EXPECT_EQ(FormatProgressLine(s),
            "120 done, 3 failed, 2 retrying now, 40 waiting for the rate cap "
            "(up to 1m20s), 62/s, ETA 12s");
  s.waiting_at_peak = 40;
  EXPECT_EQ(FormatProgressLine(s),
            "120 done, 3 failed, 2 retrying now, 40 waiting for the rate cap "
            "(up to 1m20s, bulk at NHTSA's peak hours), 62/s, ETA 12s");
  s.vpic_unreachable_since = "2026-12-03T14:02:11Z";
  EXPECT_EQ(FormatProgressLine(s),
            "120 done, 3 failed, 2 retrying now, 40 waiting for the rate cap "
            "(up to 1m20s, bulk at NHTSA's peak hours), 62/s, ETA 12s; vPIC "
            "unreachable since 2026-12-03T14:02:11Z");
  s.longest_rate_wait = -absl::Seconds(3);  // expected already: not negative
  s.waiting_at_peak = 0;
  EXPECT_THAT(FormatProgressLine(s),
              testing::HasSubstr("40 waiting for the rate cap (up to 0s), "));
}

TEST(Progress, Summary) {
  BatchSummary s;
  s.records = 7;
  s.done = 4;
  s.failed = 3;
  s.failed_by_reason = {{"UPSTREAM_REJECTED", 1}, {"INVALID_VIN", 2}};
  s.elapsed = absl::Milliseconds(1250);
  EXPECT_EQ(FormatSummary(s),
            "vinctl: 7 records, 4 done, 3 failed (INVALID_VIN 2, "
            "UPSTREAM_REJECTED 1), in 1.2 s (5.6/s)");
  BatchSummary one;
  one.records = 1;
  one.done = 1;
  one.elapsed = absl::Seconds(2);
  EXPECT_EQ(FormatSummary(one),
            "vinctl: 1 record, 1 done, 0 failed, in 2.0 s (0.5/s)");
  one.vpic_unreachable_since = "2026-12-03T14:02:11Z";
  EXPECT_EQ(FormatSummary(one),
            "vinctl: 1 record, 1 done, 0 failed, in 2.0 s (0.5/s); vPIC "
            "unreachable since 2026-12-03T14:02:11Z");
}

}  // namespace
}  // namespace vinctl
