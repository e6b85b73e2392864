// The one place where failures become gRPC statuses with the details
// callers read (DESIGN "Errors callers can read"): every error carries
// google.rpc.ErrorInfo (a stable reason, domain "vin.v1", metadata),
// INVALID_ARGUMENT also google.rpc.BadRequest naming the field, and a
// retryable failure google.rpc.RetryInfo with the suggested delay.
#ifndef VIN_SERVER_COMMON_STATUS_MAPPING_H_
#define VIN_SERVER_COMMON_STATUS_MAPPING_H_

#include <grpcpp/support/status.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "domain/error_reason.h"
#include "engine_api/types.h"
#include "google/rpc/status.pb.h"

namespace server {

// An error as callers read it, before it is a gRPC status or JSON.
struct ErrorDetails {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  domain::ErrorReason reason = domain::ErrorReason::kInternal;
  std::string message;
  // ErrorInfo.metadata, in this order (keys lowerCamelCase).
  std::vector<std::pair<std::string, std::string>> metadata;
  // The request field at fault (BadRequest), "" for none.
  std::string field;
  // RetryInfo's delay when above zero.
  absl::Duration retry_delay = absl::ZeroDuration();
  // Rule 21: an invalid VIN's suggested corrections, best first: one
  // BadRequest field violation each (field "vin").
  std::vector<std::string> suggested_vins;
};

// The details of an engine failure for the request of `vin` (as sent; made
// safe and bounded for the metadata).
ErrorDetails DetailsOf(const engine::Failure& failure, absl::string_view vin);

// An error that is no engine failure (a malformed stream, a refusal).
ErrorDetails DetailsOf(grpc::StatusCode code, domain::ErrorReason reason,
                       std::string message);

// The request field a reason blames ("vin", "model_year", "request_id"),
// or "" when it blames none.
const char* FieldOf(domain::ErrorReason reason);

// google.rpc.Status with ErrorInfo, then BadRequest and RetryInfo when due.
google::rpc::Status ToRpcStatus(const ErrorDetails& details);

// The gRPC status carrying ToRpcStatus in its details.
grpc::Status ToGrpcStatus(const ErrorDetails& details);
grpc::Status ToGrpcStatus(const engine::Failure& failure,
                          absl::string_view vin);

}  // namespace server

#endif  // VIN_SERVER_COMMON_STATUS_MAPPING_H_
