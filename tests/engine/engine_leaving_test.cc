// The engine against the fake vPIC: the one real-HTTP test of deadlines and
// of shutdown, and overload refused up front. Cancelling, deadlines and the
// stop in full, on a fake clock: engine_rules_test.cc.
#include "engine/engine.h"
#include "engine_test_fixture.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"

namespace engine {
namespace {

using testing_util::RecordingListener;

TEST_F(EngineTest, DeadlineDuringAnAttemptEndsTheWaiter) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang"));
  RecordingListener l;
  Submit(kHonda, &l, absl::Now() + absl::Milliseconds(200));
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kDeadlineExceeded);
  ASSERT_TRUE(Idle());
  ASSERT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)))
      << "the abandoned request's connection is closed";
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
