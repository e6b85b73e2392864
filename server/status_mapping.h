// The one place where engine outcomes become gRPC statuses.
#ifndef VIN_SERVER_STATUS_MAPPING_H_
#define VIN_SERVER_STATUS_MAPPING_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "engine/types.h"
#include "vin/v1/vin.pb.h"

namespace server {

// A failed unary decode: INVALID_ARGUMENT, UNAVAILABLE (with
// google.rpc.RetryInfo when a delay is suggested), FAILED_PRECONDITION,
// CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED.
grpc::Status ToGrpcStatus(const engine::Failure& failure);


}  // namespace server

#endif  // VIN_SERVER_STATUS_MAPPING_H_
