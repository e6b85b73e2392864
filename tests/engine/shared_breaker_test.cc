// The engine's circuit breaker on its own (shared_breaker.h, DESIGN rule
// 13), on a fake clock: it opens after broken answers in a row and says so
// (the failure, the flights told to leave), lets one probe through after the
// cool-down, closes on its answer (the rate told to resume) or reopens for
// longer; and, shared by a fleet in memory, follows the other replicas'
// events and takes the fleet's one probe as a lease.
#include "engine/shared_breaker.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loop/event_loop.h"
#include "testing/memory_fleet.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using Permit = SharedBreaker::Permit;
using upstream::BreakerState;

constexpr absl::Duration kCooldown = absl::Seconds(5);

// Records what the breaker asks of the rest of the engine.
struct RecordingEffects : SharedBreaker::Effects {
  void Refusing() override { log.push_back("refusing"); }
  void Closed() override { log.push_back("closed"); }
  std::vector<std::string> log;
};

vpic::RequestOutcome Answer(vpic::UpstreamHealth health) {
  vpic::RequestOutcome answer;
  vpic::Outcome o;
  if (health == vpic::UpstreamHealth::kBroken) {
    o.verdict = vpic::Outcome::Verdict::kRetry;
    o.error = {503, "http", "HTTP 503"};
  }
  answer.outcomes.push_back(o);
  answer.health = health;
  return answer;
}
const vpic::RequestOutcome kBroken = Answer(vpic::UpstreamHealth::kBroken);
const vpic::RequestOutcome kAnswered = Answer(vpic::UpstreamHealth::kAnswered);

SharedBreaker::Options Options(FleetBackend* fleet = nullptr) {
  SharedBreaker::Options o;
  o.breaker.failures = 3;
  o.breaker.cooldown = kCooldown;
  o.breaker.cooldown_max = absl::Minutes(2);
  o.uniform = [] { return 0.5; };  // a failed probe doubles the cool-down
  o.fleet = fleet;
  o.probe_hold = absl::Seconds(31);
  return o;
}

class SharedBreakerTest : public testing::Test {
 protected:
  SharedBreakerTest()
      : breaker_(Options(), &clock_, &metrics_, nullptr, &effects_) {}

  void Open(SharedBreaker& b) {
    for (int i = 0; i < 3; ++i) b.OnAnswer(kBroken, false);
  }
  // The cool-down passes and a flight queues at `place` as the probe.
  void Probe(SharedBreaker& b, uint64_t place, uint64_t flight) {
    ASSERT_EQ(b.Ask(clock_.Now()), Permit::kProbe);
    b.Probing(place, flight);
  }

  retry::FakeClock clock_{absl::UnixEpoch() + absl::Hours(10)};
  metrics::ServiceMetrics metrics_;
  RecordingEffects effects_;
  SharedBreaker breaker_;
};

