#include "server/status_mapping.h"

#include <string>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "server/proto_mapping.h"

namespace server {
namespace {

grpc::StatusCode CodeOf(engine::FailureReason reason) {
  return static_cast<grpc::StatusCode>(domain::TraitsOf(reason).code);
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
