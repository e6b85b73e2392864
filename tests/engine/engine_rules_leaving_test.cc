// The engine's rules on a fake clock against a scripted upstream, as a
// caller sees them: waiters' deadlines (docs/DESIGN.md "Deadlines") and the
// stop (Drain, Shutdown: "Stopping"), every waiter with exactly one terminal
// event. Over real HTTP: engine_leaving_test.cc.
#include <string>

#include "engine/engine.h"
#include "engine_rules_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"
#include "testing/scripted_upstream.h"
#include "testing/vin_gen.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing_util::RecordingListener;
using testing_util::ValidVin;

// ---- Deadlines ----

// A waiter whose deadline comes before its flight's next retry leaves when
// the retry is scheduled, told when it would have been; it sees no
// RETRYING. The flight goes on for the others.
TEST_F(EngineRulesTest, AWaiterWhoseDeadlineComesBeforeTheRetryLeavesAtOnce) {
  EngineOptions o = Options();
  o.retry_base = absl::Seconds(5);
  o.retry_cap = absl::Seconds(20);
  Make(o);
  const std::string vin = ValidVin(1);
  RecordingListener* hurried = Submit(vin, absl::Seconds(3));
  RecordingListener* patient = Submit(vin);
  Turn();
  Step(absl::Seconds(1));  // the attempt takes a second
  const absl::Time failed_at = Now();
  Answer(1, Status(503));
  ASSERT_THAT(patient->kinds(), ElementsAre("queued", "retrying"));
  const absl::Duration delay = patient->events()[1].retrying.next_delay;
  EXPECT_GE(delay, absl::Seconds(5));
  ASSERT_THAT(hurried->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(hurried->events()[1].at, failed_at) << "at once, not at 3 s";
  const Failure f = hurried->events()[1].failure;
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.attempts, 1);
  EXPECT_EQ(f.retry_delay, delay) << "the time to the retry";
  ASSERT_TRUE(f.last_error.has_value());
  EXPECT_EQ(f.last_error->http_status, 503);
  EXPECT_THAT(f.message, HasSubstr("after this call's deadline"));
  Step(delay);
  ASSERT_EQ(Sent(), 2u);
  AnswerOk(2);
  ASSERT_EQ(patient->kinds().back(), "done");
}

TEST_F(EngineRulesTest, TheLastWaiterLeavingBeforeTheRetryAbandonsIt) {
  EngineOptions o = Options();
  o.retry_base = absl::Seconds(5);
  o.retry_cap = absl::Seconds(20);
  Make(o);
  RecordingListener* l = Submit(ValidVin(1), absl::Seconds(3));
  Turn();
  Answer(1, Status(503));
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(l->events()[1].at, t0_) << "at once, not at 3 s";
  const Failure f = l->events()[1].failure;
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_GE(f.retry_delay, absl::Seconds(5)) << "the time to the retry";
  EXPECT_TRUE(Idle()) << "no retry is scheduled";
  RunAnsweringOk(absl::Seconds(30));
  EXPECT_EQ(Sent(), 1u);
}

// A deadline that comes while an attempt is in flight ends that waiter at
// its deadline (DEADLINE_EXCEEDED); the attempt goes on for the others.
TEST_F(EngineRulesTest, ADeadlineDuringAnAttemptEndsThatWaiterOnly) {
  Make(Options());
  const std::string vin = ValidVin(1);
  RecordingListener* brief = Submit(vin, absl::Milliseconds(200));
  RecordingListener* other = Submit(vin);
  Turn();
  ASSERT_EQ(Sent(), 1u);
  Step(absl::Milliseconds(200) - kNs);
  ASSERT_THAT(brief->kinds(), ElementsAre("queued"));
  Step(kNs);
  ASSERT_THAT(brief->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(brief->events()[1].at, t0_ + absl::Milliseconds(200));
  const Failure f = brief->events()[1].failure;
  EXPECT_EQ(f.reason, FailureReason::kDeadlineExceeded);
  EXPECT_TRUE(f.retryable);
  EXPECT_FALSE(upstream_->sent()[0].cancelled) << "the other still waits";
  AnswerOk(1);
  ASSERT_THAT(other->kinds(), ElementsAre("queued", "done"));
  EXPECT_EQ(other->events().back().result->attempts, 1);
  EXPECT_EQ(Sent(), 1u);
}

TEST_F(EngineRulesTest, ADeadlineDuringTheOnlyWaitersAttemptAbortsIt) {
  Make(Options());
  RecordingListener* l = Submit(ValidVin(1), absl::Milliseconds(200));
  Turn();
  Step(absl::Milliseconds(200));
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(l->events()[1].failure.reason, FailureReason::kDeadlineExceeded);
  EXPECT_TRUE(upstream_->sent()[0].cancelled);
  EXPECT_TRUE(Idle());
  RunAnsweringOk(10 * kCap);
  EXPECT_EQ(Sent(), 1u);
}

TEST_F(EngineRulesTest, ADeadlinePastWhenTheLoopSeesTheCallFailsAtOnce) {
  Make(Options());
  RecordingListener* l = Submit(ValidVin(1), absl::Milliseconds(10));
  clock_.Advance(absl::Milliseconds(20));  // before the loop's next turn
  Turn();
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(l->events()[1].failure.reason, FailureReason::kDeadlineExceeded);
  EXPECT_TRUE(l->events()[1].failure.retryable);
  EXPECT_EQ(Sent(), 0u) << "never sent";
}

// ---- The stop ----

// Flights in each state: A in its attempt (with a joiner), B waiting to
// retry, C at the gate for the rate, D in its stagger.
class EngineStopTest : public EngineRulesTest {
 protected:
  void SetUp() override {
    EngineOptions o = Options();
    o.budget.rate_per_minute = 60;
    o.budget.burst = 3;
    Make(o);
    a_ = Submit(ValidVin(1));
    a_joiner_ = Submit(ValidVin(1));
    b_ = Submit(ValidVin(2));
    e_ = Submit(ValidVin(5));  // a third request in flight
    c_ = Submit(ValidVin(3));  // no token left: waits for the next
    DecodeRequest staggered;
    staggered.vin = ValidVin(4);
    staggered.stagger = true;
    d_ = Submit(staggered);
    Turn();
    ASSERT_EQ(Sent(), 3u);
    Answer(2, Status(503));  // B
    ASSERT_THAT(b_->kinds(), ElementsAre("queued", "retrying"));
    b_delay_ = b_->events()[1].retrying.next_delay;
    for (const RecordingListener* l : {a_, a_joiner_, c_, d_, e_}) {
      ASSERT_THAT(l->kinds(), ElementsAre("queued"));
    }
  }

  RecordingListener* a_ = nullptr;
  RecordingListener* a_joiner_ = nullptr;
  RecordingListener* b_ = nullptr;
  RecordingListener* c_ = nullptr;
  RecordingListener* d_ = nullptr;
  RecordingListener* e_ = nullptr;
  absl::Duration b_delay_;
};

void ExpectShuttingDown(const RecordingListener& l, int attempts) {
  ASSERT_EQ(l.kinds().back(), "failed");
  const Failure f = l.events().back().failure;
  EXPECT_EQ(f.reason, FailureReason::kShuttingDown);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.attempts, attempts);
}

