// The upstream budget in the engine (DESIGN rules 9-12) on a fake clock
// against a scripted upstream: the rate cap, pushback, the retry budget and
// batching, with every time exact.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manual_engine_fixture.h"
#include "testing/recording_listener.h"
#include "testing/scripted_upstream.h"
#include "testing/vin_gen.h"
#include "vpic/parse.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing_util::RecordingListener;
using testing_util::ScriptedUpstream;
using testing_util::ValidVin;

class UpstreamBudgetTest : public ManualEngineTest {
 protected:
  static EngineOptions Options(double per_minute, double burst,
                               int batch_max) {
    EngineOptions o;
    o.budget.rate_per_minute = per_minute;
    o.budget.burst = burst;
    o.upstream_batch_max = batch_max;
    o.max_upstream_concurrency = 1000;
    // This rule alone: the circuit breaker (rule 13, its own tests) would
    // open after five failures in a row and answer the rest at once.
    o.breaker.failures = 0;
    // Different flights draw different jitter: 0.05, 0.15, ..., 0.95, ...
    o.uniform = Cycling();
    return o;
  }
};

const absl::Duration kS = absl::Seconds(1);

TEST_F(UpstreamBudgetTest, RequestsWaitForTokensInOrderAndSayHowLong) {
  Make(Options(60, 2, 1));
  std::vector<RecordingListener*> ls;
  for (int i = 0; i < 5; ++i) ls.push_back(Submit(ValidVin(i)));
  RunAnsweringOk(absl::Seconds(4));
  EXPECT_THAT(SendTimes(),
              ElementsAre(absl::ZeroDuration(), absl::ZeroDuration(), kS, 2 * kS,
                          3 * kS))
      << "two at once (the burst), then one a second";
  std::vector<std::string> want;
  for (int i = 0; i < 5; ++i) want.push_back(ValidVin(i));
  EXPECT_EQ(SentVins(), want) << "first come, first served";
  for (int i = 0; i < 5; ++i) {
    const auto events = ls[i]->events();
    ASSERT_EQ(events.back().kind, "done") << i;
    const Queued& q = events.front().queued;
    // The third waits 1 s, the fourth 2 s, the fifth 3 s: "longer than a
    // moment".
    EXPECT_EQ(q.waiting_for_rate, i >= 2) << i;
    if (i >= 2) EXPECT_EQ(q.estimated_wait, (i - 1) * kS) << i;
  }
}

TEST_F(UpstreamBudgetTest, CacheHitsAndJoinersTakeNoToken) {
  Make(Options(60, 1, 1));
  const std::string a = ValidVin(1), b = ValidVin(2);
  RecordingListener* first = Submit(a);
  RecordingListener* joiner = Submit(a);
  RunAnsweringOk(absl::Milliseconds(500));
  ASSERT_EQ(first->events().back().kind, "done");
  ASSERT_EQ(joiner->events().back().kind, "done");
  EXPECT_TRUE(joiner->events().front().coalesced);
  for (int i = 0; i < 20; ++i) {
    // A hit is answered inside Submit, on the caller's thread.
    ASSERT_THAT(Submit(a)->kinds(), ElementsAre("queued", "done"));
  }
  RecordingListener* other = Submit(b);
  RunAnsweringOk(absl::Seconds(1));
  for (const auto& l : listeners_) ASSERT_EQ(l->events().back().kind, "done");
  EXPECT_THAT(SendTimes(), ElementsAre(absl::ZeroDuration(), kS))
      << "b took the token due at 1 s: the joiner and 20 cache hits took none";
  EXPECT_EQ(other->events().back().result->source, Source::kVpic);
}

