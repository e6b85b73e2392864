#include "server/jobs/job_mapping.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/proto_mapping.h"

namespace server {
namespace {

constexpr char kReasonPayload[] = "type.vin.v1/ErrorReason";

absl::Status Invalid(std::string message) {
  return JobError(domain::ErrorReason::kInvalidJobSpec, std::move(message));
}

absl::Status TooLong(const char* field, size_t limit) {
  return Invalid(
      absl::StrCat("JobSpec.", field, " is longer than ", limit, " bytes"));
}

}  // namespace

std::string UrlAuthority(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return "";
  absl::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  const size_t at = rest.rfind('@');
  if (at != absl::string_view::npos) rest = rest.substr(at + 1);
  return absl::AsciiStrToLower(rest);
}

absl::Status CheckSpec(const vin::v1::JobSpec& spec,
                       const std::vector<std::string>& hosts) {
  if (spec.display_name().size() > kMaxDisplayNameBytes) {
    return TooLong("display_name", kMaxDisplayNameBytes);
  }
  if (spec.idempotency_key().size() > kMaxIdempotencyKeyBytes) {
    return TooLong("idempotency_key", kMaxIdempotencyKeyBytes);
  }
  const std::string& url = spec.notify_url();
  if (url.empty()) return absl::OkStatus();
  if (url.size() > kMaxNotifyUrlBytes) {
    return TooLong("notify_url", kMaxNotifyUrlBytes);
  }
  const std::string lower = absl::AsciiStrToLower(url);
  if (!absl::StartsWith(lower, "http://") &&
      !absl::StartsWith(lower, "https://")) {
    return Invalid("JobSpec.notify_url must be an http:// or https:// URL");
  }
  const std::string authority = UrlAuthority(url);
  if (authority.empty()) {
    return Invalid("JobSpec.notify_url names no host");
  }
  if (hosts.empty()) {
    return Invalid(
        "JobSpec.notify_url is refused: this server allows no notification "
        "host (--job_notify_hosts is empty)");
  }
  std::string host = authority;  // without its port
  const size_t colon = authority.rfind(':');
  const size_t bracket = authority.rfind(']');
  if (colon != std::string::npos &&
      (bracket == std::string::npos || colon > bracket)) {
    host = authority.substr(0, colon);
  }
  for (const std::string& allowed : hosts) {
    const std::string a = absl::AsciiStrToLower(allowed);
    if (a == authority || a == host) return absl::OkStatus();
  }
  return Invalid(absl::StrCat("JobSpec.notify_url's host ", authority,
                              " is not one of --job_notify_hosts (",
                              absl::StrJoin(hosts, ", "), ")"));
}

engine::DecodeRequest RequestOfItem(const vin::v1::DecodeBatchRequest& item,
                                    const vin::v1::JobSpec& spec,
                                    const std::string& tenant) {
  vin::v1::DecodeBatchRequest effective = item;
  if (effective.source_preference() == vin::v1::SOURCE_PREFERENCE_UNSPECIFIED) {
    effective.set_source_preference(spec.source_preference());
  }
  if (effective.check_digit_policy() ==
      vin::v1::CHECK_DIGIT_POLICY_UNSPECIFIED) {
    effective.set_check_digit_policy(spec.check_digit_policy());
  }
  engine::DecodeRequest r = FromProto(effective);
  r.priority = domain::Priority::kBulk;
  r.tenant = tenant;
  r.stagger = true;
  return r;
}

absl::Time OffPeakStart(const upstream::PeakHours& peak, absl::Time wall) {
  if (!peak.Contains(wall)) return wall;
  // Ten-minute steps to the window's end (at most a week), then minutes.
  absl::Time t = absl::FromUnixSeconds(absl::ToUnixSeconds(wall) / 60 * 60);
  const absl::Time limit = wall + absl::Hours(24 * 8);
  while (t < limit && peak.Contains(t + absl::Minutes(10))) {
    t += absl::Minutes(10);
  }
  while (t < limit && peak.Contains(t)) t += absl::Minutes(1);
  return t;
}

vin::v1::JobResult ToJobResult(const jobs::StoredResult& stored) {
  vin::v1::JobResult out;
  vin::v1::DecodeBatchRequest request;
  request.ParseFromString(stored.request);
  out.set_index(stored.index);
  out.set_request_id(request.request_id().empty()
                         ? absl::StrCat("#", stored.index)
                         : request.request_id());
  out.set_vin(request.vin());
  if (stored.outcome == jobs::Outcome::kDone) {
    out.mutable_result()->ParseFromString(stored.bytes);
  } else {
    out.mutable_failure()->ParseFromString(stored.bytes);
  }
  return out;
}

std::string CancelledFailureBytes() {
  engine::Failure f = domain::FailureOf(domain::FailureReason::kCancelled,
                                        "the job was cancelled");
  vin::v1::FailedEvent event;
  ToProto(f, &event);
  return event.SerializeAsString();
}

void ToTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t ns = absl::ToUnixNanos(t);
  out->set_seconds(ns / 1000000000);
  out->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

absl::Status JobError(domain::ErrorReason reason, std::string message) {
  using domain::ErrorReason;
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (reason) {
    case ErrorReason::kJobsNotConfigured:
    case ErrorReason::kJobNotEnded:
      code = absl::StatusCode::kFailedPrecondition;
      break;
    case ErrorReason::kJobNotFound:
      code = absl::StatusCode::kNotFound;
      break;
    case ErrorReason::kJobTooManyItems:
    case ErrorReason::kInvalidJobSpec:
    case ErrorReason::kInvalidPageToken:
    case ErrorReason::kFieldTooLong:
    case ErrorReason::kMalformedRequest:
      code = absl::StatusCode::kInvalidArgument;
      break;
    case ErrorReason::kJobLimitReached:
      code = absl::StatusCode::kResourceExhausted;
      break;
    case ErrorReason::kJobStoreUnavailable:
      code = absl::StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  absl::Status s(code, message);
  s.SetPayload(kReasonPayload, absl::Cord(domain::ErrorReasonName(reason)));
  return s;
}

domain::ErrorReason JobReasonOf(const absl::Status& status) {
  absl::optional<absl::Cord> named = status.GetPayload(kReasonPayload);
  if (named.has_value()) {
    absl::optional<domain::ErrorReason> r =
        domain::ErrorReasonNamed(std::string(*named));
    if (r.has_value()) return *r;
  }
  if (absl::IsUnavailable(status) || absl::IsResourceExhausted(status) ||
      absl::IsFailedPrecondition(status) || absl::IsDataLoss(status)) {
    return domain::ErrorReason::kJobStoreUnavailable;
  }
  return domain::ErrorReason::kInternal;
}

absl::Status JobsNotConfigured() {
  return JobError(domain::ErrorReason::kJobsNotConfigured,
                  "bulk jobs are off on this server: start vin-server with "
                  "--job_path=FILE (scripts/serve.sh passes .data/jobs.db), "
                  "or in a fleet with --redis_url");
}

ErrorDetails JobErrorDetails(const absl::Status& status) {
  return DetailsOf(static_cast<grpc::StatusCode>(status.code()),
                   JobReasonOf(status), std::string(status.message()));
}

}  // namespace server
