#include "retry/scheduler.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace retry {
namespace {

TEST(Scheduler, RunsDueCallbacksInTimeOrder) {
  FakeClock clock;
  Scheduler s(&clock);
  std::vector<std::string> ran;
  s.ScheduleAfter(absl::Milliseconds(30), [&] { ran.push_back("c"); });
  s.ScheduleAfter(absl::Milliseconds(10), [&] { ran.push_back("a"); });
  s.ScheduleAfter(absl::Milliseconds(20), [&] { ran.push_back("b"); });
  EXPECT_EQ(s.NextWakeup(), clock.Now() + absl::Milliseconds(10));
  EXPECT_EQ(s.RunDue(), 0);
  clock.Advance(absl::Milliseconds(20));
  EXPECT_EQ(s.RunDue(), 2);
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b"}));
  clock.Advance(absl::Milliseconds(10));
  EXPECT_EQ(s.RunDue(), 1);
  EXPECT_EQ(ran.back(), "c");
  EXPECT_EQ(s.NextWakeup(), absl::nullopt);
  EXPECT_EQ(s.pending(), 0u);
}

TEST(Scheduler, SameInstantRunsInSchedulingOrder) {
  FakeClock clock;
  Scheduler s(&clock);
  std::vector<int> ran;
  for (int i = 0; i < 5; ++i) {
    s.ScheduleAt(clock.Now(), [&ran, i] { ran.push_back(i); });
  }
  s.RunDue();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(Scheduler, CancelledWakeupNeverRuns) {
  FakeClock clock;
  Scheduler s(&clock);
  bool ran = false;
  const auto id = s.ScheduleAfter(absl::Seconds(1), [&] { ran = true; });
  const auto other = s.ScheduleAfter(absl::Seconds(2), [] {});
  EXPECT_TRUE(s.Cancel(id));
  EXPECT_FALSE(s.Cancel(id));  // second cancel is a no-op
  EXPECT_FALSE(s.Cancel(0));
  EXPECT_EQ(s.NextWakeup(), clock.Now() + absl::Seconds(2));
  clock.Advance(absl::Seconds(3));
  EXPECT_EQ(s.RunDue(), 1);
  EXPECT_FALSE(ran);
  EXPECT_FALSE(s.Cancel(other));  // already fired
}

TEST(Scheduler, CallbacksMayScheduleAndCancel) {
  FakeClock clock;
  Scheduler s(&clock);
  std::vector<std::string> ran;
  Scheduler::TimerId victim = s.ScheduleAfter(absl::Seconds(1), [&] {
    ran.push_back("victim");
  });
  s.ScheduleAt(clock.Now(), [&] {
    ran.push_back("first");
    s.Cancel(victim);
    s.ScheduleAt(clock.Now(), [&] { ran.push_back("chained"); });
  });
  EXPECT_EQ(s.RunDue(), 2);
  clock.Advance(absl::Seconds(2));
  s.RunDue();
  EXPECT_EQ(ran, (std::vector<std::string>{"first", "chained"}));
}

TEST(Scheduler, ManyCancelledTimersDoNotAccumulate) {
  FakeClock clock;
  Scheduler s(&clock);
  for (int i = 0; i < 100000; ++i) {
    s.Cancel(s.ScheduleAfter(absl::Hours(1), [] {}));
  }
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_EQ(s.NextWakeup(), absl::nullopt);
}

}  // namespace
}  // namespace retry