TEST_F(UpstreamBudgetTest, A429PausesEveryFlightThenTheyResumeThroughTheBucket) {
  Make(Options(600, 10, 1));
  const std::string a = ValidVin(1), b = ValidVin(2);
  Submit(a);
  Submit(b);
  Turn();
  ASSERT_EQ(upstream_->sent().size(), 2u);
  upstream_->Reply(1, ScriptedUpstream::Status(429, "2"));
  Turn();
  EXPECT_EQ(engine_->Stats().upstream_rate_per_minute, 300) << "halved";
  EXPECT_EQ(engine_->Stats().pushbacks, 1u);
  // b's request was already in flight: it may finish. New flights wait.
  upstream_->Reply(2, upstream_->Ok(2));
  for (int i = 3; i < 8; ++i) Submit(ValidVin(i));
  RunAnsweringOk(absl::Seconds(5));
  for (const auto& l : listeners_) ASSERT_EQ(l->events().back().kind, "done");
  const std::vector<absl::Duration> at = SendTimes();
  ASSERT_EQ(at.size(), 8u);  // a twice, b, and five more
  for (size_t i = 2; i < at.size(); ++i) {
    EXPECT_GE(at[i], 2 * kS) << "request " << i << " started during the pause";
  }
  // After the pause, one request per 200 ms (300/min), not all at once.
  for (size_t i = 3; i < at.size(); ++i) {
    EXPECT_GE(at[i] - at[i - 1], absl::Milliseconds(190)) << i;
  }

  EXPECT_GT(engine_->Stats().upstream_rate_per_minute, 300)
      << "successes raise the rate again";
  EXPECT_LT(engine_->Stats().upstream_rate_per_minute, 600);
}

TEST_F(UpstreamBudgetTest, ARetryBudgetKeepsAnOutageNearWhatCallersAsked) {
  EngineOptions o = Options(0, 10, 1);
  o.max_attempts = 4;
  Make(o);
  constexpr int kFlights = 200;
  for (int i = 0; i < kFlights; ++i) Submit(ValidVin(i), absl::Seconds(60));
  const absl::Time start = clock_.Now();
  Run(absl::Seconds(20), [](vpic::UpstreamClient::RequestId) {
    return ScriptedUpstream::Status(503);
  });
  const double seconds = absl::ToDoubleSeconds(clock_.Now() - start);
  const size_t requests = upstream_->sent().size();
  EXPECT_LE(requests, 1.1 * kFlights + 1 * seconds);
  EXPECT_GE(requests, kFlights + 15u) << "the budget's share is used";
  int refused = 0;
  for (const auto& l : listeners_) {
    const auto events = l->events();
    ASSERT_EQ(events.back().kind, "failed");
    const Failure& f = events.back().failure;
    EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
    EXPECT_TRUE(f.retryable);
    EXPECT_GT(f.retry_delay, absl::ZeroDuration());
    EXPECT_EQ(f.last_error->http_status, 503);
    if (f.message.find("retry budget") != std::string::npos) ++refused;
  }
  EXPECT_GE(refused, kFlights - 25) << "most flights are refused a retry";
  EXPECT_EQ(engine_->Stats().retries_refused, static_cast<uint64_t>(refused));
}

TEST_F(UpstreamBudgetTest, AMinuteOfOutageStaysWithinATenthMorePlusTheFloor) {
  EngineOptions o = Options(0, 10, 1);
  o.max_attempts = 4;
  Make(o);
  // 20 new flights a second for a minute, while vPIC answers 503 to all.
  int flights = 0;
  for (int second = 0; second < 60; ++second) {
    for (int i = 0; i < 20; ++i) Submit(ValidVin(flights++), absl::Seconds(30));
    Run(kS, [](vpic::UpstreamClient::RequestId) {
      return ScriptedUpstream::Status(503);
    });
  }
  Run(absl::Seconds(30), [](vpic::UpstreamClient::RequestId) {
    return ScriptedUpstream::Status(503);
  });
  for (const auto& l : listeners_) ASSERT_EQ(l->events().back().kind, "failed");
  const size_t requests = upstream_->sent().size();
  EXPECT_LE(requests, 1.1 * flights + 1 /*per second*/ * 60);
  EXPECT_GE(requests, 1.1 * flights) << "the share is used";
}

