// Page tokens and job ids (DESIGN rule 20). A token carries a position and
// is signed (HMAC-SHA-256, cut to 128 bits) over the position and what it
// pages (a job's results, a tenant's jobs) with the job store's secret, so
// it survives a restart and cannot be forged, guessed or moved to another
// job: any string the server did not issue is refused.
#ifndef VIN_JOBS_PAGE_TOKEN_H_
#define VIN_JOBS_PAGE_TOKEN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobs {

// 128 random bits from OpenSSL's generator, as 32 lower-case hex digits.
std::string NewJobId();

// Whether `id` has the shape of a job id (32 lower-case hex digits).
bool IsJobIdShaped(absl::string_view id);

class PageTokens {
 public:
  explicit PageTokens(std::string secret) : secret_(std::move(secret)) {}

  // A token for `position` within `scope` ("results/<job id>",
  // "jobs/<tenant>"): unpadded URL-safe base64 of 8 bytes of position and
  // 16 of signature.
  std::string Issue(absl::string_view scope, int64_t position) const;
  // The position of a token Issue made for `scope`; INVALID_ARGUMENT
  // ("page_token was not issued for this list") for anything else.
  absl::StatusOr<int64_t> Check(absl::string_view scope,
                                absl::string_view token) const;

 private:
  std::string Mac(absl::string_view scope, absl::string_view position) const;

  std::string secret_;
};

}  // namespace jobs

#endif  // VIN_JOBS_PAGE_TOKEN_H_