TEST_F(EngineStopTest, ShutdownFailsEveryWaiterRetryableOnce) {
  engine_->Shutdown();
  Turn();
  for (const RecordingListener* l : {a_, a_joiner_, c_, d_, e_}) {
    ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
    ExpectShuttingDown(*l, l == c_ || l == d_ ? 0 : 1);
  }
  ASSERT_THAT(b_->kinds(), ElementsAre("queued", "retrying", "failed"));
  ExpectShuttingDown(*b_, 1);
  EXPECT_EQ(b_->events().back().failure.last_error->http_status, 503);
  const Admission late = Refused(ValidVin(9));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.failure().reason, FailureReason::kShuttingDown);
  EXPECT_TRUE(late.failure().retryable);
  // Answers that come now change nothing, and nothing more is sent.
  RunAnsweringOk(absl::Seconds(5));
  EXPECT_EQ(Sent(), 3u);
  for (const auto& l : listeners_) EXPECT_TRUE(OneTerminalEvent(*l));
  EXPECT_TRUE(Idle());
}

// Drain fails at once what waits for anything but a request in flight;
// a request in flight may still finish: DONE when it decodes, SHUTTING_DOWN
// when it comes back retryable.
TEST_F(EngineStopTest, DrainFailsWaitingFlightsAndLetsRequestsInFlightEnd) {
  Step(absl::Milliseconds(50));
  engine_->Drain();
  Turn();
  ASSERT_THAT(b_->kinds(), ElementsAre("queued", "retrying", "failed"));
  ExpectShuttingDown(*b_, 1);
  EXPECT_EQ(b_->events().back().failure.retry_delay,
            b_delay_ - absl::Milliseconds(50))
      << "the time to its retry wake-up";
  EXPECT_EQ(b_->events().back().failure.last_error->http_status, 503);
  for (const RecordingListener* l : {c_, d_}) {
    ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
    ExpectShuttingDown(*l, 0);
  }
  for (const RecordingListener* l : {a_, a_joiner_, e_}) {
    EXPECT_THAT(l->kinds(), ElementsAre("queued")) << "its request may end";
  }
  const Admission late = Refused(ValidVin(9));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.failure().reason, FailureReason::kShuttingDown);

  AnswerOk(1);
  for (const RecordingListener* l : {a_, a_joiner_}) {
    ASSERT_THAT(l->kinds(), ElementsAre("queued", "done"));
    EXPECT_EQ(l->events().back().result->source, Source::kVpic);
  }
  Answer(3, Status(503));
  ASSERT_THAT(e_->kinds(), ElementsAre("queued", "failed"));
  ExpectShuttingDown(*e_, 1);
  EXPECT_EQ(e_->events().back().failure.last_error->http_status, 503);
  EXPECT_THAT(e_->events().back().failure.message, HasSubstr("503"));

  RunAnsweringOk(absl::Seconds(5));
  EXPECT_EQ(Sent(), 3u) << "no request after the drain began";
  EXPECT_TRUE(Idle());
  engine_->Shutdown();  // nothing is left to fail
  Turn();
  for (const auto& l : listeners_) EXPECT_TRUE(OneTerminalEvent(*l));
}

}  // namespace
}  // namespace engine
