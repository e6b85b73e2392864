// The engine's rules on a fake clock against a scripted upstream, as a
// caller sees them: one flight per VIN (DESIGN rule 5), joining and leaving
// it, and the cache of finished decodes (rule 8). Over real HTTP:
// engine_sharing_test.cc.
#include <string>
#include <vector>

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
using testing_util::RecordingListener;
using testing_util::ValidVin;

// ---- Rule 5: one flight per VIN; rule 8: the cache ----

// Callers who come before the first attempt, during it, and during the
// retry wait are one flight: one request per attempt, the same result.
TEST_F(EngineRulesTest, CallersOfOneVinShareOneFlightAndOneResult) {
  Make(Options());
  const std::string vin = ValidVin(1);
  std::vector<RecordingListener*> ls;
  for (int i = 0; i < 10; ++i) ls.push_back(Submit(vin));
  Turn();
  ASSERT_EQ(Sent(), 1u);
  for (int i = 0; i < 10; ++i) ls.push_back(Submit(vin));  // in its attempt
  Turn();
  Answer(1, Status(503));
  for (int i = 0; i < 10; ++i) ls.push_back(Submit(vin));  // in its retry wait
  Turn();
  EXPECT_EQ(Sent(), 1u);
  RunAnsweringOk(kCap);
  EXPECT_EQ(Sent(), 2u) << "one request per attempt, however many callers";
  EXPECT_EQ(SentVins(), (std::vector<std::string>{vin, vin}));
  const auto first = ls[0]->events().back().result;
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->source, Source::kVpic);
  EXPECT_EQ(first->attempts, 2);
  for (size_t i = 0; i < ls.size(); ++i) {
    SCOPED_TRACE(i);
    // Joiners in the retry wait get the flight's last RETRYING.
    ASSERT_THAT(ls[i]->kinds(), ElementsAre("queued", "retrying", "done"));
    EXPECT_EQ(ls[i]->events()[0].coalesced, i > 0);
    EXPECT_EQ(ls[i]->events()[1].retrying.attempt, 1);
    EXPECT_EQ(ls[i]->events().back().result, first) << "the same result";
  }
  EXPECT_TRUE(Idle());
}

TEST_F(EngineRulesTest, ALaterCallerIsAnsweredFromTheCacheInsideSubmit) {
  Make(Options());
  const std::string vin = ValidVin(1);
  RecordingListener* first = Submit(vin);
  Turn();
  AnswerOk(1);
  ASSERT_EQ(first->kinds().back(), "done");
  const auto live = first->events().back().result;
  clock_.Advance(absl::Minutes(5));
  RecordingListener* later = Submit(vin);
  // Before Submit returned, without a turn of the loop.
  ASSERT_THAT(later->kinds(), ElementsAre("queued", "done"));
  const auto cached = later->events().back().result;
  EXPECT_EQ(cached->source, Source::kCache);
  EXPECT_EQ(cached->attempts, 0);
  EXPECT_EQ(cached->decode_time, live->decode_time) << "the original time";
  EXPECT_EQ(cached->vehicle.attributes, live->vehicle.attributes);
  RunAnsweringOk(kCap);
  EXPECT_EQ(Sent(), 1u);
}

TEST_F(EngineRulesTest, FailuresAreNotCached) {
  EngineOptions o = Options();
  o.max_attempts = 1;
  Make(o);
  // Rejected (not retryable), and out of attempts (retryable).
  for (int status : {404, 503}) {
    SCOPED_TRACE(status);
    const std::string vin = ValidVin(status);
    RecordingListener* failed = Submit(vin);
    Turn();
    Answer(Sent(), Status(status));
    ASSERT_THAT(failed->kinds(), ElementsAre("queued", "failed"));
    RecordingListener* again = Submit(vin);
    EXPECT_TRUE(again->events().empty()) << "no cache answer";
    Turn();
    ASSERT_EQ(upstream_->sent().back().entries[0].vin, vin) << "asked again";
    AnswerOk(Sent());
    ASSERT_EQ(again->kinds().back(), "done");
    EXPECT_EQ(again->events().back().result->source, Source::kVpic);
  }
  EXPECT_EQ(Sent(), 4u);
}

TEST_F(EngineRulesTest, TheLastWaiterCancellingInAnAttemptStopsTheFlight) {
  Make(Options());
  RecordingListener* l = Submit(ValidVin(1));
  Turn();
  ASSERT_EQ(Sent(), 1u);
  Cancel(l);
  Turn();
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(l->events()[1].failure.reason, FailureReason::kCancelled);
  EXPECT_TRUE(upstream_->sent()[0].cancelled) << "its request is aborted";
  EXPECT_TRUE(Idle());
  RunAnsweringOk(10 * kCap);
  EXPECT_EQ(Sent(), 1u) << "no request after the last waiter left";
}

TEST_F(EngineRulesTest, TheLastWaiterCancellingInTheRetryWaitStopsTheFlight) {
  Make(Options());
  RecordingListener* l = Submit(ValidVin(1));
  Turn();
  Answer(1, Status(503));
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "retrying"));
  Cancel(l);
  Turn();
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "retrying", "failed"));
  EXPECT_EQ(l->events()[2].failure.reason, FailureReason::kCancelled);
  EXPECT_TRUE(Idle()) << "the retry's wake-up is cancelled";
  RunAnsweringOk(10 * kCap);
  EXPECT_EQ(Sent(), 1u) << "no retry after the last waiter left";
}

TEST_F(EngineRulesTest, OtherWaitersKeepTheFlightWhenOneCancels) {
  Make(Options());
  const std::string vin = ValidVin(1);
  RecordingListener* leaving = Submit(vin);
  RecordingListener* staying = Submit(vin);
  Turn();
  Cancel(leaving);  // in the attempt
  Turn();
  ASSERT_THAT(leaving->kinds(), ElementsAre("queued", "failed"));
  EXPECT_EQ(leaving->events()[1].failure.reason, FailureReason::kCancelled);
  EXPECT_FALSE(upstream_->sent()[0].cancelled);
  Answer(1, Status(503));
  RecordingListener* joiner = Submit(vin);
  Turn();
  Cancel(joiner);  // in the retry wait
  Turn();
  ASSERT_THAT(joiner->kinds(), ElementsAre("queued", "retrying", "failed"));
  RunAnsweringOk(kCap);
  ASSERT_THAT(staying->kinds(), ElementsAre("queued", "retrying", "done"));
  EXPECT_EQ(staying->events().back().result->attempts, 2);
  EXPECT_EQ(Sent(), 2u);
  EXPECT_THAT(leaving->kinds(), ElementsAre("queued", "failed"))
      << "nothing after its terminal event";
}

}  // namespace
}  // namespace engine
