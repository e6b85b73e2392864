// The circuit breaker (DESIGN rule 13) in the engine, on a fake clock with
// a scripted upstream: five broken answers in a row open it; while open no
// flight sends anything and every decode answers at once (the snapshot,
// or a retryable failure with the time to the probe); after the cool-down
// exactly one request goes, whose answer closes it (the rate resuming from
// a tenth) or reopens it for longer; a 429, a rejection and a sparse 200
// are answers.
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine_rules_fixture.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot_store.h"
#include "snapshot/test_snapshot.h"
#include "testing/vin_gen.h"

namespace engine {
namespace {

using testing_util::RecordingListener;
using testing_util::ValidVin;
constexpr absl::Duration kCooldown = absl::Seconds(5);

class EngineBreakerTest : public EngineRulesTest {
 protected:
  EngineOptions BreakerOptions() {
    EngineOptions o = Options();
    o.breaker.failures = 5;
    o.breaker.cooldown = kCooldown;
    o.breaker.cooldown_max = absl::Minutes(2);
    o.metrics = &metrics_;
    return o;
  }
  double State() const { return metrics_.upstream_breaker_state.value(); }
  // Five flights whose first attempts vPIC answers 503: the fifth answer
  // opens the breaker. Returns their listeners.
  std::vector<RecordingListener*> OpenIt() {
    std::vector<RecordingListener*> five;
    for (int i = 0; i < 5; ++i) five.push_back(Submit(ValidVin(900000 + i)));
    Turn();
    EXPECT_EQ(Sent(), 5u);
    for (vpic::UpstreamClient::RequestId id = 1; id <= 5; ++id) {
      Answer(id, Status(503));
    }
    EXPECT_EQ(State(), 1) << "open";
    return five;
  }
  static RecordingListener::Event Last(const RecordingListener* l) {
    const auto events = l->events();
    return events.empty() ? RecordingListener::Event() : events.back();
  }

  metrics::ServiceMetrics metrics_;
};

TEST_F(EngineBreakerTest, FiveFailuresOpenItAndLiveOnlyFailsAtOnceWithTheTimeToTheProbe) {
  Make(BreakerOptions());
  const absl::Time opened = Now();
  std::vector<RecordingListener*> five = OpenIt();
  // The four that were waiting to retry left the live path; the fifth,
  // whose answer opened it, was never shown a retry that could not come.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(five[i]->kinds(),
              (std::vector<std::string>{"queued", "retrying", "failed"}));
  }
  EXPECT_EQ(five[4]->kinds(), (std::vector<std::string>{"queued", "failed"}));
  Step(absl::Seconds(1));
  std::vector<RecordingListener*> later;
  for (int i = 0; i < 1000; ++i) later.push_back(Submit(ValidVin(i)));
  Turn();
  EXPECT_EQ(Sent(), 5u) << "nothing is sent while the breaker is open";
  for (const RecordingListener* l : later) {
    ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
    const RecordingListener::Event& e = Last(l);
    EXPECT_EQ(e.at, Now()) << "at once";
    EXPECT_EQ(e.failure.reason, FailureReason::kUpstreamUnavailable);
    EXPECT_TRUE(e.failure.retryable);
    EXPECT_EQ(e.failure.retry_delay, opened + kCooldown - Now());
    EXPECT_NE(e.failure.message.find("vPIC is unreachable since"),
              std::string::npos)
        << e.failure.message;
    ASSERT_TRUE(e.failure.last_error);
    EXPECT_EQ(e.failure.last_error->http_status, 503);
  }
  EXPECT_TRUE(Idle());
  EXPECT_EQ(metrics_.upstream_breaker_transitions[1].value(), 1u);
}

TEST_F(EngineBreakerTest, WhileOpenLiveThenSnapshotAnswersFromTheSnapshotAtOnce) {
  SKIP_WITHOUT_SNAPSHOT();
  snapshot::SnapshotStore store(snapshot::testing::SharedSnapshot());
  EngineOptions o = BreakerOptions();
  o.snapshots = &store;
  // The snapshot's model-year rules need a present-day wall clock.
  clock_.Advance(absl::FromCivil(absl::CivilDay(2026, 12, 3), absl::UTCTimeZone()) -
                 clock_.Now());
  Make(o);
  OpenIt();
  std::vector<RecordingListener*> later;
  for (int i = 0; i < 1000; ++i) later.push_back(Submit(ValidVin(i)));
  Turn();
  EXPECT_EQ(Sent(), 5u);
  for (const RecordingListener* l : later) {
    ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "done"}))
        << Last(l).failure.message;
    const RecordingListener::Event& e = Last(l);
    EXPECT_EQ(e.at, Now());
    EXPECT_EQ(e.result->source, Source::kSnapshot);
    bool noted = false;
    for (const vpic::Note& n : e.result->notes) {
      noted |= n.code == "live_failure" &&
               n.message.find("vPIC is unreachable since") != std::string::npos;
    }
    EXPECT_TRUE(noted) << "a live_failure note says vPIC is unreachable";
  }
}

