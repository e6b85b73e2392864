// Unary Decode through real gRPC on loopback, against the fake vPIC.
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "testing/retry_info.h"
#include "testing/server_fixture.h"

namespace {

using google::protobuf::util::MessageDifferencer;
using testing::HasSubstr;
using testing_util::RetryDelayOf;
using testing_util::ServerFixture;
using vin::v1::DecodeRequest;
using vin::v1::DecodeResponse;

constexpr char kFord[] = "1FTMW1T88MFA00001";
constexpr char kHonda[] = "1HGCM82633A004352";

class DecodeTest : public ServerFixture {};

TEST_F(DecodeTest, CleanDecodeOfTheF150) {
  StartServer();
  DecodeResponse resp;
  grpc::Status s = Decode(kFord, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const auto& r = resp.result();
  EXPECT_EQ(r.vin(), kFord);
  EXPECT_EQ(r.vehicle().make(), "FORD");
  EXPECT_EQ(r.vehicle().model(), "F-150");
  EXPECT_EQ(r.vehicle().model_year(), 2021);
  EXPECT_EQ(r.vehicle().vehicle_type(), "TRUCK");
  EXPECT_EQ(r.vehicle().engine_cylinders(), 6);
  EXPECT_DOUBLE_EQ(r.vehicle().displacement_l(), 3.5);
  EXPECT_EQ(r.vehicle().attributes().at("PlantCity"), "DEARBORN");
  EXPECT_EQ(r.vehicle().attributes().count("ErrorCode"), 0u);
  EXPECT_EQ(r.source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(r.attempts(), 1);
  ASSERT_EQ(r.notes_size(), 1);
  EXPECT_EQ(r.notes(0).code(), "0");
  EXPECT_GT(r.decode_time().seconds(), 0);
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(DecodeTest, InputIsNormalised) {
  StartServer();
  DecodeResponse resp;
  ASSERT_TRUE(Decode("  1ftmw1t88mfa00001 \n", &resp).ok());
  EXPECT_EQ(resp.result().vin(), kFord);
}

TEST_F(DecodeTest, ModelYearHintIsSentUpstream) {
  StartServer();
  DecodeRequest req;
  req.set_vin(kFord);
  req.set_model_year(2021);
  DecodeResponse resp;
  ASSERT_TRUE(Decode(req, &resp).ok());
  auto log = fake_->RequestsFor(kFord);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].model_year, 2021);
}

TEST_F(DecodeTest, InvalidVinsAreRejectedLocallyNamingTheRule) {
  StartServer();
  struct Case {
    std::string vin;
    std::string rule;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {"5VCD6JF38H207075", "17 characters"},
      {"1HGCM82643A004352", "check digit"},
      {"1HGCM8263IA004352", "I, O and Q"},
      {"1HGCM82633A00435-", "only digits and letters"},
      {"1HGCM8263UA004352", "model-year"},
      {"WVGZZZ5NZEW069297", "check digit"},
      {"1HGCM82633A00435\xC3\x89", "non-ASCII"},
  };
  for (const Case& c : cases) {
    DecodeResponse resp;
    grpc::Status s = Decode(c.vin, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.vin;
    EXPECT_THAT(s.error_message(), HasSubstr(c.rule)) << c.vin;
  }
  DecodeRequest bad_year;
  bad_year.set_vin(kFord);
  bad_year.set_model_year(1066);
  DecodeResponse resp;
  grpc::Status s = Decode(bad_year, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("model_year"));
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(DecodeTest, EuropeanVinDecodesUnderWarnPolicyWithANote) {
  StartServer();
  DecodeRequest req;
  req.set_vin("WVGZZZ5NZEW069297");
  req.set_check_digit_policy(vin::v1::CHECK_DIGIT_POLICY_WARN);
  DecodeResponse resp;
  ASSERT_TRUE(Decode(req, &resp).ok());
  ASSERT_GE(resp.result().notes_size(), 1);
  EXPECT_EQ(resp.result().notes(0).code(), "check_digit");
}

TEST_F(DecodeTest, SparseAnswerIsAFinishedDecode) {
  StartServer();
  Script(kHonda, "sparse");
  DecodeResponse resp;
  ASSERT_TRUE(Decode(kHonda, &resp).ok());
  const auto& v = resp.result().vehicle();
  EXPECT_EQ(v.make(), "");
  EXPECT_EQ(v.model(), "");
  EXPECT_EQ(v.model_year(), 0);
  for (const auto& [name, value] : v.attributes()) {
    EXPECT_FALSE(value.empty()) << name << " is empty but present";
  }
  EXPECT_EQ(resp.result().attempts(), 1);
  ASSERT_EQ(resp.result().notes_size(), 1);
  EXPECT_EQ(resp.result().notes(0).code(), "8");
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(DecodeTest, TwoFailuresThenSuccessWithJitteredGaps) {
  server::ServerOptions o = Defaults();
  o.engine.retry_base = absl::Milliseconds(50);
  o.engine.retry_cap = absl::Milliseconds(500);
  // This rule alone: the circuit breaker (rule 13, its own tests) would
  // open after five failures in a row and answer the rest at once.
  o.engine.breaker.failures = 0;
  StartServer(o);
  // Several VINs failing at the same moment must not retry in lockstep.
  const std::vector<std::string> vins = {kHonda, "1G4AH59H45G118341",
                                         "1M8GDM9AXKP042788", kFord};
  for (const auto& v : vins) Script(v, "503,503,ok");
  std::vector<std::thread> callers;
  std::vector<grpc::Status> statuses(vins.size());
  std::vector<DecodeResponse> responses(vins.size());
  for (size_t i = 0; i < vins.size(); ++i) {
    callers.emplace_back(
        [&, i] { statuses[i] = Decode(vins[i], &responses[i]); });
  }
  for (auto& t : callers) t.join();
  std::set<int64_t> first_gaps;
  for (size_t i = 0; i < vins.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(responses[i].result().attempts(), 3);
    auto log = fake_->RequestsFor(vins[i]);
    ASSERT_EQ(log.size(), 3u) << vins[i];
    for (int k = 1; k < 3; ++k) {
      const absl::Duration gap = log[k].time - log[k - 1].time;
      EXPECT_GE(gap, o.engine.retry_base) << vins[i];
      // The delay is at most the cap; the rest is the HTTP round trip and
      // thread wake-up on a loaded (or sanitized) test machine.
      EXPECT_LE(gap, o.engine.retry_cap + absl::Milliseconds(250)) << vins[i];
    }
    first_gaps.insert(absl::ToInt64Microseconds(log[1].time - log[0].time));
  }
  EXPECT_GT(first_gaps.size(), 1u) << "retries of different VINs drift apart";
}

TEST_F(DecodeTest, RejectedRequestIsFailedPreconditionAfterOneRequest) {
  StartServer();
  for (const char* status : {"404", "400"}) {
    Script(kHonda, status);
    const int before = fake_->RequestCount(kHonda);
    DecodeResponse resp;
    grpc::Status s = Decode(kHonda, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status;
    EXPECT_THAT(s.error_message(), HasSubstr(status));
    EXPECT_EQ(fake_->RequestCount(kHonda), before + 1);
  }
}

TEST_F(DecodeTest, MaintenancePageIsRetried) {
  StartServer();
  Script(kHonda, "html");
  DecodeResponse resp;
  ASSERT_TRUE(Decode(kHonda, &resp).ok());
  EXPECT_EQ(resp.result().attempts(), 2);
  EXPECT_EQ(fake_->RequestCount(kHonda), 2);
}

TEST_F(DecodeTest, ExhaustedRetriesAreUnavailableWithRetryInfo) {
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 3;
  StartServer(o);
  Script(kHonda, "503,503,503,503,503");
  DecodeResponse resp;
  grpc::Status s = Decode(kHonda, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), HasSubstr("3 attempts"));
  auto delay = RetryDelayOf(s);
  ASSERT_TRUE(delay.has_value()) << "UNAVAILABLE carries google.rpc.RetryInfo";
  EXPECT_GE(*delay, o.engine.retry_base);
  EXPECT_EQ(fake_->RequestCount(kHonda), 3);
}

TEST_F(DecodeTest, RetryAfterOneSecondIsRespected) {
  StartServer();
  Script(kHonda, "429:1");
  DecodeResponse resp;
  ASSERT_TRUE(Decode(kHonda, &resp).ok());
  auto log = fake_->RequestsFor(kHonda);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_GE(log[1].time - log[0].time, absl::Seconds(1));
}

TEST_F(DecodeTest, ARetryAfterDateIsWaitedOutEndToEnd) {
  StartServer();
  // Three seconds ahead, at the date's one-second resolution.
  const absl::Time until = absl::FromUnixSeconds(
      absl::ToUnixSeconds(absl::Now() + absl::Seconds(3)));
  Script(kHonda, absl::StrCat("429:", absl::FormatTime(
                                          "%a, %d %b %Y %H:%M:%S GMT", until,
                                          absl::UTCTimeZone()),
                              ",ok"));
  DecodeResponse resp;
  grpc::Status s = Decode(kHonda, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.result().attempts(), 2);
  const auto log = fake_->RequestsFor(kHonda);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_GE(log[1].time, until - absl::Milliseconds(5))
      << "the retry waited for the date vPIC gave";
  EXPECT_LT(log[1].time, until + absl::Seconds(2)) << "and not much longer";
}

TEST_F(DecodeTest, TwoHundredConcurrentCallersMakeOneUpstreamRequest) {
  constexpr int kCallers = 200;
  server::ServerOptions o = Defaults();
  o.max_streams_per_connection = kCallers;  // all on one connection
  StartServer(o);
  fake_->HoldAnswers();  // until every caller waits on the one request
  std::vector<DecodeResponse> responses(kCallers);
  std::vector<grpc::Status> statuses(kCallers);
  // All 200 calls in flight at once, on gRPC's callback API.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts(kCallers);
  // A counter under a lock: BlockingCounter's atomic is in Debian's
  // uninstrumented abseil, so TSan would not see the statuses handed over.
  absl::Mutex mu;
  int finished = 0;
  DecodeRequest req;
  req.set_vin(kHonda);
  for (int i = 0; i < kCallers; ++i) {
    contexts[i] = std::make_unique<grpc::ClientContext>();
    contexts[i]->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    stub_->async()->Decode(contexts[i].get(), &req, &responses[i],
                           [&, i](grpc::Status s) {
                             absl::MutexLock lock(&mu);
                             statuses[i] = std::move(s);
                             ++finished;
                           });
  }
  const bool all_waiting = server_->engine().WaitForStats(
      [](const engine::EngineStats& st) { return st.waiters == kCallers; },
      absl::Seconds(20));
  fake_->ReleaseAnswers();
  {
    absl::MutexLock lock(&mu);
    auto all = [&] { return finished == kCallers; };
    mu.Await(absl::Condition(&all));
  }
  ASSERT_TRUE(all_waiting);
  for (int i = 0; i < kCallers; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_TRUE(MessageDifferencer::Equals(responses[i], responses[0]))
        << "caller " << i << " got a different result";
  }
  EXPECT_EQ(responses[0].result().vehicle().make(), "HONDA");
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(DecodeTest, CallerPastItsDeadlineLeavesAndTheFlightStops) {
  StartServer();
  Script(kHonda, "hang,ok");
  DecodeResponse resp;
  const absl::Time start = absl::Now();
  grpc::Status s = Decode(kHonda, &resp, absl::Milliseconds(300));
  EXPECT_TRUE(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
              s.error_code() == grpc::StatusCode::UNAVAILABLE)
      << s.error_code() << " " << s.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  // With its only waiter gone the flight is cancelled: no request in
  // progress, no wake-up pending, so no further upstream request.
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& st) {
        return st.flights == 0 && st.pending_wakeups == 0 &&
               st.upstream_active == 0;
      },
      absl::Seconds(10)));
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(DecodeTest, RetryThatWouldWakeAfterTheDeadlineFailsAtOnce) {
  server::ServerOptions o = Defaults();
  o.engine.retry_base = absl::Seconds(5);
  o.engine.retry_cap = absl::Seconds(20);
  StartServer(o);
  Script(kHonda, "503");
  DecodeResponse resp;
  grpc::Status s = Decode(kHonda, &resp, absl::Seconds(3));
  // Not DEADLINE_EXCEEDED: the server did not sleep into the deadline.
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  auto delay = RetryDelayOf(s);
  ASSERT_TRUE(delay.has_value());
  EXPECT_GE(*delay, absl::Seconds(4));
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(DecodeTest, SecondCallIsServedFromTheCache) {
  StartServer();
  DecodeResponse first, second;
  ASSERT_TRUE(Decode(kFord, &first).ok());
  ASSERT_TRUE(Decode(kFord, &second).ok());
  EXPECT_EQ(second.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(second.result().attempts(), 0);
  EXPECT_TRUE(MessageDifferencer::Equals(second.result().vehicle(),
                                         first.result().vehicle()));
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(DecodeTest, SnapshotOnlyIsRefusedWithoutASnapshot) {
  StartServer();
  DecodeRequest req;
  req.set_vin(kFord);
  req.set_source_preference(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY);
  DecodeResponse resp;
  grpc::Status s = Decode(req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("snapshot"));
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(DecodeTest, ShutdownAnswersWaitingCallsAndRefusesNewOnes) {
  StartServer();
  Script(kHonda, "hang");
  grpc::Status s;
  DecodeResponse resp;
  std::thread caller([&] { s = Decode(kHonda, &resp); });
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  server_->Shutdown(absl::Milliseconds(100));
  caller.join();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("shutting down"));
}

}  // namespace
