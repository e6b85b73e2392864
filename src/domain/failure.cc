#include "domain/failure.h"

#include <utility>

namespace domain {

const FailureTraits& TraitsOf(FailureReason reason) {
  using C = absl::StatusCode;
  // In FailureReason's order.
  static constexpr FailureTraits kTable[kFailureReasons] = {
      {C::kInvalidArgument, false, "invalid_vin"},
      {C::kUnavailable, true, "upstream_unavailable"},
      {C::kFailedPrecondition, false, "upstream_rejected"},
      {C::kCancelled, false, "cancelled"},
      {C::kUnavailable, true, "shutting_down"},
      {C::kResourceExhausted, true, "overloaded"},
      {C::kDeadlineExceeded, true, "deadline_exceeded"},
      {C::kFailedPrecondition, false, "no_snapshot"},
      {C::kInvalidArgument, false, "invalid_request"},
  };
  static_assert(static_cast<size_t>(FailureReason::kInvalidRequest) + 1 ==
                kFailureReasons);
  return kTable[static_cast<size_t>(reason)];
}

std::string UnreachableSince(const std::string& text) {
  const size_t at = text.find(kUnreachableSince);
  if (at == std::string::npos) return "";
  const size_t from = at + sizeof(kUnreachableSince) - 1;
  const size_t end = text.find(' ', from);
  return text.substr(from, end == std::string::npos ? end : end - from);
}

Failure FailureOf(FailureReason reason, std::string message) {
  Failure f;
  f.reason = reason;
  f.message = std::move(message);
  f.retryable = TraitsOf(reason).retryable;
  return f;
}

}  // namespace domain
