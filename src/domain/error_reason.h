// The stable, machine-readable reason of every error the service answers
// (DESIGN "Errors callers can read"): the `reason` of google.rpc.ErrorInfo
// on gRPC and on the JSON API, FailedEvent.reason_detail in a stream, and
// "reason" in the error body of vPIC's paths. Callers branch on these names,
// never on message text; a name, once published, never changes meaning.
#ifndef VIN_DOMAIN_ERROR_REASON_H_
#define VIN_DOMAIN_ERROR_REASON_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace domain {

// google.rpc.ErrorInfo.domain of every reason below.
inline constexpr char kErrorDomain[] = "vin.v1";

enum class ErrorReason {
  kUnspecified,  // none chosen: the failure's FailureReason decides
  // Local validation (INVALID_ARGUMENT; never sent to vPIC).
  kInvalidVin,               // fails validation (the reasons below say how)
  kInvalidVinLength,         // empty, or not 17 characters
  kInvalidVinCharacter,      // I, O, Q, or not a digit or letter
  kInvalidVinModelYearCode,  // position 10 is no model-year code
  kInvalidVinCheckDigit,     // position 9 is not the computed check digit
  kInvalidModelYear,         // a model_year hint position 10 cannot mean
  kFieldTooLong,             // a request field over its limit (request_id)
  kMalformedRequest,         // a body or header that is not what it must be
  kLineTooLong,              // an NDJSON line over the gateway's line limit
  // vPIC's side.
  kUpstreamUnavailable,   // vPIC still failing when retries or time ran out
  kRetryBudgetExhausted,  // vPIC failing and the retry budget is spent
  kRateLimited,           // vPIC's pause (429) or the rate cap outlasts it
  kBreakerOpen,           // the circuit breaker finds vPIC unreachable
  kUpstreamRejected,      // vPIC refused the request for good
  // The server's side.
  kCancelled,
  kShuttingDown,
  kOverloaded,
  kDeadlineExceeded,
  kSnapshotNotLoaded,     // SNAPSHOT_ONLY without a snapshot
  kSnapshotCannotDecode,  // the snapshot has no answer for this VIN
  // The HTTP gateway's own refusals.
  kNotFound,
  kMethodNotAllowed,
  kBodyTooLarge,
  kHeadersTooLarge,
  kRequestTimeout,  // the request did not arrive in time
  kTooManyConnections,
  kForbiddenOrigin,     // a cross-site request the gateway refuses
  kMisdirectedRequest,  // a Host this server does not answer for
  kTlsRequired,
  // Bulk jobs (rule 20).
  kJobsNotConfigured,    // no --job_path (nor --redis_url)
  kJobNotFound,          // no such job of the caller's tenant
  kJobTooManyItems,      // over --job_max_items
  kJobLimitReached,      // --job_max_open jobs not ended, or --job_max_bytes
  kInvalidJobSpec,       // a spec not first, twice, or with a bad field
  kJobNotEnded,          // deleting a job that has not ended
  kInvalidPageToken,     // a page token the server did not issue
  kJobStoreUnavailable,  // the store cannot be written or read now
  kAdminOnly,  // an operator's method (rule 21) asked by another caller
  kInternal,
};
inline constexpr size_t kErrorReasons =
    static_cast<size_t>(ErrorReason::kInternal) + 1;

// The reason's published name ("INVALID_VIN_CHECK_DIGIT"); "" for
// kUnspecified.
absl::string_view ErrorReasonName(ErrorReason reason);

// The reason named `name`, or nullopt for a name this build does not know.
absl::optional<ErrorReason> ErrorReasonNamed(absl::string_view name);

}  // namespace domain

#endif  // VIN_DOMAIN_ERROR_REASON_H_
