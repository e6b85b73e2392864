#include "domain/limits.h"

#include "absl/strings/str_cat.h"

namespace domain {

absl::Status CheckModelYear(int year, absl::string_view field) {
  if (year == 0 || (year >= kMinModelYear && year <= kMaxModelYear)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be 0 (no hint) or between ", kMinModelYear,
                   " and ", kMaxModelYear, ", got ", year));
}

int LastModelYear(absl::Time now) {
  return static_cast<int>(absl::ToCivilYear(now, absl::UTCTimeZone()).year()) +
         2;
}

}  // namespace domain
