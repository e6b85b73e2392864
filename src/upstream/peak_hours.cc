#include "upstream/peak_hours.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"

namespace upstream {
namespace {

constexpr absl::string_view kDays[7] = {"mon", "tue", "wed", "thu",
                                        "fri", "sat", "sun"};

int DayIndex(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (int i = 0; i < 7; ++i) {
    if (lower == kDays[i]) return i;
  }
  return -1;
}

// Minutes into the day of "HH:MM" (24:00 allowed), or -1.
int MinuteOf(absl::string_view hhmm) {
  std::vector<absl::string_view> parts = absl::StrSplit(hhmm, ':');
  int h = 0, m = 0;
  if (parts.size() != 2 || parts[0].size() != 2 || parts[1].size() != 2 ||
      !absl::SimpleAtoi(parts[0], &h) || !absl::SimpleAtoi(parts[1], &m) ||
      h < 0 || h > 24 || m < 0 || m > 59 || (h == 24 && m != 0)) {
    return -1;
  }
  return h * 60 + m;
}

int WeekdayIndex(absl::Weekday d) {
  switch (d) {
    case absl::Weekday::monday: return 0;
    case absl::Weekday::tuesday: return 1;
    case absl::Weekday::wednesday: return 2;
    case absl::Weekday::thursday: return 3;
    case absl::Weekday::friday: return 4;
    case absl::Weekday::saturday: return 5;
    case absl::Weekday::sunday: return 6;
  }
  return 0;
}

}  // namespace

absl::StatusOr<PeakHours> PeakHours::Parse(absl::string_view spec) {
  spec = absl::StripAsciiWhitespace(spec);
  PeakHours p;
  if (spec.empty() || absl::AsciiStrToLower(spec) == "none") return p;
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--peak_hours \"", spec, "\": ", why,
        " (expected \"none\" or like \"Mon-Fri 06:00-18:00 America/New_York\")"));
  };
  std::vector<absl::string_view> words =
      absl::StrSplit(spec, ' ', absl::SkipWhitespace());
  if (words.size() != 3) return bad("three parts: days, hours, time zone");
  for (absl::string_view range : absl::StrSplit(words[0], ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    if (ends.empty() || ends.size() > 2) return bad(absl::StrCat("days \"", range, "\""));
    const int from = DayIndex(ends[0]);
    const int to = DayIndex(ends.back());
    if (from < 0 || to < 0) {
      return bad(absl::StrCat("\"", range, "\" is not a day or a range of days "
                              "(Mon, Tue, ... Sun)"));
    }
    for (int d = from;; d = (d + 1) % 7) {
      p.days_[d] = true;
      if (d == to) break;
    }
  }
  std::vector<absl::string_view> hours = absl::StrSplit(words[1], '-');
  if (hours.size() != 2) return bad("hours must be HH:MM-HH:MM");
  p.start_minute_ = MinuteOf(hours[0]);
  p.end_minute_ = MinuteOf(hours[1]);
  if (p.start_minute_ < 0 || p.end_minute_ < 0) {
    return bad("hours must be HH:MM-HH:MM, 00:00 to 24:00");
  }
  if (p.end_minute_ <= p.start_minute_) return bad("the end must come after the start");
  if (!absl::LoadTimeZone(std::string(words[2]), &p.zone_)) {
    return bad(absl::StrCat("unknown time zone \"", words[2],
                            "\" (is tzdata installed?)"));
  }
  p.enabled_ = true;
  p.spec_ = absl::StrCat(words[0], " ", words[1], " ", words[2]);
  return p;
}

bool PeakHours::Contains(absl::Time t) const {
  if (!enabled_) return false;
  const absl::CivilSecond local = absl::ToCivilSecond(t, zone_);
  if (!days_[WeekdayIndex(absl::GetWeekday(absl::CivilDay(local)))]) return false;
  const int minute = local.hour() * 60 + local.minute();
  return minute >= start_minute_ && minute < end_minute_;
}

}  // namespace upstream
