// The engine's rules as a caller (a DecodeListener) sees them, on a fake
// clock against a scripted upstream, every time exact: here decorrelated
// jitter and Retry-After (DESIGN rule 3); one flight per VIN and the cache
// in engine_rules_sharing_test.cc, deadlines and the stop in
// engine_rules_leaving_test.cc. The fixture (engine_rules_fixture.h) checks
// after each test that every caller had exactly one terminal event. One
// test of each rule over real HTTP stays in engine_test.cc,
// engine_sharing_test.cc and engine_leaving_test.cc.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
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
using testing::HasSubstr;
using testing_util::RecordingListener;
using testing_util::ValidVin;
using RequestId = vpic::UpstreamClient::RequestId;

// ---- Rule 3: decorrelated jitter, Retry-After ----

// Each retry waits min(cap, base + U * (3 * prev - base)), prev being the
// delay waited before the attempt that failed (base at first), and starts
// exactly when RETRYING said: not a nanosecond before.
TEST_F(EngineRulesTest, EachRetryWaitsADecorrelatedJitterAndStartsThen) {
  constexpr int kAttempts = 8;
  EngineOptions o = Options();
  o.max_attempts = kAttempts;
  Make(o);
  RecordingListener* l = Submit(ValidVin(1));
  Turn();
  ASSERT_EQ(Sent(), 1u);
  absl::Duration prev = kBase;
  for (int attempt = 1; attempt < kAttempts; ++attempt) {
    SCOPED_TRACE(attempt);
    const absl::Time failed_at = Now();
    Answer(attempt, Status(503));
    const auto events = l->events();
    ASSERT_EQ(events.size(), 1u + attempt);
    ASSERT_EQ(events.back().kind, "retrying");
    const Retrying r = events.back().retrying;
    EXPECT_EQ(events.back().at, failed_at);
    EXPECT_EQ(r.attempt, attempt);
    EXPECT_EQ(r.error.http_status, 503);
    EXPECT_GE(r.next_delay, kBase);
    EXPECT_LE(r.next_delay, std::min(kCap, 3 * prev));
    Step(r.next_delay - kNs);
    ASSERT_EQ(Sent(), static_cast<size_t>(attempt)) << "the retry came early";
    Step(kNs);
    ASSERT_EQ(Sent(), static_cast<size_t>(attempt) + 1);
    EXPECT_EQ(upstream_->sent().back().at, failed_at + r.next_delay);
    prev = r.next_delay;
  }
  AnswerOk(kAttempts);
  ASSERT_EQ(l->kinds().back(), "done");
  EXPECT_EQ(l->events().back().result->attempts, kAttempts);
  EXPECT_TRUE(Idle());
}

// Flights failing in the same instant draw their own delays (the engine's
// randomness, not a fixed delay), each first retry within [base, 3*base),
// and each retry starts at its own wake-up.
TEST_F(EngineRulesTest, FlightsFailingTogetherRetryAtTheirOwnRandomTimes) {
  constexpr int kFlights = 50;
  Make(Options());
  std::vector<RecordingListener*> ls;
  for (int i = 0; i < kFlights; ++i) ls.push_back(Submit(ValidVin(i)));
  Turn();
  ASSERT_EQ(Sent(), static_cast<size_t>(kFlights));
  const absl::Time failed_at = Now();
  upstream_->ReplyAll([](RequestId) { return Status(503); });
  Turn();
  std::vector<std::pair<absl::Time, std::string>> wakeups;
  std::set<absl::Duration> delays;
  for (int i = 0; i < kFlights; ++i) {
    const auto events = ls[i]->events();
    ASSERT_EQ(events.size(), 2u) << i;
    ASSERT_EQ(events[1].kind, "retrying") << i;
    const absl::Duration d = events[1].retrying.next_delay;
    EXPECT_GE(d, kBase) << i;
    EXPECT_LT(d, 3 * kBase) << i;
    wakeups.emplace_back(failed_at + d, ValidVin(i));
    delays.insert(d);
  }
  EXPECT_GT(delays.size(), static_cast<size_t>(kFlights) / 2)
      << "the delays are drawn at random, not all the same";
  // When `vin` was retried (its second request); InfinitePast if not yet.
  auto retried_at = [this](const std::string& vin) {
    const auto& sent = upstream_->sent();
    for (size_t k = kFlights; k < sent.size(); ++k) {
      if (sent[k].entries[0].vin == vin) return sent[k].at;
    }
    return absl::InfinitePast();
  };
  std::sort(wakeups.begin(), wakeups.end());
  for (const auto& [at, vin] : wakeups) {
    if (at - kNs > Now()) {
      Step(at - kNs - Now());
      EXPECT_EQ(retried_at(vin), absl::InfinitePast())
          << vin << " was retried before its wake-up";
    }
    Step(at - Now());
    EXPECT_EQ(retried_at(vin), at) << vin << " was not retried at its wake-up";
  }
  ASSERT_EQ(Sent(), 2u * kFlights);
  upstream_->ReplyAll([this](RequestId id) { return upstream_->Ok(id); });
  Turn();
  for (const RecordingListener* l : ls) {
    ASSERT_EQ(l->kinds().back(), "done");
    EXPECT_EQ(l->events().back().result->attempts, 2);
  }
}

