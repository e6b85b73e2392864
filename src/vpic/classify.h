// Classification of one upstream attempt (DESIGN rule 2). Pure functions.
#ifndef VIN_VPIC_CLASSIFY_H_
#define VIN_VPIC_CLASSIFY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "domain/failure.h"
#include "vpic/vehicle.h"

namespace vpic {

// How the transfer ended below HTTP.
enum class Transport {
  kOk,        // an HTTP answer was read in full
  kConnect,   // could not connect (refused, unreachable, DNS, proxy)
  kTimeout,   // the per-attempt timeout passed
  kReset,     // the connection broke: reset, closed early, partial or
              // garbled answer
  kTooLarge,  // the body passed the size limit and was abandoned
  kBadEncoding,  // an answer came whose body could not be decoded (labelled
                 // gzip but not gzip): a bad answer, not a broken connection
  kOther,     // another failure of the transfer that may pass (retryable)
  kFatal,     // a local or configuration error that retrying cannot fix
              // (bad URL, redirect to another scheme or in a loop, TLS
              // verification or set-up)
};

// What the HTTP client saw of one attempt.
struct HttpResult {
  Transport transport = Transport::kOk;
  std::string transport_message;  // libcurl's text when transport != kOk
  int http_status = 0;            // 0 when there was no HTTP answer
  std::string body;
  std::string retry_after;  // the Retry-After header's value, "" if none
  // Requests libcurl sent for this transfer (CURLOPT_PREREQFUNCTION): 1,
  // or more when it re-sent the request by itself (a reused connection
  // reset before any answer byte) or followed a redirect; 0 when none left.
  int requests_sent = 0;
};

// A failed attempt as callers see it (UpstreamError in the API).
using UpstreamError = domain::UpstreamError;

struct Outcome {
  enum class Verdict { kDecoded, kRetry, kReject };
  Verdict verdict = Verdict::kReject;
  Decoded decoded;      // kDecoded only
  UpstreamError error;  // kRetry / kReject
  // Retry-After as a floor on the next delay, when upstream sent one.
  absl::optional<absl::Duration> retry_after;
};

// Retryable: connect failures, resets, timeouts, other transfer failures,
// HTTP 429/502/503/504, and a 200 whose body is not vPIC JSON, has an empty
// Results or was too large. Not retryable: other statuses and fatal
// transport errors. A 200 with vPIC JSON is a
// finished decode however empty. A retryable answer's Retry-After (a 429 or
// 5xx, or a 200 maintenance page) is carried as the outcome's retry_after.
Outcome Classify(const HttpResult& result, absl::Time now);

// Classifies one DecodeVINValuesBatch attempt for each of `vins` (the
// normalised VINs sent, in order; the outcomes come back in that order). A
// failure of the request as a whole (transport, HTTP status, a body that is
// not vPIC JSON) is that outcome for every VIN. Otherwise each VIN gets the
// result whose `VIN` field matches it, classified as Classify() would a
// single answer, or a retryable bad_response when the answer holds no
// (well-formed) result for it. `now` is wall time, for Retry-After dates.
std::vector<Outcome> ClassifyBatch(const HttpResult& result, absl::Time now,
                                   const std::vector<std::string>& vins);

// What one request's answer says of vPIC as a whole, beside each VIN's
// outcome: the engine acts on it once per request (rule 10), never again
// from the raw HTTP result.
enum class Signal {
  kNone,      // nothing for the shared rate: a failure or a rejection
  kPushback,  // a 429, or a 503 with Retry-After: every flight pauses and
              // the rate is cut
  kAnswered,  // a 200 whose (first) result decoded: the rate may climb back
};

using UpstreamHealth = domain::UpstreamHealth;

struct RequestOutcome {
  std::vector<Outcome> outcomes;  // one per VIN sent, in the order sent
  Signal signal = Signal::kNone;
  // For the circuit breaker (rule 13): broken for a transport failure
  // (but a fatal one: neutral), a 500/502/503/504, or a 200 whose body is
  // not vPIC JSON (a batch answer missing some VINs is still an answer);
  // answered otherwise (a 429 too: that is rule 10's pushback).
  UpstreamHealth health = UpstreamHealth::kAnswered;
};

// Classifies one request: a single DecodeVinValues when `batch_vins` is
// null (one outcome, as Classify()), else a DecodeVINValuesBatch of those
// VINs (as ClassifyBatch()), and the request's signal.
RequestOutcome ClassifyRequest(const HttpResult& result, absl::Time now,
                               const std::vector<std::string>* batch_vins);

// Classifies one reference request (reference.h): its transport and status
// as Classify() does; a 200 is an answer when its body is a vPIC JSON
// document (however few its Results), else a retryable bad_response.
RequestOutcome ClassifyReferenceRequest(const HttpResult& result,
                                        absl::Time now);

// Parses a Retry-After value: delta-seconds ("120") or an HTTP date
// ("Wed, 21 Oct 2015 07:28:00 GMT"); a date in the past gives zero.
absl::optional<absl::Duration> ParseRetryAfter(absl::string_view value,
                                               absl::Time now);

}  // namespace vpic

#endif  // VIN_VPIC_CLASSIFY_H_
