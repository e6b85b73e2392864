#include "domain/failure.h"

#include <utility>

#include "absl/time/time.h"

namespace domain {

const FailureTraits& TraitsOf(FailureReason reason) {
  using C = absl::StatusCode;
  using R = ErrorReason;
  // In FailureReason's order.
  static constexpr FailureTraits kTable[kFailureReasons] = {
      {C::kInvalidArgument, false, "invalid_vin", R::kInvalidVin},
      {C::kUnavailable, true, "upstream_unavailable", R::kUpstreamUnavailable},
      {C::kFailedPrecondition, false, "upstream_rejected",
       R::kUpstreamRejected},
      {C::kCancelled, false, "cancelled", R::kCancelled},
      {C::kUnavailable, true, "shutting_down", R::kShuttingDown},
      {C::kResourceExhausted, true, "overloaded", R::kOverloaded},
      {C::kDeadlineExceeded, true, "deadline_exceeded", R::kDeadlineExceeded},
      {C::kFailedPrecondition, false, "no_snapshot", R::kSnapshotNotLoaded},
      {C::kInvalidArgument, false, "invalid_request", R::kMalformedRequest},
  };
  static_assert(static_cast<size_t>(FailureReason::kInvalidRequest) + 1 ==
                kFailureReasons);
  return kTable[static_cast<size_t>(reason)];
}

std::string UtcSeconds(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

Failure FailureOf(FailureReason reason, std::string message,
                  ErrorReason detail) {
  Failure f;
  f.reason = reason;
  f.message = std::move(message);
  f.retryable = TraitsOf(reason).retryable;
  f.detail = detail;
  return f;
}

ErrorReason ReasonOf(const Failure& failure) {
  return failure.detail != ErrorReason::kUnspecified
             ? failure.detail
             : TraitsOf(failure.reason).detail;
}

}  // namespace domain
