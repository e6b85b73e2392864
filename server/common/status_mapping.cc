#include "server/common/status_mapping.h"

#include <google/protobuf/util/time_util.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "server/common/proto_mapping.h"
#include "util/utf8.h"

namespace server {
namespace {

// A caller's VIN in metadata: valid UTF-8, at most 64 bytes.
constexpr size_t kMaxVinBytes = 64;

// A delay as google.protobuf.Duration's JSON form writes it ("2.500s"),
// the form RetryInfo's delay has in the JSON API.
std::string DurationText(absl::Duration d) {
  google::protobuf::Duration proto;
  ToProto(d, &proto);
  return google::protobuf::util::TimeUtil::ToString(proto);
}

}  // namespace

const char* FieldOf(domain::ErrorReason reason) {
  using R = domain::ErrorReason;
  switch (reason) {
    case R::kInvalidVin:
    case R::kInvalidVinLength:
    case R::kInvalidVinCharacter:
    case R::kInvalidVinModelYearCode:
    case R::kInvalidVinCheckDigit:
      return "vin";
    case R::kInvalidModelYear:
      return "model_year";
    case R::kFieldTooLong:
      return "request_id";
    default:
      return "";
  }
}

ErrorDetails DetailsOf(const engine::Failure& failure, absl::string_view vin) {
  ErrorDetails d;
  d.code = static_cast<grpc::StatusCode>(domain::TraitsOf(failure.reason).code);
  d.reason = domain::ReasonOf(failure);
  d.message = failure.message;
  d.field = FieldOf(d.reason);
  if (!vin.empty()) {
    d.metadata.emplace_back("vin", util::SafeText(vin, kMaxVinBytes));
  }
  if (failure.attempts > 0) {
    d.metadata.emplace_back("attempts", absl::StrCat(failure.attempts));
  }
  if (failure.retryable && failure.retry_delay > absl::ZeroDuration()) {
    d.retry_delay = failure.retry_delay;
    d.metadata.emplace_back("retryDelay", DurationText(failure.retry_delay));
  }
  if (failure.unreachable_since != absl::InfinitePast()) {
    d.metadata.emplace_back("unreachableSince",
                            domain::UtcSeconds(failure.unreachable_since));
  }
  d.suggested_vins = failure.suggested_vins;
  return d;
}

ErrorDetails DetailsOf(grpc::StatusCode code, domain::ErrorReason reason,
                       std::string message) {
  ErrorDetails d;
  d.code = code;
  d.reason = reason;
  d.message = std::move(message);
  d.field = FieldOf(reason);
  return d;
}

google::rpc::Status ToRpcStatus(const ErrorDetails& d) {
  google::rpc::Status status;
  status.set_code(static_cast<int>(d.code));
  status.set_message(d.message);
  google::rpc::ErrorInfo info;
  info.set_reason(std::string(domain::ErrorReasonName(d.reason)));
  info.set_domain(domain::kErrorDomain);
  for (const auto& [key, value] : d.metadata)
    (*info.mutable_metadata())[key] = value;
  status.add_details()->PackFrom(info);
  if (d.code == grpc::StatusCode::INVALID_ARGUMENT && !d.field.empty()) {
    google::rpc::BadRequest bad;
    auto* v = bad.add_field_violations();
    v->set_field(d.field);
    v->set_description(d.message);
    for (size_t i = 0; i < d.suggested_vins.size(); ++i) {
      auto* s = bad.add_field_violations();
      s->set_field("vin");
      s->set_description(absl::StrCat(
          d.suggested_vins[i], ": did you mean this VIN? (suggestion ", i + 1,
          " of ", d.suggested_vins.size(),
          ": one character from the VIN sent, its check digit right, and "
          "decoded by the offline snapshot; not decoded for this request)"));
    }
    status.add_details()->PackFrom(bad);
  }
  if (d.retry_delay > absl::ZeroDuration()) {
    google::rpc::RetryInfo retry;
    ToProto(d.retry_delay, retry.mutable_retry_delay());
    status.add_details()->PackFrom(retry);
  }
  return status;
}

grpc::Status ToGrpcStatus(const ErrorDetails& details) {
  return grpc::Status(details.code, details.message,
                      ToRpcStatus(details).SerializeAsString());
}

grpc::Status ToGrpcStatus(const engine::Failure& failure,
                          absl::string_view vin) {
  return ToGrpcStatus(DetailsOf(failure, vin));
}

}  // namespace server
