#include "vpic/classify.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "vpic/parse.h"
#include "vpic/reference.h"

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
    case Transport::kTooLarge:
    case Transport::kBadEncoding:
      return {r.http_status, "bad_response", r.transport_message};
    case Transport::kFatal:
      return {0, "fatal", r.transport_message};
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

namespace {

// The verdict of an attempt that did not bring a 200: transport failures and
// HTTP statuses. Returns nullopt for a 200, whose body decides.
absl::optional<Outcome> ClassifyFailure(const HttpResult& r, absl::Time now) {
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
  return absl::nullopt;
}

// A 200 whose body is no vPIC answer. A maintenance page may say when to
// come back (Retry-After): that is a floor on the next delay, as on a 503.
Outcome BadResponse(const absl::Status& why, const HttpResult& r,
                    absl::Time now) {
  Outcome out;
  out.verdict = Outcome::Verdict::kRetry;
  out.error = {200, "bad_response",
               absl::StrCat(why.message(), " (body starts \"", Snippet(r.body),
                            "\")")};
  out.retry_after = ParseRetryAfter(r.retry_after, now);
  return out;
}

}  // namespace

Outcome Classify(const HttpResult& r, absl::Time now) {
  if (absl::optional<Outcome> failed = ClassifyFailure(r, now)) {
    return *std::move(failed);
  }
  auto decoded = ParseDecodeVinValues(r.body);
  if (!decoded.ok()) return BadResponse(decoded.status(), r, now);
  Outcome out;
  out.verdict = Outcome::Verdict::kDecoded;
  out.decoded = *std::move(decoded);
  return out;
}

namespace {

// ClassifyBatch; `answered` tells whether the body was a vPIC answer.
std::vector<Outcome> ClassifyBatchAnswer(const HttpResult& r, absl::Time now,
                                         const std::vector<std::string>& vins,
                                         bool* answered) {
  absl::optional<Outcome> whole = ClassifyFailure(r, now);
  absl::StatusOr<std::vector<BatchResult>> results;
  if (!whole) {
    results = ParseDecodeVinValuesBatch(r.body);
    if (!results.ok()) whole = BadResponse(results.status(), r, now);
  }
  *answered = !whole.has_value();
  if (whole) return std::vector<Outcome>(vins.size(), *whole);
  absl::flat_hash_map<std::string, BatchResult*> by_vin;
  for (BatchResult& result : *results) by_vin.try_emplace(result.vin, &result);
  std::vector<Outcome> out;
  out.reserve(vins.size());
  for (const std::string& vin : vins) {
    auto it = by_vin.find(vin);
    Outcome o;
    if (it == by_vin.end()) {
      o.verdict = Outcome::Verdict::kRetry;
      o.error = {200, "bad_response",
                 absl::StrCat("vPIC's batch answer holds no result for ", vin)};
    } else if (!it->second->decoded.ok()) {
      o.verdict = Outcome::Verdict::kRetry;
      o.error = {200, "bad_response",
                 std::string(it->second->decoded.status().message())};
    } else {
      o.verdict = Outcome::Verdict::kDecoded;
      o.decoded = *std::move(it->second->decoded);
      by_vin.erase(it);  // a VIN asked for twice gets its result once
    }
    out.push_back(std::move(o));
  }
  return out;
}

// What the answer says of vPIC's health (rule 13). `vpic_body`: a 200's
// body was vPIC JSON.
UpstreamHealth HealthOf(const HttpResult& r, bool vpic_body) {
  switch (r.transport) {
    case Transport::kOk:
      break;
    case Transport::kFatal:
      return UpstreamHealth::kNeutral;  // ours to fix, not vPIC's
    default:
      return UpstreamHealth::kBroken;  // unreachable, or not vPIC JSON
  }
  switch (r.http_status) {
    case 200:
      return vpic_body ? UpstreamHealth::kAnswered : UpstreamHealth::kBroken;
    case 500:
    case 502:
    case 503:
    case 504:
      return UpstreamHealth::kBroken;
    default:
      return UpstreamHealth::kAnswered;  // a 429, or a rejection
  }
}

}  // namespace

std::vector<Outcome> ClassifyBatch(const HttpResult& r, absl::Time now,
                                   const std::vector<std::string>& vins) {
  bool answered = false;
  return ClassifyBatchAnswer(r, now, vins, &answered);
}

namespace {

// The health and signal of a request whose outcomes are classified.
RequestOutcome Summarised(const HttpResult& r, std::vector<Outcome> outcomes,
                          bool vpic_body) {
  RequestOutcome out;
  out.outcomes = std::move(outcomes);
  out.health = HealthOf(r, vpic_body);
  if (out.outcomes.empty() || r.transport != Transport::kOk) return out;
  const Outcome& first = out.outcomes.front();
  if (r.http_status == 429 || (r.http_status == 503 && first.retry_after)) {
    out.signal = Signal::kPushback;
  } else if (r.http_status == 200 &&
             first.verdict == Outcome::Verdict::kDecoded) {
    out.signal = Signal::kAnswered;
  }
  return out;
}

}  // namespace

RequestOutcome ClassifyRequest(const HttpResult& r, absl::Time now,
                               const std::vector<std::string>* batch_vins) {
  bool vpic_body = false;
  std::vector<Outcome> outcomes;
  if (batch_vins != nullptr) {
    outcomes = ClassifyBatchAnswer(r, now, *batch_vins, &vpic_body);
  } else {
    outcomes.push_back(Classify(r, now));
    vpic_body = outcomes.front().verdict == Outcome::Verdict::kDecoded;
  }
  return Summarised(r, std::move(outcomes), vpic_body);
}

RequestOutcome ClassifyReferenceRequest(const HttpResult& r, absl::Time now) {
  std::vector<Outcome> outcomes(1);
  if (absl::optional<Outcome> failed = ClassifyFailure(r, now)) {
    outcomes[0] = *std::move(failed);
  } else if (absl::Status ok = CheckReferenceDocument(r.body); !ok.ok()) {
    outcomes[0] = BadResponse(ok, r, now);
  } else {
    outcomes[0].verdict = Outcome::Verdict::kDecoded;
    outcomes[0].decoded.document = std::make_shared<const std::string>(r.body);
  }
  const bool vpic_body = outcomes[0].verdict == Outcome::Verdict::kDecoded;
  return Summarised(r, std::move(outcomes), vpic_body);
}

}  // namespace vpic
