#include "upstream/breaker.h"

#include "gtest/gtest.h"

namespace upstream {
namespace {

using Permit = Breaker::Permit;
const absl::Time kT0 = absl::FromUnixSeconds(1000);

BreakerOptions Options() {
  BreakerOptions o;
  o.failures = 5;
  o.cooldown = absl::Seconds(5);
  o.cooldown_max = absl::Seconds(60);
  return o;
}

// Opens `b` at `now` with five broken answers in a row.
void OpenIt(Breaker& b, absl::Time now) {
  for (int i = 0; i < 5; ++i) b.OnResult(now, Health::kBroken, false);
}

TEST(Breaker, FiveFailuresInARowOpenIt) {
  Breaker b(Options());
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(b.OnResult(kT0, Health::kBroken, false));
  }
  EXPECT_EQ(b.Ask(kT0), Permit::kGo);
  const auto t = b.OnResult(kT0, Health::kBroken, false);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->from, BreakerState::kClosed);
  EXPECT_EQ(t->to, BreakerState::kOpen);
  EXPECT_EQ(b.unreachable_since(), kT0);
  EXPECT_EQ(b.next_probe_at(), kT0 + absl::Seconds(5));
  EXPECT_EQ(b.Ask(kT0 + absl::Seconds(5) - absl::Nanoseconds(1)),
            Permit::kRefused);
}

TEST(Breaker, AnAnswerBreaksTheRun) {
  Breaker b(Options());
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) b.OnResult(kT0, Health::kBroken, false);
    b.OnResult(kT0, Health::kAnswered, false);  // a 429 or a 404 too
  }
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  // A local (neutral) error neither counts nor breaks the run.
  for (int i = 0; i < 4; ++i) b.OnResult(kT0, Health::kBroken, false);
  b.OnResult(kT0, Health::kNeutral, false);
  b.OnResult(kT0, Health::kBroken, false);
  EXPECT_EQ(b.state(), BreakerState::kOpen);
}

TEST(Breaker, ExactlyOneProbeAfterTheCooldownAndItsSuccessCloses) {
  Breaker b(Options());
  OpenIt(b, kT0);
  const absl::Time due = kT0 + absl::Seconds(5);
  EXPECT_EQ(b.Ask(due), Permit::kProbe);
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
  EXPECT_EQ(b.Ask(due), Permit::kRefused);
  EXPECT_EQ(b.Ask(due + absl::Minutes(10)), Permit::kRefused);
  // An answer of a request from before the opening decides nothing.
  EXPECT_FALSE(b.OnResult(due, Health::kAnswered, false));
  const auto t = b.OnResult(due + absl::Seconds(1), Health::kAnswered, true);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->to, BreakerState::kClosed);
  EXPECT_EQ(b.Ask(due), Permit::kGo);
  EXPECT_EQ(b.unreachable_since(), absl::InfinitePast());
  EXPECT_EQ(b.probes(), 1u);
}

TEST(Breaker, AFailedProbeReopensForLongerWithJitterUpToTheMax) {
  double u = 0;
  Breaker b(Options(), [&u] { return u; });
  OpenIt(b, kT0);
  absl::Time now = kT0;
  absl::Duration last = absl::Seconds(5);
  const double draws[] = {0.0, 0.5, 0.99, 0.25, 0.9, 0.9};
  const absl::Duration want[] = {
      absl::Seconds(5),                     // the floor is the last one
      absl::Seconds(10),                    // 5 + 0.5 * 10
      absl::Seconds(10) * (1 + 2 * 0.99),   // 29.8 s
      absl::Seconds(29.8) * 1.5,            // 44.7 s
      absl::Seconds(60),                    // capped
      absl::Seconds(60)};
  for (size_t i = 0; i < 6; ++i) {
    now += last;
    ASSERT_EQ(b.Ask(now), Permit::kProbe) << i;
    u = draws[i];
    const auto t = b.OnResult(now, Health::kBroken, true);
    ASSERT_TRUE(t) << i;
    EXPECT_EQ(t->from, BreakerState::kHalfOpen);
    EXPECT_EQ(t->to, BreakerState::kOpen);
    EXPECT_GE(b.cooldown(), last) << i;
    EXPECT_LE(absl::AbsDuration(b.cooldown() - want[i]), absl::Milliseconds(1))
        << i << ": " << b.cooldown();
    EXPECT_EQ(b.next_probe_at(), now + b.cooldown());
    last = b.cooldown();
  }
  // Still unreachable since the first opening.
  EXPECT_EQ(b.unreachable_since(), kT0);
  // Closing starts the ladder again.
  now += last;
  ASSERT_EQ(b.Ask(now), Permit::kProbe);
  b.OnResult(now, Health::kAnswered, true);
  OpenIt(b, now);
  EXPECT_EQ(b.cooldown(), absl::Seconds(5));
}

TEST(Breaker, RealRandomCooldownsDiffer) {
  // Two processes whose probes failed in the same instant do not probe
  // again in the same instant.
  Breaker a(Options()), b(Options());
  OpenIt(a, kT0);
  OpenIt(b, kT0);
  const absl::Time due = kT0 + absl::Seconds(5);
  bool differ = false;
  absl::Time now = due;
  for (int i = 0; i < 3 && !differ; ++i) {
    ASSERT_EQ(a.Ask(now), Permit::kProbe);
    ASSERT_EQ(b.Ask(now), Permit::kProbe);
    a.OnResult(now, Health::kBroken, true);
    b.OnResult(now, Health::kBroken, true);
    differ = a.next_probe_at() != b.next_probe_at();
    now = std::max(a.next_probe_at(), b.next_probe_at());
  }
  EXPECT_TRUE(differ);
}

