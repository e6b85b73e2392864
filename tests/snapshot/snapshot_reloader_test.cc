// SnapshotReloader with loads of the test's making: requests during a
// reload fold into one more; a load past the timeout is abandoned whether
// or not it notices; Stop() cancels and never waits on a load for long.
#include "snapshot/snapshot_reloader.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace snapshot {
namespace {

using Loaded = SnapshotReloader::Loaded;
using Requested = SnapshotReloader::Requested;

constexpr absl::Duration kWait = absl::Seconds(30);  // for what must happen

// The loads' side, shared with their threads (which may outlive a test when
// abandoned). Load number n returns NOT_FOUND "load n"; a load may wait for
// the gate, ignoring its limit, or honour its limit and end with what the
// limit says.
struct Loads {
  enum Mode { kAtOnce, kIgnoreLimitUntilGate, kUntilLimit };
  explicit Loads(Mode m) : mode(m) {}

  Loaded Run(const LoadLimit& limit) {
    int n;
    {
      absl::MutexLock lock(&mu);
      n = ++started;
      ++running;
      max_running = std::max(max_running, running);
    }
    absl::Status result = absl::NotFoundError(absl::StrCat("load ", n));
    if (mode == kIgnoreLimitUntilGate) gate.WaitForNotification();
    if (mode == kUntilLimit) {
      // A loader checks its limit as it goes.
      while (limit.Check().ok()) absl::SleepFor(absl::Milliseconds(1));
      result = limit.Check();
    }
    absl::MutexLock lock(&mu);
    --running;
    stopped_by_limit += limit.Check().ok() ? 0 : 1;
    return result;
  }

  // Waits (at most kWait) until `n` loads have started / none runs.
  bool AwaitStarted(int n) {
    absl::MutexLock lock(&mu);
    auto ok = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return started >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&ok), kWait);
  }
  bool AwaitNoneRunning() {
    absl::MutexLock lock(&mu);
    auto ok = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return running == 0; };
    return mu.AwaitWithTimeout(absl::Condition(&ok), kWait);
  }

  const Mode mode;
  absl::Notification gate;
  absl::Mutex mu;
  int started ABSL_GUARDED_BY(mu) = 0;
  int running ABSL_GUARDED_BY(mu) = 0;
  int max_running ABSL_GUARDED_BY(mu) = 0;
  // Loads that found their limit passed or cancelled when they ended.
  int stopped_by_limit ABSL_GUARDED_BY(mu) = 0;
};

// What `done` was called with, in order.
class Outcomes {
 public:
  SnapshotReloader::DoneFn callback() {
    return [this](Loaded loaded) {
      absl::MutexLock lock(&mu_);
      statuses_.push_back(loaded.status());
    };
  }
  // The first `n` outcomes, once there are (at most kWait).
  std::vector<absl::Status> Await(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return statuses_.size() >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kWait);
    return statuses_;
  }
  std::vector<absl::Status> all() {
    absl::MutexLock lock(&mu_);
    return statuses_;
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Status> statuses_ ABSL_GUARDED_BY(mu_);
};

// Loads of one mode behind a reloader with `timeout`.
struct Reloading {
  Reloading(Loads::Mode mode, absl::Duration timeout)
      : loads(std::make_shared<Loads>(mode)),
        reloader([l = loads](const LoadLimit& limit) { return l->Run(limit); },
                 outcomes.callback(), timeout) {}

  // Asks for the first reload and returns its outcome.
  absl::Status FirstOutcome() {
    EXPECT_EQ(reloader.Request(), Requested::kStarted);
    const std::vector<absl::Status> done = outcomes.Await(1);
    return done.empty() ? absl::UnknownError("no outcome") : done[0];
  }

  std::shared_ptr<Loads> loads;
  Outcomes outcomes;
  SnapshotReloader reloader;
};

