#include "server/status_mapping.h"

#include <string>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "server/proto_mapping.h"

namespace server {
namespace {

grpc::StatusCode CodeOf(engine::FailureReason reason) {
  using R = engine::FailureReason;
  switch (reason) {
    case R::kInvalidVin:
    case R::kInvalidRequest:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case R::kUpstreamUnavailable:
    case R::kShuttingDown:
      return grpc::StatusCode::UNAVAILABLE;
    case R::kUpstreamRejected:
    case R::kNoSnapshot:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case R::kCancelled:
      return grpc::StatusCode::CANCELLED;
    case R::kOverloaded:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case R::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
  }
  return grpc::StatusCode::UNKNOWN;
}

}  // namespace

grpc::Status ToGrpcStatus(const engine::Failure& failure) {
  const grpc::StatusCode code = CodeOf(failure.reason);
  if (code != grpc::StatusCode::UNAVAILABLE ||
      failure.retry_delay <= absl::ZeroDuration()) {
    return grpc::Status(code, failure.message);
  }
  google::rpc::RetryInfo retry_info;
  ToProto(failure.retry_delay, retry_info.mutable_retry_delay());
  google::rpc::Status details;
  details.set_code(static_cast<int>(code));
  details.set_message(failure.message);
  details.add_details()->PackFrom(retry_info);
  return grpc::Status(code, failure.message, details.SerializeAsString());
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

engine::FailureReason FailureReasonOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return engine::FailureReason::kInvalidVin;
    case absl::StatusCode::kResourceExhausted:
      return engine::FailureReason::kOverloaded;
    case absl::StatusCode::kFailedPrecondition:
      return engine::FailureReason::kNoSnapshot;
    default:
      return engine::FailureReason::kShuttingDown;
  }
}

vin::v1::FailureReason ToProto(engine::FailureReason reason) {
  using R = engine::FailureReason;
  switch (reason) {
    case R::kInvalidVin:
      return vin::v1::FAILURE_REASON_INVALID_VIN;
    case R::kUpstreamUnavailable:
      return vin::v1::FAILURE_REASON_UPSTREAM_UNAVAILABLE;
    case R::kUpstreamRejected:
      return vin::v1::FAILURE_REASON_UPSTREAM_REJECTED;
    case R::kCancelled:
      return vin::v1::FAILURE_REASON_CANCELLED;
    case R::kShuttingDown:
      return vin::v1::FAILURE_REASON_SHUTTING_DOWN;
    case R::kOverloaded:
      return vin::v1::FAILURE_REASON_OVERLOADED;
    case R::kDeadlineExceeded:
      return vin::v1::FAILURE_REASON_DEADLINE_EXCEEDED;
    case R::kNoSnapshot:
      return vin::v1::FAILURE_REASON_NO_SNAPSHOT;
    case R::kInvalidRequest:
      return vin::v1::FAILURE_REASON_INVALID_REQUEST;
  }
  return vin::v1::FAILURE_REASON_UNSPECIFIED;
}

}  // namespace server