TEST_F(EngineBreakerTest, AfterTheCooldownExactlyOneRequestGoesAndItsSuccessCloses) {
  EngineOptions o = BreakerOptions();
  o.budget.rate_per_minute = 600;
  o.budget.burst = 10;
  Make(o);
  OpenIt();
  Step(kCooldown - kNs);
  RecordingListener* early = Submit(ValidVin(1));
  Turn();
  EXPECT_EQ(Sent(), 5u) << "not a moment before the cool-down";
  EXPECT_EQ(early->kinds(), (std::vector<std::string>{"queued", "failed"}));
  Step(kNs);
  RecordingListener* probe = Submit(ValidVin(2));
  std::vector<RecordingListener*> meanwhile;
  for (int i = 3; i < 50; ++i) meanwhile.push_back(Submit(ValidVin(i)));
  Turn();
  ASSERT_EQ(Sent(), 6u) << "exactly one probe";
  EXPECT_EQ(State(), 2) << "half open";
  for (const RecordingListener* l : meanwhile) {
    ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
    EXPECT_EQ(Last(l).failure.retry_delay, kCooldown)
        << "while the probe is out: at least one more cool-down";
  }
  AnswerOk(6);
  EXPECT_EQ(probe->kinds(), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(State(), 0) << "closed";
  EXPECT_EQ(metrics_.upstream_breaker_probes[1].value(), 1u);
  // The backlog resumes from a tenth of the rate, not in a burst.
  EXPECT_EQ(engine_->Stats().upstream_rate_per_minute, 60);
  for (int i = 100; i < 110; ++i) Submit(ValidVin(i));
  Turn();
  EXPECT_EQ(Sent(), 6u) << "no burst: the first token comes at 60/min";
  RunAnsweringOk(absl::Seconds(3) + kNs);
  EXPECT_EQ(Sent(), 6u + 3u) << "one a second, climbing slowly";
}

TEST_F(EngineBreakerTest, AFailedProbeReopensWithALongerCooldown) {
  Make(BreakerOptions());
  OpenIt();
  Step(kCooldown);
  RecordingListener* probe = Submit(ValidVin(1));
  Turn();
  ASSERT_EQ(Sent(), 6u);
  Answer(6, Status(503));
  EXPECT_EQ(State(), 1) << "open again";
  EXPECT_EQ(metrics_.upstream_breaker_probes[0].value(), 1u);
  ASSERT_EQ(probe->kinds(), (std::vector<std::string>{"queued", "failed"}));
  const absl::Duration next = Last(probe).failure.retry_delay;
  EXPECT_GE(next, kCooldown);
  EXPECT_LT(next, 3 * kCooldown);
  Step(next - kNs);
  Submit(ValidVin(2));
  Turn();
  EXPECT_EQ(Sent(), 6u) << "not before the longer cool-down";
  Step(kNs);
  Submit(ValidVin(3));
  Turn();
  EXPECT_EQ(Sent(), 7u) << "the next probe";
  AnswerOk(7);
  EXPECT_EQ(State(), 0);
}

TEST_F(EngineBreakerTest, AProbeNobodyWaitsForLetsTheNextFlightProbe) {
  Make(BreakerOptions());
  OpenIt();
  Step(kCooldown);
  RecordingListener* probe = Submit(ValidVin(1));
  Turn();
  ASSERT_EQ(Sent(), 6u);
  Cancel(probe);
  Turn();
  EXPECT_TRUE(upstream_->sent()[5].cancelled);
  EXPECT_EQ(State(), 1);
  Submit(ValidVin(2));
  Turn();
  EXPECT_EQ(Sent(), 7u) << "the next flight probes at once";
  AnswerOk(7);
  EXPECT_EQ(State(), 0);
}

TEST_F(EngineBreakerTest, A429ARejectionAndASparseAnswerNeverOpenIt) {
  EngineOptions o = BreakerOptions();
  o.max_attempts = 1;
  Make(o);
  int n = 0;
  // Four broken answers, then an answer of each kind: the run starts again.
  for (int kind = 0; kind < 3; ++kind) {
    for (int i = 0; i < 4; ++i) Submit(ValidVin(n++));
    Turn();
    for (vpic::UpstreamClient::RequestId id : upstream_->open()) {
      Answer(id, Status(502));
    }
    Submit(ValidVin(n++));
    Turn();
    const vpic::UpstreamClient::RequestId id = upstream_->open().front();
    Answer(id, kind == 0   ? Status(429, "0")
               : kind == 1 ? Status(404)
                           : upstream_->Sparse(id));
    EXPECT_EQ(State(), 0) << kind;
  }
  // Ten 429s in a row are pushback, not an outage.
  for (int i = 0; i < 10; ++i) {
    Submit(ValidVin(n++));
    Step(absl::Seconds(2));  // past each pushback's pause
    for (vpic::UpstreamClient::RequestId id : upstream_->open()) {
      Answer(id, Status(429, "1"));
    }
  }
  EXPECT_EQ(State(), 0);
  EXPECT_EQ(metrics_.upstream_breaker_transitions[1].value(), 0u);
}

TEST_F(EngineBreakerTest, AFailedBatchCountsOnce) {
  EngineOptions o = BreakerOptions();
  o.upstream_batch_max = 50;
  o.max_upstream_concurrency = 1;
  o.max_attempts = 1;
  Make(o);
  int n = 0;
  // Four failed batch requests of ten VINs each: four failures, not 40.
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 10; ++i) Submit(ValidVin(n++));
    Turn();
    ASSERT_EQ(upstream_->open().size(), 1u);
    Answer(upstream_->open().front(), Status(503));
  }
  EXPECT_EQ(State(), 0);
  Submit(ValidVin(n++));
  Turn();
  Answer(upstream_->open().front(), Status(503));
  EXPECT_EQ(State(), 1) << "the fifth request in a row";
}

}  // namespace
}  // namespace engine

