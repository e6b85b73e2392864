#include "vpic/classify.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vpic/parse.h"

namespace vpic {
namespace {

bool IsRetryableStatus(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

UpstreamError TransportError(const HttpResult& r) {
  switch (r.transport) {
    case Transport::kConnect:
      return {0, "connect", r.transport_message};
    case Transport::kTimeout:
      return {0, "timeout", r.transport_message};
    case Transport::kReset:
      return {0, "reset", r.transport_message};
    default:
      return {0, "transport", r.transport_message};
  }
}

// The start of a body, printable, for error messages.
std::string Snippet(absl::string_view body) {
  std::string out(body.substr(0, 80));
  for (char& c : out) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) c = ' ';
  }
  return out;
}

}  // namespace

absl::optional<absl::Duration> ParseRetryAfter(absl::string_view value,
                                               absl::Time now) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty()) return absl::nullopt;
  int64_t seconds;
  if (absl::SimpleAtoi(value, &seconds)) {
    if (seconds < 0) return absl::nullopt;
    return absl::Seconds(seconds);
  }
  absl::Time when;
  std::string err;
  // IMF-fixdate, the form HTTP/1.1 senders must use.
  if (absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(value),
                      absl::UTCTimeZone(), &when, &err)) {
    return std::max(absl::ZeroDuration(), when - now);
  }
  return absl::nullopt;
}

Outcome Classify(const HttpResult& r, absl::Time now) {
  Outcome out;
  if (r.transport != Transport::kOk) {
    out.verdict = r.transport == Transport::kFatal ? Outcome::Verdict::kReject
                                                   : Outcome::Verdict::kRetry;
    out.error = TransportError(r);
    return out;
  }
  if (r.http_status != 200) {
    out.verdict = IsRetryableStatus(r.http_status) ? Outcome::Verdict::kRetry
                                                   : Outcome::Verdict::kReject;
    out.error = {r.http_status, "http",
                 absl::StrCat("vPIC answered HTTP ", r.http_status)};
    if (out.verdict == Outcome::Verdict::kRetry) {
      out.retry_after = ParseRetryAfter(r.retry_after, now);
    }
    return out;
  }
  auto decoded = ParseDecodeVinValues(r.body);
  if (!decoded.ok()) {
    out.verdict = Outcome::Verdict::kRetry;
    out.error = {200, "bad_response",
                 absl::StrCat(decoded.status().message(), " (body starts \"",
                              Snippet(r.body), "\")")};
    return out;
  }
  out.verdict = Outcome::Verdict::kDecoded;
  out.decoded = *std::move(decoded);
  return out;
}

}  // namespace vpic
