// Reads google.rpc.RetryInfo off a gRPC status, for tests.
#ifndef VIN_TESTS_TESTING_RETRY_INFO_H_
#define VIN_TESTS_TESTING_RETRY_INFO_H_

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace testing_util {

// The RetryInfo delay attached to an UNAVAILABLE status, if any.
inline absl::optional<absl::Duration> RetryDelayOf(const grpc::Status& status) {
  google::rpc::Status details;
  if (!details.ParseFromString(status.error_details())) return absl::nullopt;
  for (const auto& any : details.details()) {
    google::rpc::RetryInfo info;
    if (any.UnpackTo(&info)) {
      return absl::Seconds(info.retry_delay().seconds()) +
             absl::Nanoseconds(info.retry_delay().nanos());
    }
  }
  return absl::nullopt;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_RETRY_INFO_H_
