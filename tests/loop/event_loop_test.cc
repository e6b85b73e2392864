// The engine's event loop on its own: posted tasks, timers on a fake clock,
// descriptors (a pipe) as I/O sources.
#include "loop/event_loop.h"

#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loop {
namespace {

using testing::ElementsAre;

std::unique_ptr<EventLoop> Make(const retry::Clock* clock = nullptr) {
  auto loop = EventLoop::Create(clock);
  EXPECT_TRUE(loop.ok()) << loop.status();
  return *std::move(loop);
}

TEST(EventLoop, PostedTasksRunInOrderInTheNextTurn) {
  auto loop = Make();
  std::vector<int> ran;
  loop->Post([&] { ran.push_back(1); });
  loop->Post([&] {
    ran.push_back(2);
    loop->Post([&] { ran.push_back(3); });  // posted while running: next turn
  });
  EXPECT_TRUE(ran.empty()) << "never inside Post";
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_THAT(ran, ElementsAre(1, 2));
  EXPECT_TRUE(loop->has_posted());
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_THAT(ran, ElementsAre(1, 2, 3));
}

TEST(EventLoop, APostFromAnotherThreadEndsTheWait) {
  auto loop = Make();
  bool ran = false;
  std::thread poster([&] { loop->Post([&] { ran = true; }); });
  // A turn that would wait a minute returns once the task is posted (the
  // task may also be posted before the wait begins).
  const absl::Time before = absl::Now();
  while (!ran) loop->RunOnce(absl::Seconds(60));
  poster.join();
  EXPECT_LT(absl::Now() - before, absl::Seconds(30));
}

TEST(EventLoop, TimersRunWhenDueOnTheLoopsClockNeverEarly) {
  retry::FakeClock clock;
  auto loop = Make(&clock);
  std::vector<std::string> ran;
  loop->scheduler().ScheduleAfter(absl::Seconds(2),
                                  [&] { ran.push_back("wake-up"); });
  loop->io_timers().ScheduleAfter(absl::Seconds(1),
                                  [&] { ran.push_back("io"); });
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_TRUE(ran.empty());
  clock.Advance(absl::Seconds(1));
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_THAT(ran, ElementsAre("io"));
  clock.Advance(absl::Seconds(1));
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_THAT(ran, ElementsAre("io", "wake-up"));
  EXPECT_EQ(loop->scheduler().pending(), 0u);
}

class PipeTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pipe(fds_), 0); }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  int fds_[2] = {-1, -1};
};

TEST_F(PipeTest, AReadableDescriptorRunsItsHandler) {
  auto loop = Make();
  std::vector<uint32_t> seen;
  ASSERT_TRUE(loop->Watch(fds_[0], EventLoop::kReadable,
                          [&](uint32_t events) {
                            seen.push_back(events);
                            char c;
                            ASSERT_EQ(read(fds_[0], &c, 1), 1);
                          })
                  .ok());
  EXPECT_EQ(loop->watched(), 1u);
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_TRUE(seen.empty()) << "nothing to read yet";
  ASSERT_EQ(write(fds_[1], "x", 1), 1);
  loop->RunOnce(absl::Seconds(10));
  EXPECT_THAT(seen, ElementsAre(EventLoop::kReadable));
}

TEST_F(PipeTest, AnUnwatchedDescriptorsPendingEventReachesNoHandler) {
  auto loop = Make();
  int runs = 0;
  // Both ends are ready in the same turn; whichever handler runs first
  // unwatches both, so the other's event, already returned by the wait,
  // must reach no handler.
  auto handler = [&](uint32_t) {
    ++runs;
    loop->Unwatch(fds_[0]);
    loop->Unwatch(fds_[1]);
  };
  ASSERT_EQ(write(fds_[1], "x", 1), 1);
  ASSERT_TRUE(loop->Watch(fds_[1], EventLoop::kWritable, handler).ok());
  ASSERT_TRUE(loop->Watch(fds_[0], EventLoop::kReadable, handler).ok());
  loop->RunOnce(absl::Seconds(10));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(loop->watched(), 0u);
  loop->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(runs, 1) << "nothing after Unwatch";
}

TEST_F(PipeTest, WatchingABadDescriptorIsAnError) {
  auto loop = Make();
  const absl::Status s = loop->Watch(-1, EventLoop::kReadable, [](uint32_t) {});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(loop->watched(), 0u);
}

}  // namespace
}  // namespace loop
