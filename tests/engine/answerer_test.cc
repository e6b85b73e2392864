// What each waiter is answered, on a fake clock without an engine: QUEUED
// first and once, hits and misses counted, the waiter released.
#include "engine/answerer.h"

#include <atomic>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing_util::RecordingListener;

const coalesce::FlightKey kKey{"1FTMW1T88MFA00001", 0};

class AnswererTest : public testing::Test {
 protected:
  AnswererTest()
      : scheduler_(&clock_), cache_(10, absl::Hours(1)), answerer_(Deps()) {}

  Answerer::Deps Deps() {
    Answerer::Deps d;
    d.clock = &clock_;
    d.cache = &cache_;
    d.metrics = &metrics_;
    d.scheduler = &scheduler_;
    d.admitted = &admitted_;
    return d;
  }

  // A waiter as the engine admits one: counted, with a deadline timer.
  Waiter Admit(RecordingListener* l, SourcePreference source) {
    admitted_.fetch_add(1);
    Waiter w;
    w.listener = l;
    w.source = source;
    w.deadline = clock_.Now() + absl::Seconds(5);
    w.deadline_timer = scheduler_.ScheduleAt(w.deadline, [] {});
    return w;
  }

  retry::FakeClock clock_;
  retry::Scheduler scheduler_;
  ResultCache cache_;
  metrics::ServiceMetrics metrics_;
  std::atomic<size_t> admitted_{0};
  Answerer answerer_;
};

TEST_F(AnswererTest, QueuedIsSentOnceAndBeforeTheTerminalEvent) {
  RecordingListener l;
  Waiter w = Admit(&l, SourcePreference::kLiveOnly);
  Queued coalesced;
  coalesced.coalesced = true;
  answerer_.Queue(w, coalesced);
  answerer_.Queue(w, {});  // already queued: nothing sent
  auto result = std::make_shared<DecodeResult>();
  result->vin = kKey.vin;
  answerer_.Done(w, result);
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "done"));
  EXPECT_TRUE(l.events()[0].queued.coalesced);
}

TEST_F(AnswererTest, AWaiterToldItSharesAFlightIsCountedOnce) {
  RecordingListener joined, alone;
  Waiter j = Admit(&joined, SourcePreference::kLiveOnly);
  Waiter a = Admit(&alone, SourcePreference::kLiveOnly);
  Queued coalesced;
  coalesced.coalesced = true;
  answerer_.Queue(j, coalesced);
  answerer_.Queue(j, coalesced);  // already queued: neither sent nor counted
  answerer_.Queue(a, {});
  EXPECT_EQ(metrics_.coalesced_waiters.value(), 1u);
  answerer_.Fail(j, {FailureReason::kCancelled, "gone", false}, kKey, {});
  answerer_.Fail(a, {FailureReason::kCancelled, "gone", false}, kKey, {});
}

TEST_F(AnswererTest, RetryingComesAfterTheQueued) {
  RecordingListener queued, owed;
  Waiter q = Admit(&queued, SourcePreference::kLiveOnly);
  Waiter o = Admit(&owed, SourcePreference::kLiveOnly);
  answerer_.Queue(q, {});
  const Retrying retrying{
      1, absl::Milliseconds(250), {503, "http", "HTTP 503"}};
  answerer_.Retry(q, retrying);
  answerer_.Retry(o, retrying);
  EXPECT_THAT(queued.kinds(), ElementsAre("queued", "retrying"));
  EXPECT_THAT(owed.kinds(), ElementsAre("queued", "retrying"));
  EXPECT_EQ(queued.events()[1].retrying.next_delay, absl::Milliseconds(250));
  answerer_.Fail(q, {FailureReason::kCancelled, "gone", false}, kKey, {});
  answerer_.Fail(o, {FailureReason::kCancelled, "gone", false}, kKey, {});
}

TEST_F(AnswererTest, AFailureBeforeAnyQueuedSendsTheOwedQueuedFirst) {
  RecordingListener l;
  Waiter w = Admit(&l, SourcePreference::kLiveOnly);
  answerer_.Fail(w, {FailureReason::kDeadlineExceeded, "late", true}, kKey, {});
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(l.events()[1].failure.reason, FailureReason::kDeadlineExceeded);
}

TEST_F(AnswererTest, ATerminalAnswerReleasesTheWaiter) {
  RecordingListener l;
  Waiter w = Admit(&l, SourcePreference::kLiveOnly);
  ASSERT_EQ(scheduler_.pending(), 1u);
  answerer_.Fail(w, {FailureReason::kCancelled, "gone", false}, kKey, {});
  EXPECT_EQ(admitted_.load(), 0u);
  EXPECT_EQ(scheduler_.pending(), 0u) << "its deadline timer is cancelled";
  EXPECT_EQ(w.listener, nullptr) << "never touched again";
}

TEST_F(AnswererTest, WithoutASnapshotLiveThenSnapshotGetsTheLiveFailure) {
  RecordingListener l;
  Waiter w = Admit(&l, SourcePreference::kLiveThenSnapshot);
  answerer_.Fail(w, {FailureReason::kUpstreamUnavailable, "down", true}, kKey,
                 {});
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "failed"));
  EXPECT_FALSE(answerer_.snapshot_loaded());

  RecordingListener only;
  Waiter s = Admit(&only, SourcePreference::kSnapshotOnly);
  answerer_.AnswerFromSnapshot(s, kKey, {});
  EXPECT_THAT(only.kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(only.events()[1].failure.reason, FailureReason::kNoSnapshot);
  EXPECT_EQ(admitted_.load(), 0u);
}

TEST_F(AnswererTest, LookupsCountHitsAndTheEngineCountsMisses) {
  EXPECT_EQ(answerer_.LookupCache(kKey, clock_.Now()), nullptr);
  EXPECT_EQ(metrics_.cache_hits.value(), 0u);
  answerer_.CountMiss();
  DecodeResult r;
  r.vin = kKey.vin;
  cache_.Insert(kKey, r, clock_.Now());
  auto hit = answerer_.LookupCache(kKey, clock_.Now());
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->source, Source::kCache);
  EXPECT_EQ(metrics_.cache_hits.value(), 1u);
  EXPECT_EQ(metrics_.cache_misses.value(), 1u);
  clock_.Advance(absl::Hours(2));  // past the TTL
  EXPECT_EQ(answerer_.LookupCache(kKey, clock_.Now()), nullptr);
  EXPECT_EQ(metrics_.cache_hits.value(), 1u);
}

}  // namespace
}  // namespace engine
