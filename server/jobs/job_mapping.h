// Rule 20's mappings between the job store's records and the API's
// messages, and the checks of a JobSpec. Pure functions.
#ifndef VIN_SERVER_JOBS_JOB_MAPPING_H_
#define VIN_SERVER_JOBS_JOB_MAPPING_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "domain/error_reason.h"
#include "engine/engine.h"
#include "jobs/job_record.h"
#include "jobs/job_store.h"
#include "server/common/status_mapping.h"
#include "upstream/peak_hours.h"
#include "vin/v1/jobs.pb.h"

namespace server {

inline constexpr size_t kMaxDisplayNameBytes = 256;
inline constexpr size_t kMaxIdempotencyKeyBytes = 128;
inline constexpr size_t kMaxNotifyUrlBytes = 2048;
// A job item's VIN as sent, in bytes (a longer one is refused at creation).
inline constexpr size_t kMaxJobVinBytes = 64;

// INVALID_ARGUMENT naming the field at fault, or OK: the display name's,
// the idempotency key's and the notify URL's length, and the URL's scheme
// (http or https) and host (as written, `hosts` listing it; none listed:
// no URL may be given).
absl::Status CheckSpec(const vin::v1::JobSpec& spec,
                       const std::vector<std::string>& hosts);

// The host (and port) of an http(s) URL as written ("" when it has none).
std::string UrlAuthority(absl::string_view url);

// The engine request of a job item: the item's own source preference and
// check-digit policy when set, else the spec's; always bulk, of `tenant`.
engine::DecodeRequest RequestOfItem(const vin::v1::DecodeBatchRequest& item,
                                    const vin::v1::JobSpec& spec,
                                    const std::string& tenant);

// When an OFF_PEAK job held at `wall` may start: the end of the peak
// window (to the minute), or `wall` when it is not in one.
absl::Time OffPeakStart(const upstream::PeakHours& peak, absl::Time wall);

// The listed item: index, request id ("#<index>" when none was sent), VIN,
// and its outcome.
vin::v1::JobResult ToJobResult(const jobs::StoredResult& stored);

// The failure every item left gets when its job is cancelled.
std::string CancelledFailureBytes();

void ToTimestamp(absl::Time t, google::protobuf::Timestamp* out);

// A job method's refusal: the status code of `reason` (README's table),
// `message`, and the reason as a payload that JobReasonOf reads back.
absl::Status JobError(domain::ErrorReason reason, std::string message);
// The reason JobError gave `status`; for any other status, by its code
// (JOB_STORE_UNAVAILABLE for a store's UNAVAILABLE, INTERNAL otherwise).
domain::ErrorReason JobReasonOf(const absl::Status& status);
// What every job method answers without --job_path.
absl::Status JobsNotConfigured();
// A job method's refusal as the API's error (gRPC's status and ErrorInfo;
// the gateway's google.rpc.Status).
ErrorDetails JobErrorDetails(const absl::Status& status);

}  // namespace server

#endif  // VIN_SERVER_JOBS_JOB_MAPPING_H_
