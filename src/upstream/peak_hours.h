// NHTSA's peak hours (DESIGN rule 17): when bulk work may use only a share
// of the rate. A weekly window in a time zone, "Mon-Fri 06:00-18:00
// America/New_York" (NHTSA's support hours, the default), or none. Local
// time is the zone's, through abseil's time zones and the system's tzdata,
// so the window follows daylight-saving changes.
//
// Immutable and thread-safe once parsed.
#ifndef VIN_UPSTREAM_PEAK_HOURS_H_
#define VIN_UPSTREAM_PEAK_HOURS_H_

#include <array>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace upstream {

class PeakHours {
 public:
  // No peak hours: Contains() is always false.
  PeakHours() = default;

  // "none", or "DAYS HH:MM-HH:MM ZONE": DAYS a day ("Tue"), a range
  // ("Mon-Fri", wrapping as in "Fri-Mon") or a comma list of those
  // ("Mon,Wed-Thu"); the end after the start (24:00 for midnight); ZONE an
  // IANA name ("America/New_York", "UTC"). The error names what is wrong.
  static absl::StatusOr<PeakHours> Parse(absl::string_view spec);

  // Whether calendar time `t` falls in the window (start included, end
  // excluded), in the zone's local time.
  bool Contains(absl::Time t) const;
  bool enabled() const { return enabled_; }
  // The spec, normalised ("none" when disabled).
  const std::string& spec() const { return spec_; }

 private:
  bool enabled_ = false;
  std::array<bool, 7> days_{};  // by absl::Weekday, Monday first
  int start_minute_ = 0;        // of the local day
  int end_minute_ = 0;
  absl::TimeZone zone_;
  std::string spec_ = "none";
};

}  // namespace upstream

#endif  // VIN_UPSTREAM_PEAK_HOURS_H_