TEST_F(SharedBreakerTest, OpensAfterBrokenAnswersInARowAndTheFlightsLeave) {
  EXPECT_EQ(breaker_.Ask(clock_.Now()), Permit::kGo);
  breaker_.OnAnswer(kBroken, false);
  breaker_.OnAnswer(kBroken, false);
  breaker_.OnAnswer(kAnswered, false);  // an answer ends the run
  breaker_.OnAnswer(kBroken, false);
  breaker_.OnAnswer(kBroken, false);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
  EXPECT_FALSE(breaker_.Refuses(clock_.Now()));
  breaker_.OnAnswer(kBroken, false);
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  EXPECT_THAT(effects_.log, ElementsAre("refusing"));
  EXPECT_EQ(metrics_.upstream_breaker_state.value(), 1);
  EXPECT_TRUE(breaker_.Refuses(clock_.Now()));
  EXPECT_EQ(breaker_.Ask(clock_.Now()), Permit::kRefused);

  clock_.Advance(absl::Seconds(2));
  const Failure f = breaker_.Unreachable(clock_.Now(), 2);
  EXPECT_EQ(f.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(f.attempts, 2);
  EXPECT_EQ(f.retry_delay, absl::Seconds(3));  // to the probe
  ASSERT_TRUE(f.last_error);
  EXPECT_EQ(f.last_error->http_status, 503);
  EXPECT_THAT(f.message, HasSubstr(domain::kUnreachableSince));
  EXPECT_THAT(f.message, HasSubstr("after 3 failed requests in a row"));
  EXPECT_THAT(f.message, testing::Not(HasSubstr("another replica")));
}

TEST_F(SharedBreakerTest, OneProbeAfterTheCooldownAndItsAnswerCloses) {
  Open(breaker_);
  clock_.Advance(kCooldown);
  EXPECT_FALSE(breaker_.Refuses(clock_.Now()));
  Probe(breaker_, 7, 70);
  EXPECT_EQ(breaker_.state(), BreakerState::kHalfOpen);
  EXPECT_FALSE(breaker_.claiming());  // no fleet: no claim
  // Every other flight is refused, told the current cool-down.
  EXPECT_TRUE(breaker_.Refuses(clock_.Now()));
  EXPECT_EQ(breaker_.Unreachable(clock_.Now(), 0).retry_delay, kCooldown);
  EXPECT_FALSE(breaker_.Sends(71));
  EXPECT_TRUE(breaker_.Sends(70));
  EXPECT_FALSE(breaker_.Sends(70));  // once
  breaker_.OnAnswer(kAnswered, true);
  EXPECT_EQ(breaker_.state(), BreakerState::kClosed);
  EXPECT_THAT(effects_.log, ElementsAre("refusing", "closed"));
  EXPECT_EQ(metrics_.upstream_breaker_probes[1].value(), 1u);
  EXPECT_EQ(breaker_.Ask(clock_.Now()), Permit::kGo);
}

TEST_F(SharedBreakerTest, AFailedProbeReopensForLonger) {
  Open(breaker_);
  clock_.Advance(kCooldown);
  Probe(breaker_, 7, 70);
  ASSERT_TRUE(breaker_.Sends(70));
  breaker_.OnAnswer(kBroken, true);
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  EXPECT_EQ(metrics_.upstream_breaker_probes[0].value(), 1u);
  // 5 s + 0.5 * 2 * 5 s; the flights were told to leave when it opened.
  EXPECT_EQ(breaker_.Unreachable(clock_.Now(), 0).retry_delay,
            absl::Seconds(10));
  EXPECT_THAT(effects_.log, ElementsAre("refusing"));
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(breaker_.Refuses(clock_.Now()));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(breaker_.Ask(clock_.Now()), Permit::kProbe);
}

TEST_F(SharedBreakerTest, AProbeThatLeavesTheGateOrIsAbandonedIsLost) {
  Open(breaker_);
  clock_.Advance(kCooldown);
  Probe(breaker_, 7, 70);
  breaker_.LeftGate(8);  // another flight: nothing
  EXPECT_EQ(breaker_.state(), BreakerState::kHalfOpen);
  breaker_.LeftGate(7);
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  // The next flight probes at once.
  Probe(breaker_, 9, 90);
  ASSERT_TRUE(breaker_.Sends(90));
  breaker_.ProbeLost();
  EXPECT_EQ(breaker_.state(), BreakerState::kOpen);
  EXPECT_EQ(breaker_.Ask(clock_.Now()), Permit::kProbe);
  EXPECT_THAT(effects_.log, ElementsAre("refusing"));
}

TEST_F(SharedBreakerTest, OffItNeverOpens) {
  SharedBreaker::Options o = Options();
  o.breaker.failures = 0;
  SharedBreaker off(o, &clock_, &metrics_, nullptr, &effects_);
  for (int i = 0; i < 10; ++i) off.OnAnswer(kBroken, false);
  EXPECT_EQ(off.state(), BreakerState::kClosed);
  EXPECT_EQ(off.Ask(clock_.Now()), Permit::kGo);
  EXPECT_TRUE(effects_.log.empty());
}

// Two replicas' breakers over one fleet in memory, each on its own loop.
class SharedBreakerFleetTest : public SharedBreakerTest {
 protected:
  struct Replica {
    Replica(testing_util::MemoryFleet* fleet, const retry::Clock* clock,
            const std::string& name)
        : loop(*loop::EventLoop::Create(clock)), backend(fleet->Add(name)) {
      backend->Attach(loop.get());
      breaker = std::make_unique<SharedBreaker>(Options(backend), clock,
                                                &metrics, nullptr, &effects);
      backend->OnEvent([this](FleetEvent e) { breaker->FromFleet(e); });
    }
    void Turn() { loop->RunOnce(absl::ZeroDuration()); }
    std::unique_ptr<loop::EventLoop> loop;
    testing_util::MemoryFleet::Replica* backend;
    metrics::ServiceMetrics metrics;
    RecordingEffects effects;
    std::unique_ptr<SharedBreaker> breaker;
  };

  testing_util::MemoryFleet fleet_{&clock_};
  Replica a_{&fleet_, &clock_, "a"};
  Replica b_{&fleet_, &clock_, "b"};
};

TEST_F(SharedBreakerFleetTest, OpenedOnOneReplicaItOpensOnTheOther) {
  Open(*a_.breaker);
  ASSERT_EQ(fleet_.published.size(), 1u);
  EXPECT_EQ(fleet_.published[0].kind, FleetEvent::Kind::kBreakerOpened);
  EXPECT_EQ(fleet_.published[0].breaker.cooldown, kCooldown);
  b_.Turn();
  EXPECT_EQ(b_.breaker->state(), BreakerState::kOpen);
  EXPECT_THAT(b_.effects.log, ElementsAre("refusing"));
  EXPECT_THAT(b_.breaker->Unreachable(clock_.Now(), 0).message,
              HasSubstr("on another replica of the fleet"));
}

TEST_F(SharedBreakerFleetTest, TheFleetHasOneProbeAndItsAnswerClosesEveryone) {
  Open(*a_.breaker);
  b_.Turn();
  clock_.Advance(kCooldown);
  // a's flight finds the probe due: it waits for the fleet's word.
  Probe(*a_.breaker, 1, 10);
  EXPECT_TRUE(a_.breaker->claiming());
  a_.Turn();
  EXPECT_FALSE(a_.breaker->claiming());
  EXPECT_EQ(fleet_.ProbeHolder(), "a");
  // b's flight finds the probe taken: it leaves, and b waits for a's news.
  Probe(*b_.breaker, 2, 20);
  b_.Turn();
  EXPECT_EQ(b_.breaker->state(), BreakerState::kOpen);
  EXPECT_THAT(b_.effects.log, ElementsAre("refusing", "refusing"));
  EXPECT_TRUE(b_.breaker->Refuses(clock_.Now()));
  // a's probe is answered: a closes, lets the probe go, and b closes too.
  ASSERT_TRUE(a_.breaker->Sends(10));
  a_.breaker->OnAnswer(kAnswered, true);
  EXPECT_EQ(a_.breaker->state(), BreakerState::kClosed);
  EXPECT_EQ(fleet_.ProbeHolder(), "");
  EXPECT_EQ(fleet_.published.back().kind, FleetEvent::Kind::kBreakerClosed);
  b_.Turn();
  EXPECT_EQ(b_.breaker->state(), BreakerState::kClosed);
  EXPECT_THAT(b_.effects.log, ElementsAre("refusing", "refusing", "closed"));
}

TEST_F(SharedBreakerFleetTest, AFailedProbeHoldsTheLeaseForTheNewCooldown) {
  Open(*a_.breaker);
  clock_.Advance(kCooldown);
  Probe(*a_.breaker, 1, 10);
  a_.Turn();
  ASSERT_TRUE(a_.breaker->Sends(10));
  a_.breaker->OnAnswer(kBroken, true);
  EXPECT_EQ(fleet_.ProbeHolder(), "a");
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(1));
  EXPECT_EQ(fleet_.ProbeHolder(), "a");
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(fleet_.ProbeHolder(), "");
}

TEST_F(SharedBreakerFleetTest, WithTheFleetDownTheProbeGoesAlone) {
  a_.backend->set_up(false);
  Open(*a_.breaker);
  EXPECT_TRUE(fleet_.published.empty());
  clock_.Advance(kCooldown);
  Probe(*a_.breaker, 1, 10);
  EXPECT_FALSE(a_.breaker->claiming());
  EXPECT_TRUE(a_.breaker->Sends(10));
}

}  // namespace
}  // namespace engine
