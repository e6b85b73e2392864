// The engine against the fake vPIC over loopback HTTP: decodes, validation,
// how real answers and faults are retried, and the one real-HTTP test of
// the jitter (rule 3). The fixture is in engine_test_fixture.h; what callers
// share and callers that leave have files of their own. The jitter's and
// Retry-After's rules in full, on a fake clock: engine_rules_test.cc.
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine_test_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing_util::RecordingListener;

TEST_F(EngineTest, CleanDecode) {
  MakeEngine();
  RecordingListener l;
  Submit(kFord, &l);
  auto end = l.WaitTerminal();
  ASSERT_TRUE(end.has_value());
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->vehicle.make, "FORD");
  EXPECT_EQ(end->result->vehicle.model, "F-150");
  EXPECT_EQ(end->result->vehicle.model_year, 2021);
  EXPECT_EQ(end->result->source, Source::kVpic);
  EXPECT_EQ(end->result->attempts, 1);
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "done"));
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(EngineTest, InvalidVinNeverReachesUpstream) {
  MakeEngine();
  RecordingListener l;
  DecodeRequest r;
  r.vin = "1HGCM82643A004352";  // wrong check digit
  auto id = engine_->Submit(r, &l);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.failure().reason, FailureReason::kInvalidVin);
  EXPECT_FALSE(id.failure().retryable);
  EXPECT_THAT(id.failure().message, testing::HasSubstr("check digit"));
  EXPECT_TRUE(l.events().empty());
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(EngineTest, WarnPolicyDecodesWithANote) {
  MakeEngine();
  RecordingListener l;
  DecodeRequest r;
  r.vin = "WVGZZZ5NZEW069297";
  r.check_digit_policy = vin::CheckDigitPolicy::kWarn;
  ASSERT_TRUE(engine_->Submit(r, &l).ok());
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  ASSERT_FALSE(end->result->notes.empty());
  EXPECT_EQ(end->result->notes[0].code, "check_digit");
  EXPECT_EQ(fake_->RequestCount("WVGZZZ5NZEW069297"), 1);
}

TEST_F(EngineTest, RetriesWithJitterThenSucceeds) {
  MakeEngine();
  fake_->Script(kHonda, Steps("503,503,ok"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->attempts, 3);
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "retrying", "retrying", "done"));
  auto events = l.events();
  auto requests = fake_->RequestsFor(kHonda);
  ASSERT_EQ(requests.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const Retrying& r = events[1 + i].retrying;
    EXPECT_EQ(r.attempt, i + 1);
    EXPECT_EQ(r.error.http_status, 503);
    EXPECT_EQ(r.error.kind, "http");
    EXPECT_GE(r.next_delay, kBase);
    EXPECT_LE(r.next_delay, kCap);
    // The next request never comes before the announced delay.
    EXPECT_GE(requests[i + 1].time - requests[i].time, r.next_delay);
  }
  EXPECT_LT(events[1].retrying.next_delay, 3 * kBase)
      << "the first retry waits within [base, 3*base)";
}

TEST_F(EngineTest, SparseAnswerIsFinishedAndNeverRetried) {
  MakeEngine();
  fake_->Script(kHonda, Steps("sparse"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->vehicle.make, "");
  EXPECT_EQ(end->result->attempts, 1);
  ASSERT_TRUE(Idle());
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, NonRetryableAnswersFailAtOnce) {
  MakeEngine();
  for (const char* status : {"404", "400", "500"}) {
    fake_->Script(kHonda, Steps(status));
    const int before = fake_->RequestCount(kHonda);
    RecordingListener l;
    Submit(kHonda, &l);
    auto end = l.WaitTerminal();
    ASSERT_EQ(end->kind, "failed") << status;
    EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamRejected);
    EXPECT_FALSE(end->failure.retryable);
    EXPECT_EQ(end->failure.attempts, 1);
    EXPECT_EQ(end->failure.last_error->http_status, std::stoi(status));
    EXPECT_EQ(fake_->RequestCount(kHonda), before + 1);
  }
}

TEST_F(EngineTest, EveryRetryableFaultIsRetried) {
  for (const char* fault :
       {"502", "504", "html", "truncated", "empty", "reset", "hang", "429:0",
        "badgzip"}) {
    // A fresh engine per fault: its first attempt uses a new connection.
    // (libcurl itself re-sends once when a *reused* keep-alive connection
    // dies before answering, as HTTP clients do for idempotent requests.)
    EngineOptions o;
    o.attempt_timeout = absl::Milliseconds(300);
    MakeEngine(o);
    fake_->Script(kHonda, Steps(fault));
    const int before = fake_->RequestCount(kHonda);
    RecordingListener l;
    Submit(kHonda, &l);
    auto end = l.WaitTerminal();
    ASSERT_EQ(end->kind, "done") << fault;
    EXPECT_EQ(end->result->attempts, 2) << fault;
    EXPECT_THAT(l.kinds(), ElementsAre("queued", "retrying", "done")) << fault;
    EXPECT_EQ(fake_->RequestCount(kHonda), before + 2) << fault;
    engine_.reset();
  }
}

}  // namespace
}  // namespace engine
