#include "domain/error_reason.h"

namespace domain {
namespace {

// In ErrorReason's order.
constexpr absl::string_view kNames[kErrorReasons] = {
    "",
    "INVALID_VIN",
    "INVALID_VIN_LENGTH",
    "INVALID_VIN_CHARACTER",
    "INVALID_VIN_MODEL_YEAR_CODE",
    "INVALID_VIN_CHECK_DIGIT",
    "INVALID_MODEL_YEAR",
    "FIELD_TOO_LONG",
    "MALFORMED_REQUEST",
    "LINE_TOO_LONG",
    "UPSTREAM_UNAVAILABLE",
    "RETRY_BUDGET_EXHAUSTED",
    "RATE_LIMITED",
    "BREAKER_OPEN",
    "UPSTREAM_REJECTED",
    "CANCELLED",
    "SHUTTING_DOWN",
    "OVERLOADED",
    "DEADLINE_EXCEEDED",
    "SNAPSHOT_NOT_LOADED",
    "SNAPSHOT_CANNOT_DECODE",
    "NOT_FOUND",
    "METHOD_NOT_ALLOWED",
    "BODY_TOO_LARGE",
    "HEADERS_TOO_LARGE",
    "REQUEST_TIMEOUT",
    "TOO_MANY_CONNECTIONS",
    "FORBIDDEN_ORIGIN",
    "MISDIRECTED_REQUEST",
    "TLS_REQUIRED",
    "JOBS_NOT_CONFIGURED",
    "JOB_NOT_FOUND",
    "JOB_TOO_MANY_ITEMS",
    "JOB_LIMIT_REACHED",
    "INVALID_JOB_SPEC",
    "JOB_NOT_ENDED",
    "INVALID_PAGE_TOKEN",
    "JOB_STORE_UNAVAILABLE",
    "ADMIN_ONLY",
    "INTERNAL",
};

}  // namespace

absl::string_view ErrorReasonName(ErrorReason reason) {
  const auto i = static_cast<size_t>(reason);
  return i < kErrorReasons ? kNames[i] : absl::string_view();
}

absl::optional<ErrorReason> ErrorReasonNamed(absl::string_view name) {
  if (name.empty()) return absl::nullopt;
  for (size_t i = 0; i < kErrorReasons; ++i) {
    if (kNames[i] == name) return static_cast<ErrorReason>(i);
  }
  return absl::nullopt;
}

}  // namespace domain
