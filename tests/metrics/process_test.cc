// The process_* metrics' reading of /proc, and the route/code histograms.
#include "metrics/process.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "metrics/labeled_histograms.h"

namespace metrics {
namespace {

// A /proc/self/stat line whose command name holds spaces and a ')'.
constexpr char kStat[] =
    "4242 (vin server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 "
    "250 150 0 0 20 0 9 0 123456 400000000 5000 18446744073709551615";

TEST(ProcessStats, FieldsAreReadAfterTheCommandName) {
  const auto f = ParseProcStat(kStat, 100, 4096);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(f->cpu_seconds, 4.0);  // (250 + 150) / 100
  EXPECT_DOUBLE_EQ(f->start_seconds_after_boot, 1234.56);
  EXPECT_DOUBLE_EQ(f->resident_bytes, 5000.0 * 4096);
  EXPECT_FALSE(ParseProcStat("4242 (cut short) S 1 2", 100, 4096).has_value());
  EXPECT_FALSE(ParseProcStat("no parenthesis at all", 100, 4096).has_value());
  EXPECT_FALSE(ParseProcStat(kStat, 0, 4096).has_value());
}

TEST(ProcessStats, BootTimeIsReadFromItsLine) {
  EXPECT_EQ(
      ParseBootTime("cpu  1 2 3\nintr 5 6\nbtime 1764979200\nprocesses 9\n"),
      1764979200.0);
  EXPECT_FALSE(ParseBootTime("cpu 1 2 3\n").has_value());
}

TEST(ProcessStats, ThisProcessIsReadWhole) {
  const ProcessStats s = ReadProcessStats();
  ASSERT_TRUE(s.resident_bytes && s.cpu_seconds && s.open_fds &&
              s.start_time_seconds);
  EXPECT_GT(*s.resident_bytes, 1 << 20);
  EXPECT_GE(*s.open_fds, 3);  // stdin, stdout, stderr
  const double now = static_cast<double>(absl::ToUnixSeconds(absl::Now()));
  EXPECT_LE(*s.start_time_seconds, now + 1);
  EXPECT_GT(*s.start_time_seconds, now - 24 * 3600) << "started within a day";
}

TEST(RouteCodeHistograms, EachRouteAndCodeIsOneSeries) {
  RouteCodeHistograms h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < 1000; ++i) {
        h.Observe(t % 2 == 0 ? "decode" : "vpic_values", i % 2 == 0 ? 200 : 503,
                  absl::Milliseconds(3));
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto series = h.Read();
  ASSERT_EQ(series.size(), 4u);
  EXPECT_EQ(series[0].route, "decode");
  EXPECT_EQ(series[0].code, 200);
  EXPECT_EQ(series[3].route, "vpic_values");
  EXPECT_EQ(series[3].code, 503);
  for (const auto& s : series) {
    EXPECT_EQ(s.snapshot.count, 1000u) << s.route << " " << s.code;
    EXPECT_NEAR(s.snapshot.sum_seconds, 3.0, 1e-6);
  }
}

}  // namespace
}  // namespace metrics
