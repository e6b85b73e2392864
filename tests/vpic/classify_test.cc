#include "vpic/classify.h"

#include <vector>

#include "gtest/gtest.h"

namespace vpic {
namespace {

using Verdict = Outcome::Verdict;
const absl::Time kNow = absl::FromUnixSeconds(1700000000);

constexpr char kVpicBody[] =
    R"({"Count":3,"Message":"ok","SearchCriteria":"VIN(s): X",)"
    R"("Results":[{"Make":"FORD","Model":"F-150","ErrorCode":"0",)"
    R"("ErrorText":"0 - VIN decoded clean"}]})";
constexpr char kSparseBody[] =
    R"({"Count":3,"Message":"ok","SearchCriteria":"VIN(s): X",)"
    R"("Results":[{"Make":"","Model":"","ErrorCode":"8",)"
    R"("ErrorText":"8 - No detailed data available currently"}]})";

HttpResult Http(int status, std::string body, std::string retry_after = "") {
  HttpResult r;
  r.http_status = status;
  r.body = std::move(body);
  r.retry_after = std::move(retry_after);
  return r;
}

HttpResult Broken(Transport t) {
  HttpResult r;
  r.transport = t;
  r.transport_message = "boom";
  return r;
}

TEST(Classify, HttpStatuses) {
  struct Case {
    int status;
    Verdict want;
  };
  const std::vector<Case> cases = {
      {429, Verdict::kRetry},  {502, Verdict::kRetry},
      {503, Verdict::kRetry},  {504, Verdict::kRetry},
      {400, Verdict::kReject}, {401, Verdict::kReject},
      {403, Verdict::kReject}, {404, Verdict::kReject},
      {408, Verdict::kReject}, {500, Verdict::kReject},
      {501, Verdict::kReject},
  };
  for (const Case& c : cases) {
    const Outcome o = Classify(Http(c.status, "error page"), kNow);
    EXPECT_EQ(o.verdict, c.want) << c.status;
    EXPECT_EQ(o.error.http_status, c.status);
    EXPECT_EQ(o.error.kind, "http");
  }
}

TEST(Classify, TransportFailures) {
  EXPECT_EQ(Classify(Broken(Transport::kConnect), kNow).verdict, Verdict::kRetry);
  EXPECT_EQ(Classify(Broken(Transport::kConnect), kNow).error.kind, "connect");
  EXPECT_EQ(Classify(Broken(Transport::kTimeout), kNow).verdict, Verdict::kRetry);
  EXPECT_EQ(Classify(Broken(Transport::kTimeout), kNow).error.kind, "timeout");
  EXPECT_EQ(Classify(Broken(Transport::kReset), kNow).verdict, Verdict::kRetry);
  EXPECT_EQ(Classify(Broken(Transport::kReset), kNow).error.kind, "reset");
  EXPECT_EQ(Classify(Broken(Transport::kFatal), kNow).verdict, Verdict::kReject);
  EXPECT_EQ(Classify(Broken(Transport::kTimeout), kNow).error.http_status, 0);
}

TEST(Classify, ValidVpicJsonIsAFinishedDecode) {
  const Outcome o = Classify(Http(200, kVpicBody), kNow);
  ASSERT_EQ(o.verdict, Verdict::kDecoded);
  EXPECT_EQ(o.decoded.vehicle.make, "FORD");
}

TEST(Classify, SparseAnswerIsAFinishedDecodeNotARetry) {
  const Outcome o = Classify(Http(200, kSparseBody), kNow);
  ASSERT_EQ(o.verdict, Verdict::kDecoded);
  EXPECT_EQ(o.decoded.vehicle.make, "");
  ASSERT_EQ(o.decoded.notes.size(), 1u);
  EXPECT_EQ(o.decoded.notes[0].code, "8");
}

TEST(Classify, NonVpicBodiesWith200AreRetryableBadResponses) {
  for (const char* body :
       {"<html><body>Down for maintenance</body></html>", "{\"Results\":[",
        "", R"({"Count":0,"Message":"x","Results":[]})"}) {
    const Outcome o = Classify(Http(200, body), kNow);
    EXPECT_EQ(o.verdict, Verdict::kRetry) << body;
    EXPECT_EQ(o.error.kind, "bad_response") << body;
    EXPECT_EQ(o.error.http_status, 200);
  }
}

TEST(Classify, RetryAfterOnRetryableStatusesOnly) {
  EXPECT_EQ(Classify(Http(429, "", "2"), kNow).retry_after, absl::Seconds(2));
  EXPECT_EQ(Classify(Http(503, "", "7"), kNow).retry_after, absl::Seconds(7));
  EXPECT_EQ(Classify(Http(429, ""), kNow).retry_after, absl::nullopt);
  EXPECT_EQ(Classify(Http(400, "", "5"), kNow).retry_after, absl::nullopt);
}

TEST(Classify, RetryAfterOnA200MaintenancePageIsCarried) {
  const char* page = "<html><body>Down for maintenance</body></html>";
  Outcome o = Classify(Http(200, page, "30"), kNow);
  EXPECT_EQ(o.verdict, Verdict::kRetry);
  EXPECT_EQ(o.error.kind, "bad_response");
  EXPECT_EQ(o.retry_after, absl::Seconds(30));
  const std::string date =
      absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", kNow + absl::Seconds(45),
                       absl::UTCTimeZone());
  EXPECT_EQ(Classify(Http(200, page, date), kNow).retry_after,
            absl::Seconds(45));
  EXPECT_EQ(Classify(Http(200, page), kNow).retry_after, absl::nullopt);
  // The same page as a batch answer: every VIN of it waits.
  for (const Outcome& b :
       ClassifyBatch(Http(200, page, "30"), kNow, {"A", "B"})) {
    EXPECT_EQ(b.verdict, Verdict::kRetry);
    EXPECT_EQ(b.retry_after, absl::Seconds(30));
  }
  // A finished decode has nothing to wait for, whatever the header says.
  EXPECT_EQ(Classify(Http(200, kVpicBody, "30"), kNow).retry_after,
            absl::nullopt);
}

// What a request's answer says of vPIC as a whole, decided once here: the
// engine pauses every flight on a pushback and lets the rate climb back on
// an answer, from this signal alone.
TEST(ClassifyRequest, SignalOfTheWholeAnswer) {
  struct Case {
    const char* name;
    HttpResult result;
    Signal want;
  };
  const Case cases[] = {
      {"decoded 200", Http(200, kVpicBody), Signal::kAnswered},
      {"sparse 200 is an answer", Http(200, kSparseBody), Signal::kAnswered},
      {"429 without Retry-After", Http(429, ""), Signal::kPushback},
      {"429 with Retry-After", Http(429, "", "5"), Signal::kPushback},
      {"503 with Retry-After", Http(503, "", "5"), Signal::kPushback},
      {"503 without Retry-After", Http(503, ""), Signal::kNone},
      {"502", Http(502, "", "5"), Signal::kNone},
      {"404 rejection", Http(404, ""), Signal::kNone},
      {"maintenance page 200", Http(200, "<html>down</html>", "5"),
       Signal::kNone},
      {"reset", Broken(Transport::kReset), Signal::kNone},
      {"timeout", Broken(Transport::kTimeout), Signal::kNone},
  };
  for (const Case& c : cases) {
    const RequestOutcome got = ClassifyRequest(c.result, kNow, nullptr);
    EXPECT_EQ(got.signal, c.want) << c.name;
    ASSERT_EQ(got.outcomes.size(), 1u) << c.name;
    EXPECT_EQ(got.outcomes[0].verdict, Classify(c.result, kNow).verdict)
        << c.name;
  }
}

TEST(ClassifyRequest, ABatchGetsOneOutcomePerVinAndOneSignal) {
  const std::vector<std::string> vins = {"A", "B"};
  const RequestOutcome pushed =
      ClassifyRequest(Http(429, "", "2"), kNow, &vins);
  EXPECT_EQ(pushed.signal, Signal::kPushback);
  ASSERT_EQ(pushed.outcomes.size(), 2u);
  EXPECT_EQ(pushed.outcomes[1].retry_after, absl::Seconds(2));
  const RequestOutcome failed = ClassifyRequest(Http(503, ""), kNow, &vins);
  EXPECT_EQ(failed.signal, Signal::kNone);
  EXPECT_EQ(failed.outcomes.size(), 2u);
}

// What a request's answer says of vPIC's health, for the circuit breaker
// (rule 13): unreachable or broken, or answered (a 429 and a rejection
// are answers), decided once here.
TEST(ClassifyRequest, HealthOfTheWholeAnswer) {
  using H = UpstreamHealth;
  struct Case {
    const char* name;
    HttpResult result;
    H want;
  };
  const Case cases[] = {
      {"decoded 200", Http(200, kVpicBody), H::kAnswered},
      {"sparse 200 is an answer", Http(200, kSparseBody), H::kAnswered},
      {"429 is pushback, not broken", Http(429, "", "5"), H::kAnswered},
      {"404 rejection is an answer", Http(404, ""), H::kAnswered},
      {"400 rejection is an answer", Http(400, ""), H::kAnswered},
      {"501 is a rejection", Http(501, ""), H::kAnswered},
      {"500", Http(500, ""), H::kBroken},
      {"502", Http(502, ""), H::kBroken},
      {"503 with Retry-After", Http(503, "", "5"), H::kBroken},
      {"504", Http(504, ""), H::kBroken},
      {"maintenance page 200", Http(200, "<html>down</html>"), H::kBroken},
      {"empty Results 200",
       Http(200, R"({"Count":0,"Message":"x","SearchCriteria":"","Results":[]})"),
       H::kBroken},
      {"connect", Broken(Transport::kConnect), H::kBroken},
      {"reset", Broken(Transport::kReset), H::kBroken},
      {"timeout", Broken(Transport::kTimeout), H::kBroken},
      {"too large", Broken(Transport::kTooLarge), H::kBroken},
      {"fatal (ours)", Broken(Transport::kFatal), H::kNeutral},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClassifyRequest(c.result, kNow, nullptr).health, c.want)
        << c.name;
  }
  // A batch: its whole answer counts once; a VIN missing from a vPIC
  // answer is that flight's bad_response, not a broken vPIC.
  const std::vector<std::string> vins = {"A", "B"};
  EXPECT_EQ(ClassifyRequest(Http(503, ""), kNow, &vins).health, H::kBroken);
  EXPECT_EQ(ClassifyRequest(Http(200, "<html>"), kNow, &vins).health,
            H::kBroken);
  const RequestOutcome partial = ClassifyRequest(
      Http(200,
           R"({"Count":1,"Message":"ok","SearchCriteria":"",)"
           R"("Results":[{"VIN":"A","Make":"FORD","ErrorCode":"0"}]})"),
      kNow, &vins);
  EXPECT_EQ(partial.health, H::kAnswered);
  EXPECT_EQ(partial.outcomes[1].error.kind, "bad_response");
}

TEST(ParseRetryAfter, SecondsAndHttpDates) {
  EXPECT_EQ(ParseRetryAfter("120", kNow), absl::Seconds(120));
  EXPECT_EQ(ParseRetryAfter(" 0 ", kNow), absl::ZeroDuration());
  const std::string date = absl::FormatTime(
      "%a, %d %b %Y %H:%M:%S GMT", kNow + absl::Seconds(90), absl::UTCTimeZone());
  EXPECT_EQ(ParseRetryAfter(date, kNow), absl::Seconds(90));
  const std::string past = absl::FormatTime(
      "%a, %d %b %Y %H:%M:%S GMT", kNow - absl::Seconds(90), absl::UTCTimeZone());
  EXPECT_EQ(ParseRetryAfter(past, kNow), absl::ZeroDuration());
  EXPECT_EQ(ParseRetryAfter("", kNow), absl::nullopt);
  EXPECT_EQ(ParseRetryAfter("-3", kNow), absl::nullopt);
  EXPECT_EQ(ParseRetryAfter("soon", kNow), absl::nullopt);
}

}  // namespace
}  // namespace vpic