namespace engine {
namespace {

// Rule 16: libcurl re-sends a request by itself after a reset on a reused
// connection. The re-send reached vPIC, so it counts: as a request in
// vin_upstream_requests_total, as an attempt toward max_attempts, and
// against the retry budget.
class ResentRequestTest : public EngineRulesTest {
 protected:
  // A member: the engine, destroyed at TearDown, counts into it until then.
  metrics::ServiceMetrics m;
};

TEST_F(ResentRequestTest, ARequestLibcurlSentTwiceIsTwoAttemptsAndTwoRequests) {
  EngineOptions o = Options();
  o.max_attempts = 2;
  o.metrics = &m;
  // No share of first attempts: only the floor, one retry in the budget's
  // 10 s window.
  o.budget.retry_ratio = 0;
  o.budget.retry_min_per_second = 0.1;
  Make(o);
  RecordingListener* l = Submit(ValidVin(1));
  Turn();
  ASSERT_EQ(Sent(), 1u);
  vpic::HttpResult twice = Status(503);
  twice.requests_sent = 2;
  Answer(1, twice);
  // Two attempts reached vPIC: max_attempts is spent, nothing more goes.
  ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
  EXPECT_EQ(l->events().back().failure.attempts, 2);
  EXPECT_EQ(Sent(), 1u);
  using metrics::I;
  EXPECT_EQ(m.upstream_requests[I(metrics::Endpoint::kSingle)]
                               [I(metrics::UpstreamResult::kRetryable)]
                .value(),
            2u);
  EXPECT_EQ(m.upstream_retries.value(), 1u);
  EXPECT_EQ(engine_->Stats().upstream_requests, 2u);
  // The re-send took the window's one retry: another flight's retry now
  // is refused by the budget.
  RecordingListener* other = Submit(ValidVin(2));
  Turn();
  Answer(2, Status(503));
  ASSERT_EQ(other->kinds(), (std::vector<std::string>{"queued", "failed"}));
  EXPECT_NE(other->events().back().failure.message.find("retry budget"),
            std::string::npos)
      << other->events().back().failure.message;
}

}  // namespace
}  // namespace engine