TEST_F(EngineRulesTest, RetriesExhaustedFailRetryableWithTheNextDelay) {
  EngineOptions o = Options();
  o.max_attempts = 3;
  Make(o);
  RecordingListener* l = Submit(ValidVin(1));
  Run(absl::Seconds(5), [](RequestId) { return Status(503); });
  ASSERT_THAT(l->kinds(),
              ElementsAre("queued", "retrying", "retrying", "failed"));
  const auto events = l->events();
  const Failure& f = events.back().failure;
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.attempts, 3);
  ASSERT_TRUE(f.last_error.has_value());
  EXPECT_EQ(f.last_error->http_status, 503);
  EXPECT_THAT(f.message, HasSubstr("after 3 attempts"));
  // The delay the next retry would have had.
  EXPECT_GE(f.retry_delay, kBase);
  EXPECT_LE(f.retry_delay, std::min(kCap, 3 * events[2].retrying.next_delay));
  EXPECT_EQ(Sent(), 3u);
  EXPECT_TRUE(Idle()) << "no retry is left scheduled";
}

// A Retry-After (on a 429, a 503, or a 200 maintenance page) is a floor:
// the delay is max(jittered, Retry-After), the retry waits it out, and the
// delay waited, floor included, is the next retry's `prev`.
TEST_F(EngineRulesTest, RetryAfterIsAFloorAndBecomesTheNextPrev) {
  struct Case {
    const char* name;
    vpic::HttpResult answer;
    const char* kind;
  };
  vpic::HttpResult maintenance = Status(200, "2");
  maintenance.body = "<html>down for maintenance</html>";
  const std::vector<Case> cases = {
      {"429", Status(429, "2"), "http"},
      {"503", Status(503, "2"), "http"},
      {"maintenance page", maintenance, "bad_response"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EngineOptions o = Options();
    o.retry_cap = absl::Seconds(10);
    o.uniform = [] { return 0.5; };  // jittered: 200 ms, below the floor
    Make(o);
    RecordingListener* l = Submit(ValidVin(1));
    Turn();
    const absl::Time failed_at = Now();
    Answer(1, c.answer);
    ASSERT_THAT(l->kinds(), ElementsAre("queued", "retrying"));
    const Retrying first = l->events()[1].retrying;
    EXPECT_EQ(first.error.kind, c.kind);
    EXPECT_EQ(first.next_delay, absl::Seconds(2));
    Step(absl::Seconds(2) - kNs);
    ASSERT_EQ(Sent(), 1u) << "retried before the Retry-After";
    Step(kNs);
    ASSERT_EQ(Sent(), 2u);
    EXPECT_EQ(upstream_->sent()[1].at, failed_at + absl::Seconds(2));
    Answer(2, Status(503));
    ASSERT_THAT(l->kinds(), ElementsAre("queued", "retrying", "retrying"));
    // base + 0.5 * (3 * 2 s - base): prev is the 2 s waited.
    EXPECT_EQ(l->events()[2].retrying.next_delay, absl::Milliseconds(3050));
    Step(absl::Milliseconds(3050));
    ASSERT_EQ(Sent(), 3u);
    AnswerOk(3);
    ASSERT_EQ(l->kinds().back(), "done");
    EXPECT_EQ(l->events().back().result->attempts, 3);
  }
}

// One Retry-After smaller than the jitter changes nothing.
TEST_F(EngineRulesTest, ARetryAfterBelowTheJitterIsNoFloor) {
  EngineOptions o = Options();
  o.uniform = [] { return 0.5; };
  Make(o);
  RecordingListener* l = Submit(ValidVin(1));
  Turn();
  Answer(1, Status(503, "0"));
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "retrying"));
  EXPECT_EQ(l->events()[1].retrying.next_delay, absl::Milliseconds(200));
}

TEST_F(EngineRulesTest, ARetryAfterBeyondTheMaximumFailsAtOnce) {
  EngineOptions o = Options();
  o.retry_after_max = absl::Seconds(60);
  Make(o);
  RecordingListener* l = Submit(ValidVin(1));
  Turn();
  Answer(1, Status(429, "120"));
  ASSERT_THAT(l->kinds(), ElementsAre("queued", "failed"));
  const Failure f = l->events()[1].failure;
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.attempts, 1);
  EXPECT_EQ(f.retry_delay, absl::Seconds(120));
  EXPECT_THAT(f.message, HasSubstr("longer than this server waits"));
  Step(absl::Seconds(130));
  EXPECT_EQ(Sent(), 1u);
  EXPECT_TRUE(Idle());
}

}  // namespace
}  // namespace engine
