// NHTSA's peak hours (rule 17): a weekly window in a time zone's local
// time, which follows daylight-saving changes.
#include "upstream/peak_hours.h"

#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace upstream {
namespace {

using testing::HasSubstr;

absl::TimeZone NewYork() {
  absl::TimeZone tz;
  EXPECT_TRUE(absl::LoadTimeZone("America/New_York", &tz)) << "tzdata installed?";
  return tz;
}
absl::Time At(absl::TimeZone tz, int y, int mo, int d, int h, int mi, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), tz);
}
absl::Time Utc(int y, int mo, int d, int h, int mi) {
  return At(absl::UTCTimeZone(), y, mo, d, h, mi);
}

PeakHours Nhtsa() {
  auto p = PeakHours::Parse("Mon-Fri 06:00-18:00 America/New_York");
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

TEST(PeakHours, TuesdayMorningInNewYorkIsPeakItsEveningAndSundayAreNot) {
  const PeakHours p = Nhtsa();
  ASSERT_TRUE(p.enabled());
  const absl::TimeZone ny = NewYork();
  EXPECT_TRUE(p.Contains(At(ny, 2026, 12, 1, 10, 0)));  // a Tuesday
  EXPECT_FALSE(p.Contains(At(ny, 2026, 12, 1, 22, 0)));
  EXPECT_FALSE(p.Contains(At(ny, 2026, 12, 6, 10, 0)));  // a Sunday
  EXPECT_FALSE(p.Contains(At(ny, 2026, 12, 5, 12, 0)));  // a Saturday
  EXPECT_TRUE(p.Contains(At(ny, 2026, 12, 4, 6, 0))) << "the start is in";
  EXPECT_FALSE(p.Contains(At(ny, 2026, 12, 4, 5, 59, 59)));
  EXPECT_TRUE(p.Contains(At(ny, 2026, 12, 4, 17, 59, 59)));
  EXPECT_FALSE(p.Contains(At(ny, 2026, 12, 4, 18, 0))) << "the end is out";
}

// 18:00 in New York is 23:00 UTC in winter and 22:00 UTC in summer: the
// change follows the local clock across both daylight-saving changes of
// 2026 (March 8, November 1).
TEST(PeakHours, TheEndIsSixInTheEveningLocalAcrossDaylightSaving) {
  const PeakHours p = Nhtsa();
  // Friday March 6, EST (UTC-5): 22:30 UTC is 17:30 local.
  EXPECT_TRUE(p.Contains(Utc(2026, 3, 6, 22, 30)));
  EXPECT_FALSE(p.Contains(Utc(2026, 3, 6, 23, 0)));
  // Monday March 9, EDT (UTC-4): 22:30 UTC is 18:30 local.
  EXPECT_TRUE(p.Contains(Utc(2026, 3, 9, 21, 59)));
  EXPECT_FALSE(p.Contains(Utc(2026, 3, 9, 22, 0)));
  EXPECT_FALSE(p.Contains(Utc(2026, 3, 9, 22, 30)));
  // Friday October 30, EDT; Monday November 2, EST.
  EXPECT_FALSE(p.Contains(Utc(2026, 10, 30, 22, 30)));
  EXPECT_TRUE(p.Contains(Utc(2026, 11, 2, 22, 30)));
  EXPECT_FALSE(p.Contains(Utc(2026, 11, 2, 23, 0)));
  // The start too: 06:00 local is 11:00 UTC in winter, 10:00 in summer.
  EXPECT_FALSE(p.Contains(Utc(2026, 3, 6, 10, 30)));
  EXPECT_TRUE(p.Contains(Utc(2026, 3, 9, 10, 30)));
}

TEST(PeakHours, NoneListsAndWrappingRanges) {
  auto none = PeakHours::Parse("none");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->enabled());
  EXPECT_FALSE(none->Contains(Utc(2026, 12, 1, 15, 0)));
  auto p = PeakHours::Parse("Fri-Mon,Wed 09:00-24:00 UTC");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->Contains(Utc(2026, 12, 5, 23, 59)));   // Saturday
  EXPECT_TRUE(p->Contains(Utc(2026, 12, 2, 9, 0)));     // Wednesday
  EXPECT_FALSE(p->Contains(Utc(2026, 12, 1, 12, 0)));   // Tuesday
  EXPECT_FALSE(p->Contains(Utc(2026, 12, 7, 8, 59)));   // Monday, early
}

TEST(PeakHours, ABadSpecNamesWhatIsWrong) {
  EXPECT_THAT(PeakHours::Parse("Mon-Fri 06:00-18:00").status().message(),
              HasSubstr("three parts"));
  EXPECT_THAT(PeakHours::Parse("Mon-Fry 06:00-18:00 UTC").status().message(),
              HasSubstr("\"Mon-Fry\" is not a day"));
  EXPECT_THAT(PeakHours::Parse("Mon-Fri 6:00-18:00 UTC").status().message(),
              HasSubstr("HH:MM"));
  EXPECT_THAT(PeakHours::Parse("Mon-Fri 18:00-06:00 UTC").status().message(),
              HasSubstr("the end must come after the start"));
  EXPECT_THAT(PeakHours::Parse("Mon-Fri 06:00-18:00 Mars/Olympus").status().message(),
              HasSubstr("unknown time zone \"Mars/Olympus\""));
}

}  // namespace
}  // namespace upstream
