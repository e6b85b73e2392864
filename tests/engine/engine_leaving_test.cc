// The engine against the fake vPIC: callers that leave (cancel, deadline),
// shutdown, and overload refused up front.
#include "engine/engine.h"
#include "engine_test_fixture.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"

namespace engine {
namespace {

using testing_util::RecordingListener;

TEST_F(EngineTest, CancelledLastWaiterStopsTheFlight) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang,ok"));
  RecordingListener l;
  const auto id = Submit(kHonda, &l);
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  engine_->Cancel(id);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kCancelled);
  ASSERT_TRUE(Idle());
  ASSERT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)))
      << "the abandoned request's connection is closed";
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, CancelledWaiterDuringRetryWaitCancelsTheWakeup) {
  EngineOptions o;
  o.retry_base = absl::Seconds(2);
  o.retry_cap = absl::Seconds(10);
  MakeEngine(o);
  fake_->Script(kHonda, Steps("503"));
  RecordingListener l;
  const auto id = Submit(kHonda, &l);
  ASSERT_TRUE(engine_->WaitForStats(
      [](const EngineStats& s) {
        return s.upstream_requests == 1 && s.upstream_active == 0 &&
               s.pending_wakeups == 1;
      },
      absl::Seconds(10)));
  engine_->Cancel(id);
  ASSERT_EQ(l.WaitTerminal()->kind, "failed");
  ASSERT_TRUE(Idle()) << "the pending wake-up was cancelled";
  EXPECT_EQ(engine_->Stats().upstream_requests, 1u);
}

TEST_F(EngineTest, OtherWaitersKeepTheFlightWhenOneLeaves) {
  MakeEngine();
  fake_->Script(kHonda, Steps("delay:300ms"));
  RecordingListener leaving, staying;
  const auto id = Submit(kHonda, &leaving);
  Submit(kHonda, &staying);
  engine_->Cancel(id);
  EXPECT_EQ(leaving.WaitTerminal()->kind, "failed");
  EXPECT_EQ(staying.WaitTerminal()->kind, "done");
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, RetryWakingAfterTheDeadlineFailsAtOnce) {
  EngineOptions o;
  o.retry_base = absl::Seconds(5);
  o.retry_cap = absl::Seconds(20);
  MakeEngine(o);
  fake_->Script(kHonda, Steps("503"));
  RecordingListener l;
  const absl::Time deadline = absl::Now() + absl::Seconds(3);
  Submit(kHonda, &l, deadline);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(end->failure.retryable);
  EXPECT_GE(end->failure.retry_delay, absl::Seconds(4));  // ~5s minus elapsed
  EXPECT_LT(end->at, deadline) << "it did not sleep into the deadline";
  ASSERT_TRUE(Idle()) << "no waiter left, so no retry is scheduled";
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, DeadlineDuringAnAttemptEndsTheWaiter) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang"));
  RecordingListener l;
  Submit(kHonda, &l, absl::Now() + absl::Milliseconds(200));
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kDeadlineExceeded);
  ASSERT_TRUE(Idle());
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, ShutdownFailsWaitersRetryable) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang"));
  RecordingListener l;
  Submit(kHonda, &l);
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  engine_->Shutdown();
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kShuttingDown);
  EXPECT_TRUE(end->failure.retryable);
  RecordingListener late;
  DecodeRequest r;
  r.vin = kFord;
  const Admission late_admission = engine_->Submit(r, &late);
  ASSERT_FALSE(late_admission.ok());
  EXPECT_EQ(late_admission.failure().reason, FailureReason::kShuttingDown);
  EXPECT_TRUE(late_admission.failure().retryable);
}

TEST_F(EngineTest, OverloadIsRefusedUpFront) {
  EngineOptions o;
  o.max_waiters = 1;
  MakeEngine(o);
  fake_->Script(kHonda, Steps("delay:200ms"));
  RecordingListener a, b;
  Submit(kHonda, &a);
  DecodeRequest r;
  r.vin = kFord;
  const Admission refused = engine_->Submit(r, &b);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().reason, FailureReason::kOverloaded);
  EXPECT_TRUE(refused.failure().retryable);
  EXPECT_EQ(a.WaitTerminal()->kind, "done");
  ASSERT_TRUE(Idle());
  EXPECT_TRUE(engine_->Submit(r, &b).ok()) << "capacity is given back";
  EXPECT_EQ(b.WaitTerminal()->kind, "done");
}

}  // namespace
}  // namespace engine
