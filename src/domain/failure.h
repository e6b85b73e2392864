// Why a decode failed, and the one table of what each reason means to
// callers: the gRPC status of a unary call, whether trying later may help,
// and the metric label (vin_decode_failures_total{reason}).
#ifndef VIN_DOMAIN_FAILURE_H_
#define VIN_DOMAIN_FAILURE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "domain/error_reason.h"

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
  // The ErrorInfo reason of a failure that names none more precise.
  ErrorReason detail;
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
  // What callers branch on (ErrorInfo's reason); kUnspecified: the
  // reason's own (TraitsOf(reason).detail). Read it with ReasonOf.
  ErrorReason detail = ErrorReason::kUnspecified;
  // BREAKER_OPEN: the wall time since when vPIC is unreachable (rule 13).
  absl::Time unreachable_since = absl::InfinitePast();
  // INVALID_VIN (rule 21): VINs one character away that the snapshot
  // decodes, best first; never decoded for the caller.
  std::vector<std::string> suggested_vins;
};

// A failure of `reason`, retryable as its table row says.
Failure FailureOf(FailureReason reason, std::string message,
                  ErrorReason detail = ErrorReason::kUnspecified);

// The failure's ErrorInfo reason: its detail, or its reason's default.
ErrorReason ReasonOf(const Failure& failure);

// How the circuit breaker's failure message (rule 13) begins its sentence
// on vPIC, for people; programs read Failure::unreachable_since (and
// FailedEvent.upstream_unreachable_since, the note kUnreachableNote).
inline constexpr char kUnreachableSince[] = "vPIC is unreachable since ";

// The code of the note an answer that stood in for a live decode carries
// when the breaker found vPIC unreachable: its message is the RFC 3339 UTC
// time since when ("2026-12-03T14:02:11Z").
inline constexpr char kUnreachableNote[] = "vpic_unreachable_since";

// RFC 3339 UTC to the second, as kUnreachableNote carries it.
std::string UtcSeconds(absl::Time t);

}  // namespace domain

#endif  // VIN_DOMAIN_FAILURE_H_
