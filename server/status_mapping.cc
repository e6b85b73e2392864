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

}  // namespace server
