#include "fleet/event_bounds.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "domain/limits.h"

namespace fleet {
namespace {

// The first `max` bytes of `s`, not cutting a UTF-8 sequence in two.
bool CutText(std::string* s, size_t max) {
  if (s->size() <= max) return false;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>((*s)[n]) & 0xc0) == 0x80) --n;
  s->resize(n);
  return true;
}

bool CutCount(int* n, int min) {
  const int c = std::clamp(*n, min, kMaxReportedAttempts);
  const bool cut = c != *n;
  *n = c;
  return cut;
}

bool Cut(absl::Duration* d, absl::Duration max) {
  const absl::Duration c = ClampDuration(*d, max);
  const bool cut = c != *d;
  *d = c;
  return cut;
}

bool CutError(vpic::UpstreamError* e) {
  bool cut = CutText(&e->kind, 32);
  cut |= CutText(&e->message, kMaxEventTextBytes);
  const int status = std::clamp(e->http_status, 0, 999);
  cut |= status != e->http_status;
  e->http_status = status;
  return cut;
}

}  // namespace

absl::Duration ClampDuration(absl::Duration d, absl::Duration max) {
  return std::clamp(d, absl::ZeroDuration(),
                    std::max(absl::ZeroDuration(), max));
}

bool ClampEvent(const FleetLimits& limits, absl::Time now,
                engine::FleetEvent* e) {
  using Kind = engine::FleetEvent::Kind;
  bool cut = CutText(&e->origin, 64);
  switch (e->kind) {
    case Kind::kDone:
      cut |= CutCount(&e->attempts, 0);
      break;
    case Kind::kRetrying:
      cut |= CutCount(&e->retrying.attempt, 1);
      cut |= Cut(&e->retrying.next_delay, limits.delay_max);
      cut |= CutError(&e->retrying.error);
      break;
    case Kind::kFailed:
      cut |= CutCount(&e->failure.attempts, 0);
      cut |= Cut(&e->failure.retry_delay, limits.delay_max);
      cut |= CutText(&e->failure.message, kMaxEventTextBytes);
      if (e->failure.last_error) cut |= CutError(&*e->failure.last_error);
      break;
    case Kind::kBreakerOpened: {
      cut |= Cut(&e->breaker.cooldown, limits.breaker_cooldown_max);
      const absl::Time since =
          std::clamp(e->breaker.unreachable_since, now - absl::Hours(24), now);
      cut |= since != e->breaker.unreachable_since;
      e->breaker.unreachable_since = since;
      cut |= CutError(&e->breaker.last_error);
      break;
    }
    case Kind::kAbandoned:
    case Kind::kBreakerClosed:
      break;
  }
  return cut;
}

absl::StatusOr<FleetKeyParts> ParseFleetKey(absl::string_view key) {
  FleetKeyParts parts;
  if (absl::ConsumePrefix(&key, engine::kFleetReferencePrefix)) {
    if (key.empty() || key.size() > kMaxReferenceKeyBytes ||
        !absl::ascii_isalpha(static_cast<unsigned char>(key[0])) ||
        std::any_of(key.begin(), key.end(),
                    [](char c) { return c <= ' ' || c > '~'; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fleet key: not a reference request (printable, no spaces, at most ",
          kMaxReferenceKeyBytes, " bytes)"));
    }
    parts.reference = std::string(key);
    return parts;
  }
  const size_t bar = key.find('|');
  // A VIN, or a partial one (rule 18: 3 to 17 characters, '*' for an
  // unknown position after the WMI).
  if (bar == absl::string_view::npos || bar < 3 || bar > 17) {
    return absl::InvalidArgumentError(
        "fleet key: not a VIN (or a partial one) and a year");
  }
  for (size_t i = 0; i < bar; ++i) {
    const char c = key[i];
    const bool ok = (c >= '0' && c <= '9') || (c == '*' && i >= 3) ||
                    (c >= 'A' && c <= 'Z' && c != 'I' && c != 'O' && c != 'Q');
    if (!ok) return absl::InvalidArgumentError("fleet key: not a VIN");
  }
  parts.vin = std::string(key.substr(0, bar));
  const absl::string_view year = key.substr(bar + 1);
  if (year.empty() || year.size() > 4 ||
      year.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(year, &parts.model_year) ||
      (parts.model_year != 0 && (parts.model_year < domain::kMinModelYear ||
                                 parts.model_year > domain::kMaxModelYear))) {
    return absl::InvalidArgumentError("fleet key: not a model year");
  }
  return parts;
}

}  // namespace fleet