TEST(Breaker, ALostProbeLetsTheNextRequestProbeAtOnce) {
  Breaker b(Options());
  OpenIt(b, kT0);
  const absl::Time due = kT0 + absl::Seconds(5);
  ASSERT_EQ(b.Ask(due), Permit::kProbe);
  const auto t = b.OnProbeLost(due + absl::Seconds(1));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->to, BreakerState::kOpen);
  EXPECT_EQ(b.cooldown(), absl::Seconds(5));
  EXPECT_EQ(b.Ask(due + absl::Seconds(1)), Permit::kProbe);
  // A neutral answer to the probe is a lost probe, not a verdict.
  const auto n = b.OnResult(due + absl::Seconds(2), Health::kNeutral, true);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->to, BreakerState::kOpen);
  EXPECT_EQ(b.Ask(due + absl::Seconds(2)), Permit::kProbe);
}

TEST(Breaker, OffNeverOpens) {
  BreakerOptions o = Options();
  o.failures = 0;
  Breaker b(o);
  for (int i = 0; i < 100; ++i) b.OnResult(kT0, Health::kBroken, false);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.Ask(kT0), Permit::kGo);
}

// In a fleet (rule 13): another replica's breaker moves this one.
TEST(Breaker, OpenedElsewhereOpensItWithoutFailuresOfItsOwn) {
  Breaker b(Options());
  const absl::Time since = kT0 - absl::Seconds(2);
  const auto t = b.OpenedElsewhere(kT0, since, absl::Seconds(4));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->from, BreakerState::kClosed);
  EXPECT_EQ(t->to, BreakerState::kOpen);
  EXPECT_EQ(b.unreachable_since(), since) << "since the fleet's opening";
  EXPECT_EQ(b.next_probe_at(), kT0 + absl::Seconds(4));
  EXPECT_EQ(b.Ask(kT0 + absl::Seconds(3)), Permit::kRefused);
  // Open already: the probe waits at least the other's (longer) cool-down,
  // and the cool-down to grow from is at least that.
  EXPECT_FALSE(b.OpenedElsewhere(kT0 + absl::Seconds(1), since, absl::Seconds(10)));
  EXPECT_EQ(b.next_probe_at(), kT0 + absl::Seconds(11));
  EXPECT_EQ(b.cooldown(), absl::Seconds(10));
  // A shorter one from a replica that has not heard yet changes nothing.
  EXPECT_FALSE(b.OpenedElsewhere(kT0 + absl::Seconds(2), since, absl::Seconds(5)));
  EXPECT_EQ(b.next_probe_at(), kT0 + absl::Seconds(11));
  // Half open, its own probe decides.
  EXPECT_EQ(b.Ask(kT0 + absl::Seconds(11)), Permit::kProbe);
  EXPECT_FALSE(b.OpenedElsewhere(kT0 + absl::Seconds(11), since, absl::Seconds(30)));
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
}

TEST(Breaker, ClosedElsewhereClosesItOpenOrHalfOpen) {
  Breaker b(Options());
  EXPECT_FALSE(b.ClosedElsewhere()) << "closed already";
  OpenIt(b, kT0);
  auto t = b.ClosedElsewhere();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->from, BreakerState::kOpen);
  EXPECT_EQ(t->to, BreakerState::kClosed);
  EXPECT_EQ(b.Ask(kT0), Permit::kGo);
  EXPECT_EQ(b.unreachable_since(), absl::InfinitePast());
  OpenIt(b, kT0);
  ASSERT_EQ(b.Ask(kT0 + absl::Seconds(5)), Permit::kProbe);
  t = b.ClosedElsewhere();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->from, BreakerState::kHalfOpen);
  // Its own probe's answer, when it comes, is an ordinary one.
  EXPECT_FALSE(b.OnResult(kT0 + absl::Seconds(6), Health::kAnswered, true));
  EXPECT_EQ(b.state(), BreakerState::kClosed);
}

TEST(Breaker, AProbeTakenByAnotherReplicaWaitsForItsLease) {
  Breaker b(Options());
  OpenIt(b, kT0);
  const absl::Time due = kT0 + absl::Seconds(5);
  ASSERT_EQ(b.Ask(due), Permit::kProbe);
  const auto t = b.ProbeTaken(due, absl::Seconds(31));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->from, BreakerState::kHalfOpen);
  EXPECT_EQ(t->to, BreakerState::kOpen);
  EXPECT_EQ(b.probes(), 0u) << "the probe was not this one's";
  EXPECT_EQ(b.cooldown(), absl::Seconds(5)) << "no failure of its own";
  EXPECT_EQ(b.Ask(due + absl::Seconds(30)), Permit::kRefused);
  EXPECT_EQ(b.Ask(due + absl::Seconds(31)), Permit::kProbe)
      << "a lease that ran out: its holder is gone";
  ASSERT_TRUE(b.OnResult(due + absl::Seconds(32), Health::kAnswered, true));
  EXPECT_FALSE(b.ProbeTaken(due + absl::Seconds(32), absl::Seconds(1)))
      << "closed: there is no probe to hand back";
  EXPECT_EQ(b.state(), BreakerState::kClosed);
}

}  // namespace
}  // namespace upstream