TEST(SnapshotReloader, RequestsDuringAReloadFoldIntoOneMore) {
  Reloading r(Loads::kIgnoreLimitUntilGate, absl::Minutes(10));
  EXPECT_EQ(r.reloader.Request(), Requested::kStarted);
  EXPECT_EQ(r.reloader.Request(), Requested::kFolded);  // the same, pending
  ASSERT_TRUE(r.loads->AwaitStarted(1));
  EXPECT_EQ(r.reloader.Request(), Requested::kFolded);  // one more after it
  EXPECT_EQ(r.reloader.Request(), Requested::kFolded);  // the same one more
  r.loads->gate.Notify();
  const std::vector<absl::Status> done = r.outcomes.Await(2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].message(), "load 1");
  EXPECT_EQ(done[1].message(), "load 2");
  r.reloader.Stop();
  EXPECT_EQ(r.outcomes.all().size(), 2u);
  absl::MutexLock lock(&r.loads->mu);
  EXPECT_EQ(r.loads->started, 2);
  EXPECT_EQ(r.loads->max_running, 1);
}

TEST(SnapshotReloader, ALoadThatHonoursItsLimitEndsAtTheTimeout) {
  Reloading r(Loads::kUntilLimit, absl::Milliseconds(100));
  const absl::Status outcome = r.FirstOutcome();
  EXPECT_EQ(outcome.code(), absl::StatusCode::kDeadlineExceeded) << outcome;
  r.reloader.Stop();
  absl::MutexLock lock(&r.loads->mu);
  EXPECT_EQ(r.loads->stopped_by_limit, 1);
  EXPECT_EQ(r.loads->running, 0);
}

// The reloader does not wait for a load that does not notice: it says so
// at the deadline, drops the late result, and the next reload starts once
// the abandoned load has ended.
TEST(SnapshotReloader, ALoadThatIgnoresItsLimitIsAbandonedAtTheTimeout) {
  Reloading r(Loads::kIgnoreLimitUntilGate, absl::Milliseconds(100));
  const absl::Status outcome = r.FirstOutcome();
  EXPECT_EQ(outcome.code(), absl::StatusCode::kDeadlineExceeded) << outcome;
  EXPECT_TRUE(absl::StrContains(outcome.message(), "100ms")) << outcome;
  EXPECT_EQ(r.reloader.Request(), Requested::kStarted);
  r.loads->gate.Notify();  // load 1 ends late; load 2 runs after it
  const std::vector<absl::Status> done = r.outcomes.Await(2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].message(), "load 2");
  r.reloader.Stop();
  EXPECT_EQ(r.outcomes.all().size(), 2u);  // load 1's own result was dropped
  absl::MutexLock lock(&r.loads->mu);
  EXPECT_EQ(r.loads->stopped_by_limit, 1);  // load 1's limit was cancelled
  EXPECT_EQ(r.loads->max_running, 1);
}

TEST(SnapshotReloader, StopCancelsTheReloadInProgress) {
  Reloading r(Loads::kUntilLimit, absl::Hours(1));
  ASSERT_EQ(r.reloader.Request(), Requested::kStarted);
  ASSERT_TRUE(r.loads->AwaitStarted(1));
  EXPECT_EQ(r.reloader.Request(), Requested::kFolded);  // forgotten by Stop
  r.reloader.Stop();
  const std::vector<absl::Status> done = r.outcomes.all();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), absl::StatusCode::kCancelled) << done[0];
  EXPECT_EQ(r.reloader.Request(), Requested::kStopped);
  absl::MutexLock lock(&r.loads->mu);
  EXPECT_EQ(r.loads->started, 1);
  EXPECT_EQ(r.loads->running, 0);  // Stop waited for the cancelled load
}

TEST(SnapshotReloader, StopWaitsForALoadThatIgnoresCancellationOnlyBriefly) {
  auto r =
      std::make_unique<Reloading>(Loads::kIgnoreLimitUntilGate, absl::Hours(1));
  const std::shared_ptr<Loads> loads = r->loads;
  ASSERT_EQ(r->reloader.Request(), Requested::kStarted);
  ASSERT_TRUE(loads->AwaitStarted(1));
  // Stop returns while the load still runs: it is not joined.
  r->reloader.Stop(absl::Milliseconds(50));
  const std::vector<absl::Status> done = r->outcomes.all();
  r.reset();
  {
    absl::MutexLock lock(&loads->mu);
    EXPECT_EQ(loads->running, 1);
  }
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), absl::StatusCode::kCancelled) << done[0];
  loads->gate.Notify();  // it ends after the reloader is gone
  EXPECT_TRUE(loads->AwaitNoneRunning());
}

}  // namespace
}  // namespace snapshot