TEST_F(UpstreamBudgetTest, ABacklogTravelsInBatchesAndALoneFlightAlone) {
  Make(Options(60, 1, 50));
  const std::string lone = ValidVin(999);
  Submit(lone);
  Turn();
  ASSERT_EQ(upstream_->sent().size(), 1u);
  EXPECT_FALSE(upstream_->sent()[0].batch) << "no waiting for company";
  for (int i = 0; i < 120; ++i) Submit(ValidVin(i));
  RunAnsweringOk(absl::Seconds(4));
  const auto& sent = upstream_->sent();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_THAT(SendTimes(), ElementsAre(absl::ZeroDuration(), kS, 2 * kS, 3 * kS));
  EXPECT_EQ(sent[1].entries.size(), 50u);
  EXPECT_EQ(sent[2].entries.size(), 50u);
  EXPECT_EQ(sent[3].entries.size(), 20u);
  // Each flight got what the single endpoint would have given it.
  auto answers = fakevpic::Answers::Load("");
  for (int i = 0; i < 120; ++i) {
    const auto events = listeners_[1 + i]->events();
    ASSERT_EQ(events.back().kind, "done") << i;
    const DecodeResult& got = *events.back().result;
    auto single = vpic::ParseDecodeVinValues(answers->Generated(ValidVin(i), 0));
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(got.vehicle.attributes, single->vehicle.attributes) << i;
    EXPECT_EQ(got.notes, single->notes) << i;
    EXPECT_EQ(got.attempts, 1);
  }
  EXPECT_EQ(engine_->Stats().upstream_batch_requests, 3u);
  EXPECT_EQ(engine_->Stats().upstream_vins, 121u);
}

TEST_F(UpstreamBudgetTest, AFailedBatchIsAFailedAttemptOfEachFlightWithItsOwnDelay) {
  Make(Options(0, 10, 50));
  for (int i = 0; i < 10; ++i) Submit(ValidVin(i));
  Turn();
  ASSERT_EQ(upstream_->sent().size(), 1u);
  upstream_->Reply(1, ScriptedUpstream::Status(503));
  Turn();
  std::set<absl::Duration> delays;
  for (const auto& l : listeners_) {
    const auto events = l->events();
    ASSERT_EQ(events.size(), 2u);
    ASSERT_EQ(events[1].kind, "retrying");
    EXPECT_EQ(events[1].retrying.attempt, 1);
    EXPECT_EQ(events[1].retrying.error.http_status, 503);
    delays.insert(events[1].retrying.next_delay);
  }
  EXPECT_EQ(delays.size(), 10u) << "each flight draws its own jitter";
  RunAnsweringOk(absl::Seconds(1));
  for (const auto& l : listeners_) {
    ASSERT_EQ(l->events().back().kind, "done");
    EXPECT_EQ(l->events().back().result->attempts, 2);
  }
  EXPECT_GT(upstream_->sent().size(), 2u)
      << "the retries, apart in time, no longer travel together";
}

TEST_F(UpstreamBudgetTest, AVinMissingFromABatchAnswerRetriesAlone) {
  Make(Options(0, 10, 50));
  for (int i = 0; i < 5; ++i) Submit(ValidVin(i));
  Turn();
  ASSERT_EQ(upstream_->sent().size(), 1u);
  upstream_->Reply(1, upstream_->Ok(1, {ValidVin(3)}));
  Turn();
  for (int i = 0; i < 5; ++i) {
    const auto events = listeners_[i]->events();
    if (i == 3) {
      ASSERT_EQ(events.back().kind, "retrying");
      EXPECT_EQ(events.back().retrying.error.kind, "bad_response");
    } else {
      ASSERT_EQ(events.back().kind, "done") << i;
      EXPECT_EQ(events.back().result->attempts, 1);
    }
  }
  RunAnsweringOk(absl::Seconds(1));
  ASSERT_EQ(upstream_->sent().size(), 2u);
  EXPECT_FALSE(upstream_->sent()[1].batch);
  EXPECT_EQ(upstream_->sent()[1].entries[0].vin, ValidVin(3));
  EXPECT_EQ(listeners_[3]->events().back().kind, "done");
  EXPECT_EQ(listeners_[3]->events().back().result->attempts, 2);
}

