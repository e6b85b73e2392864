// `vinctl decode`: one unary Decode, printed for a person or as JSON.
#ifndef VIN_CLIENT_DECODE_COMMAND_H_
#define VIN_CLIENT_DECODE_COMMAND_H_

#include <grpcpp/support/status.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "vin/v1/vin.grpc.pb.h"

namespace vinctl {

struct DecodeOptions {
  std::string vin;
  int32_t model_year = 0;                       // 0 = no hint
  bool warn_check_digit = false;                // CHECK_DIGIT_POLICY_WARN
  // Rule 17: the priority (unspecified: the server's, interactive), and the
  // tenant sent as the x-vin-tenant header ("" none).
  vin::v1::Priority priority = vin::v1::PRIORITY_UNSPECIFIED;
  std::string tenant;
  absl::Duration deadline = absl::Seconds(30);  // per call; 0 = none
  bool json = false;  // the DecodeResult in protobuf's JSON mapping
  // Upper bound of a uniformly random delay before the call.
  absl::Duration stagger = absl::ZeroDuration();
};

// Calls Decode; writes the result to `out`, or an error line to `err`.
// Returns kExitOk, or kExitItemsFailed for any error status (see batch.h).
int RunDecode(const DecodeOptions& options,
              vin::v1::VinDecoderService::StubInterface* stub,
              std::ostream& out, std::ostream& err);

// The human-readable form: a headline
//   "1FTMW1T88MFA00001  FORD F-150 2021 (source VPIC, 1 attempt)"
// then one indented line per field that was provided, and one per note.
std::string FormatDecodeResult(const vin::v1::DecodeResult& result);

// The pretty-printed JSON form (proto field names), ending in a newline.
std::string DecodeResultJson(const vin::v1::DecodeResult& result);

// "vinctl: UNAVAILABLE: <message>; retry after 2.5s" (the last part only
// when a google.rpc.RetryInfo is attached).
std::string FormatRpcError(const grpc::Status& status);

}  // namespace vinctl

#endif  // VIN_CLIENT_DECODE_COMMAND_H_
