// Why a decode failed, and the one table of what each reason means to
// callers: the gRPC status of a unary call, whether trying later may help,
// and the metric label (vin_decode_failures_total{reason}).
#ifndef VIN_DOMAIN_FAILURE_H_
#define VIN_DOMAIN_FAILURE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"

namespace domain {

// A failed upstream attempt as callers see it (UpstreamError in the API).
struct UpstreamError {
  int http_status = 0;  // 0 when there was no HTTP answer
  // "timeout", "connect", "reset", "http", "bad_response" (also a body over
  // the size limit), "transport" (other failures of the transfer), "fatal"
  std::string kind;
  std::string message;
};

// What one upstream request's answer says of vPIC's health (DESIGN rule
// 13), decided once by vpic::ClassifyRequest for the circuit breaker.
enum class UpstreamHealth {
  kAnswered,  // vPIC answered: a decode (sparse too), a rejection, a 429
  kBroken,    // unreachable or broken: connect, DNS, reset, timeout,
              // 500/502/503/504, a 200 that is not vPIC JSON
  kNeutral,   // says nothing of vPIC (a local error: bad URL, TLS set-up)
};

enum class FailureReason {
  kInvalidVin,
  kUpstreamUnavailable,  // retries exhausted, or Retry-After too long
  kUpstreamRejected,     // a non-retryable answer
  kCancelled,
  kShuttingDown,
  kOverloaded,
  kDeadlineExceeded,
  kNoSnapshot,  // SNAPSHOT_ONLY asked of a server with no snapshot loaded
  kInvalidRequest,  // a request field over its limit (request_id > 128 bytes)
};
inline constexpr size_t kFailureReasons = 9;

struct FailureTraits {
  // The status of a unary call that fails so (absl's codes are gRPC's).
  absl::StatusCode code;
  // Whether trying the same request later may help.
  bool retryable;
  // The reason's name, lower case, without prefix: the metric label.
  const char* label;
};
const FailureTraits& TraitsOf(FailureReason reason);

struct Failure {
  FailureReason reason = FailureReason::kUpstreamUnavailable;
  std::string message;
  bool retryable = false;  // may trying later help?
  int attempts = 0;
  absl::optional<UpstreamError> last_error;
  // When retryable: the suggested wait before trying again (zero if none).
  absl::Duration retry_delay = absl::ZeroDuration();
};

// A failure of `reason`, retryable as its table row says.
Failure FailureOf(FailureReason reason, std::string message);

// How a decode says that the circuit breaker found vPIC unreachable (rule
// 13): its failure message, or the note of an answer that stood in for the
// live decode, holds this phrase followed by the UTC time since when
// ("2026-12-03T14:02:11Z"). vinctl reads it back for its progress line.
inline constexpr char kUnreachableSince[] = "vPIC is unreachable since ";
// The time text after kUnreachableSince in `text`, or "" when absent.
std::string UnreachableSince(const std::string& text);

}  // namespace domain

#endif  // VIN_DOMAIN_FAILURE_H_