TEST_F(UpstreamBudgetTest, AWaiterWhoseDeadlineComesBeforeItsTokenLeavesAtOnce) {
  Make(Options(60, 1, 1));
  Submit(ValidVin(1));
  RecordingListener* hurried = Submit(ValidVin(2), absl::Milliseconds(500));
  RecordingListener* patient = Submit(ValidVin(3), absl::Seconds(5));
  Turn();
  const auto events = hurried->events();
  ASSERT_EQ(events.size(), 2u) << "QUEUED, then FAILED in the same turn";
  EXPECT_TRUE(events[0].queued.waiting_for_rate);
  const Failure& f = events[1].failure;
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.retry_delay, kS) << "the estimated wait";
  EXPECT_THAT(f.message, HasSubstr("--upstream_rate"));
  RunAnsweringOk(absl::Seconds(3));
  EXPECT_EQ(patient->events().back().kind, "done");
  EXPECT_EQ(upstream_->sent().size(), 2u) << "never a request for the hurried one";
}

TEST_F(UpstreamBudgetTest, ALateJoinerOfARetryingFlightGetsItsLastRetrying) {
  EngineOptions o = Options(0, 1, 1);
  o.retry_base = absl::Seconds(1);
  o.retry_cap = absl::Seconds(4);
  Make(o);
  const std::string vin = ValidVin(7);
  RecordingListener* first = Submit(vin);
  Turn();
  upstream_->Reply(1, ScriptedUpstream::Status(503));
  Turn();
  ASSERT_EQ(first->kinds(), (std::vector<std::string>{"queued", "retrying"}));
  const Retrying r = first->events()[1].retrying;
  clock_.Advance(absl::Milliseconds(200));
  // A joiner with time to wait: QUEUED (coalesced), then the flight's last
  // RETRYING, as the first caller had it.
  RecordingListener* patient = Submit(vin);
  // One whose deadline comes before the wake-up: the same two, then FAILED
  // at once with the time left to the wake-up.
  RecordingListener* hurried = Submit(vin, r.next_delay - absl::Milliseconds(400));
  Turn();
  ASSERT_EQ(patient->kinds(), (std::vector<std::string>{"queued", "retrying"}));
  EXPECT_TRUE(patient->events()[0].coalesced);
  EXPECT_EQ(patient->events()[1].retrying.attempt, r.attempt);
  EXPECT_EQ(patient->events()[1].retrying.next_delay, r.next_delay);
  ASSERT_EQ(hurried->kinds(),
            (std::vector<std::string>{"queued", "retrying", "failed"}));
  const Failure f = hurried->events()[2].failure;
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.retry_delay, r.next_delay - absl::Milliseconds(200));
  RunAnsweringOk(absl::Seconds(5));
  EXPECT_EQ(first->kinds().back(), "done");
  EXPECT_EQ(patient->kinds().back(), "done");
  EXPECT_EQ(upstream_->sent().size(), 2u) << "one flight, one retry";
}

TEST_F(UpstreamBudgetTest, APauseSendsAwayWaitersItWouldMakeLate) {
  Make(Options(600, 1, 1));
  Submit(ValidVin(1));
  RecordingListener* queued = Submit(ValidVin(2), absl::Seconds(3));
  Turn();
  ASSERT_EQ(queued->events().size(), 1u) << "it can be served in time";
  upstream_->Reply(1, ScriptedUpstream::Status(429, "5"));
  Turn();
  const auto events = queued->events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].failure.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_GE(events[1].failure.retry_delay, absl::Seconds(5));
  EXPECT_THAT(events[1].failure.message, HasSubstr("pause"));
}

}  // namespace
}  // namespace engine
