// The budget conformance test's table of cases (DESIGN rules 9-11).
#include "budget_conformance_cases.h"

#include <vector>

namespace budget_conformance {
namespace {

using absl::Milliseconds;
using absl::Seconds;

Step Firsts(absl::Duration at, int64_t n) {
  Step s{at, Op::kFirsts};
  s.n = n;
  return s;
}
Step Acquire(absl::Duration at, int64_t n, int64_t granted) {
  Step s{at, Op::kAcquire};
  s.n = n;
  s.granted = granted;
  return s;
}
Step Retry(absl::Duration at, int64_t n, int64_t granted) {
  Step s{at, Op::kRetry};
  s.n = n;
  s.granted = granted;
  return s;
}
Step Pushback(absl::Duration at, absl::Duration pause, bool changed) {
  Step s{at, Op::kPushback};
  s.pause = pause;
  s.changed = changed;
  return s;
}
Step Success(absl::Duration at, bool changed) {
  Step s{at, Op::kSuccess};
  s.changed = changed;
  return s;
}

upstream::BudgetOptions Options(double per_minute, double burst, double ratio,
                                double floor) {
  upstream::BudgetOptions o;
  o.rate_per_minute = per_minute;
  o.burst = burst;
  o.retry_ratio = ratio;
  o.retry_min_per_second = floor;
  return o;
}

const absl::Duration kNever = -absl::InfiniteDuration();

}  // namespace

std::vector<Case> Cases() {
  return {
      // Rule 9: a bucket of `burst` tokens refilled at the rate.
      {"BurstThenTheRate",
       Options(600, 2, 0.1, 1),
       {
           Acquire(Seconds(0), 3, 2).Rate(600).Paused(kNever),
           Acquire(Milliseconds(50), 1, 0),   // half a token
           Acquire(Milliseconds(100), 2, 1),  // 10 a second
           Acquire(Milliseconds(300), 3, 2),
           Acquire(Seconds(1), 5, 2).Rate(600).Paused(kNever),  // the burst caps it
       }},
      // Rule 10: a pushback pauses every request, halves the rate, and the
      // bucket refills (at the new rate) from the end of the pause.
      {"APushbackPausesHalvesTheRateAndRefillsFromItsEnd",
       Options(600, 2, 0.1, 1),
       {
           Acquire(Seconds(0), 2, 2),
           Pushback(Milliseconds(100), Seconds(1), true)
               .Rate(300)
               .Paused(Milliseconds(1100)),
           Acquire(Milliseconds(600), 1, 0),
           Acquire(Milliseconds(1100), 1, 0),  // over, the bucket empty
           Acquire(Milliseconds(1300), 2, 1),  // 0.2 s at 5 a second
           Pushback(Milliseconds(1400), Milliseconds(500), true)
               .Rate(150)
               .Paused(Milliseconds(1900)),
           Acquire(Milliseconds(1900), 1, 0),
           Acquire(Milliseconds(2300), 2, 1).Rate(150),  // 0.4 s at 2.5 a second
       }},
      // A pushback during a pause halves the rate again and never shortens
      // the pause.
      {"APushbackDuringAPauseHalvesAgainButKeepsTheLaterEnd",
       Options(600, 10, 0.1, 1),
       {
           Pushback(Seconds(0), Seconds(2), true).Rate(300).Paused(Seconds(2)),
           Pushback(Milliseconds(500), Seconds(1), true).Rate(150).Paused(Seconds(2)),
           Acquire(Milliseconds(1900), 1, 0),
           Success(Seconds(2), false).Rate(150),
           Acquire(Seconds(2), 1, 0),
           Acquire(Milliseconds(2400), 2, 1),  // 0.4 s at 2.5 a second
       }},
      // Rule 10: from the end of the pause each success raises the rate by
      // the configured rate times the minutes since the last raise.
      {"SuccessesClimbBackToTheConfiguredRateInAboutAMinute",
       Options(600, 10, 0.1, 1),
       {
           Pushback(Seconds(0), Seconds(2), true).Rate(300).Paused(Seconds(2)),
           Success(Seconds(1), false).Rate(300),  // during the pause
           Success(Seconds(2), false).Rate(300),  // no time since its end
           Success(Seconds(8), true).Rate(360),   // + 600 x 6/60
           Acquire(Seconds(8), 11, 10),           // refilled to the burst
           Acquire(Milliseconds(8200), 2, 1),     // 0.2 s at 6 a second
           Success(Seconds(32), true).Rate(600),  // + 600 x 24/60
           Success(Seconds(40), false).Rate(600).Paused(Seconds(2)),
       }},
      {"AnUnlimitedRateStillPauses",
       Options(0, 1, 0.1, 1),
       {
           Acquire(Seconds(0), 20, 20).Rate(0),
           Pushback(Seconds(0), Seconds(1), false).Rate(0).Paused(Seconds(1)),
           Acquire(Milliseconds(500), 1, 0),
           Acquire(Seconds(1), 5, 5).Rate(0),
       }},
      // Rule 11: the floor, --retry_budget_min (1) a second over the window
      // of 10 s, with no traffic at all. Each retry follows its attempt's
      // TryAcquire, as in the engine.
      {"AQuietServerMayRetryTheFloor",
       Options(6000, 100, 0.1, 1),
       {
           Retry(Seconds(0), 11, 10),
           Acquire(Seconds(5), 1, 1),
           Retry(Seconds(5), 1, 0),
           Acquire(Milliseconds(9900), 1, 1),
           Retry(Milliseconds(9900), 1, 0),  // slot 0 is among the last 100
           Acquire(Seconds(10), 1, 1),
           Retry(Seconds(10), 11, 10),  // it has left the window
       }},
      // The window is the last 10 s in slots of 100 ms (in both
      // implementations): retries made at 0.5 s still count at 10.3 s (a
      // window of whole seconds would have dropped them at 10 s) and no
      // longer at 10.5 s.
      {"TheWindowIsTheLastTenSecondsInTenthsOfASecond",
       Options(6000, 100, 0, 1),
       {
           Retry(Milliseconds(500), 10, 10),
           Acquire(Milliseconds(10300), 1, 1),
           Retry(Milliseconds(10300), 1, 0),
           Acquire(Milliseconds(10400), 1, 1),
           Retry(Milliseconds(10400), 1, 0),
           Acquire(Milliseconds(10500), 1, 1),
           Retry(Milliseconds(10500), 11, 10),
       }},
      // Rule 11: retries may add --retry_budget (a tenth) of the first
      // attempts of the last 10 s, plus the floor.
      {"RetriesMayAddATenthOfTheFirstAttemptsOfTheLastTenSeconds",
       Options(6000, 100, 0.1, 1),
       {
           Firsts(Seconds(0), 500),
           Acquire(Seconds(1), 1, 1),
           Retry(Seconds(1), 61, 60),  // 500/10 + 10
           Firsts(Seconds(2), 100),
           Acquire(Seconds(3), 1, 1),
           Retry(Seconds(3), 11, 10),  // + 100/10
           // The 500 have left: 100/10 + 10 = 20 allowed, 70 made.
           Acquire(Milliseconds(10100), 1, 1),
           Retry(Milliseconds(10100), 1, 0),
           // The 60 made at 1 s have left: 10 made of 20.
           Acquire(Seconds(11), 1, 1),
           Retry(Seconds(11), 11, 10),
           // The 100 of 2 s have left (10 allowed), not the 10 of 11 s.
           Acquire(Seconds(13), 1, 1),
           Retry(Seconds(13), 1, 0),
           Acquire(Seconds(21), 1, 1),
           Retry(Seconds(21), 11, 10),
       }},
      {"TheShareAndTheFloorMayBeFractions",
       Options(6000, 100, 0.25, 0.3),
       {
           Firsts(Seconds(0), 9),
           Retry(Seconds(0), 6, 5),  // 9/4 + 3 = 5.25
           Firsts(Seconds(0), 3),
           Retry(Seconds(0), 2, 1),  // 12/4 + 3 = 6
       }},
      {"ANegativeShareTurnsTheRetryBudgetOff",
       Options(6000, 100, -1, 0),
       {
           Firsts(Seconds(0), 1),
           Retry(Seconds(0), 50, 50),
       }},
  };
}

}  // namespace budget_conformance
