// One budget specification (DESIGN rules 9-11), two implementations: every
// case of one table of steps runs against upstream::LocalBudget and against
// fleet::RedisBudget on a real redis-server of the test's own, on a fake
// clock (the Redis scripts are given the same fake time).
//
// The Redis budget answers from what Redis last said; Redis's answers come
// later, posted to the loop. The test is the loop: after each step it runs
// the posted answers until none is outstanding (waiting on a condition
// variable, never sleeping), at the same fake time. A TryAcquire refused
// while an ask went to Redis is asked again once the answer has run, as
// the engine does when the answer wakes it; a refused TryRetry is final,
// as it is in the engine.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "fleet/redis_budget.h"
#include "fleet/redis_client.h"
#include "gtest/gtest.h"
#include "loop/event_loop.h"
#include "testing/redis_server.h"
#include "upstream/local_budget.h"

namespace {

using absl::Milliseconds;
using absl::Seconds;

// ---- The table ----

enum class Op { kFirsts, kAcquire, kRetry, kPushback, kSuccess };

struct Step {
  absl::Duration at;  // since the case's start
  Op op;
  int64_t n = 1;  // kFirsts: first attempts; kAcquire, kRetry: calls made
  int64_t granted = 0;  // kAcquire, kRetry: how many succeed (the first ones)
  absl::Duration pause;  // kPushback
  absl::optional<bool> changed;  // kPushback, kSuccess: the rate changed
  // After the step: EffectiveRatePerMinute, and PausedUntil (since the
  // start; -InfiniteDuration: never paused).
  absl::optional<double> rate;
  absl::optional<absl::Duration> paused_until;

  Step Rate(double r) const {
    Step s = *this;
    s.rate = r;
    return s;
  }
  Step Paused(absl::Duration until) const {
    Step s = *this;
    s.paused_until = until;
    return s;
  }
};

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

struct Case {
  std::string name;
  upstream::BudgetOptions options;
  std::vector<Step> steps;
};

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

// ---- The implementations ----

enum class Impl { kLocal, kRedis };

// A budget under test and the loop that drives it.
class Subject {
 public:
  virtual ~Subject() = default;
  virtual upstream::UpstreamBudget& budget() = 0;
  // Runs the implementation's answers until none is outstanding.
  virtual void Settle() {}
  // Whether a step left something outstanding.
  virtual bool Asked() const { return false; }
};

class LocalSubject final : public Subject {
 public:
  LocalSubject(const upstream::BudgetOptions& o, absl::Time now)
      : budget_(o, now) {}
  upstream::UpstreamBudget& budget() override { return budget_; }

 private:
  upstream::LocalBudget budget_;
};

class RedisSubject final : public Subject {
 public:
  // The test's thread is the budget's loop; `now` is read there.
  RedisSubject(int port, const std::string& key,
               const upstream::BudgetOptions& o, const absl::Time* now)
      : loop_(*loop::EventLoop::Create()),
        client_({"127.0.0.1", port, 0}, absl::Seconds(10),
                [this](bool up) { up_ = up; }) {
    client_.Attach(loop_.get());
    up_known_ = RunUntil([this] { return up_; });
    auto clock = [now] { return *now; };
    budget_ = std::make_unique<fleet::RedisBudget>(&client_, key, o,
                                                   /*fleet_size_hint=*/1,
                                                   clock, clock);
  }
  ~RedisSubject() override {
    budget_.reset();
    client_.Detach();
  }

  bool connected() const { return up_known_; }
  upstream::UpstreamBudget& budget() override { return *budget_; }
  bool Asked() const override { return budget_->pending() > 0; }
  void Settle() override {
    if (!RunUntil([this] { return budget_->pending() == 0; })) {
      ADD_FAILURE() << "Redis did not answer in 30 s";
      return;
    }
    ASSERT_TRUE(budget_->shared()) << "the budget fell back to its local bucket";
  }

 private:
  // Turns the loop until `done` holds, for at most 30 s; whether it held.
  bool RunUntil(const std::function<bool()>& done) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (!done() && absl::Now() < give_up) {
      loop_->RunOnce(absl::Milliseconds(50));
    }
    return done();
  }

  const std::unique_ptr<loop::EventLoop> loop_;
  bool up_ = false;
  bool up_known_ = false;
  fleet::RedisClient client_;
  std::unique_ptr<fleet::RedisBudget> budget_;
};

// For gtest's messages about a parameter.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
void PrintTo(Impl impl, std::ostream* os) {
  *os << (impl == Impl::kLocal ? "LocalBudget" : "RedisBudget");
}

// ---- The test ----

class UpstreamBudgetConformance
    : public testing::TestWithParam<std::tuple<Impl, Case>> {
 protected:
  static void SetUpTestSuite() {
    redis_ = new testing_util::RedisServer();
    std::string error;
    if (!redis_->Start(&error)) start_error_ = new std::string(error);
  }
  static void TearDownTestSuite() {
    delete redis_;
    redis_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }

  static testing_util::RedisServer* redis_;
  static std::string* start_error_;
};
testing_util::RedisServer* UpstreamBudgetConformance::redis_ = nullptr;
std::string* UpstreamBudgetConformance::start_error_ = nullptr;

std::string Describe(const Step& s) {
  const std::string at = absl::FormatDuration(s.at);
  switch (s.op) {
    case Op::kFirsts:
      return absl::StrCat("RecordFirstAttempts(", s.n, ") at ", at);
    case Op::kAcquire:
      return absl::StrCat("TryAcquire x", s.n, " at ", at);
    case Op::kRetry:
      return absl::StrCat("TryRetry x", s.n, " at ", at);
    case Op::kPushback:
      return absl::StrCat("OnPushback(", absl::FormatDuration(s.pause), ") at ", at);
    case Op::kSuccess:
      return absl::StrCat("OnSuccess at ", at);
  }
  return at;
}

TEST_P(UpstreamBudgetConformance, FollowsTheTable) {
  const Impl impl = std::get<0>(GetParam());
  const Case& c = std::get<1>(GetParam());
  // Aligned on the retry budget's slots, as the cases count them.
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  absl::Time now = t0;
  std::unique_ptr<Subject> subject;
  if (impl == Impl::kLocal) {
    subject = std::make_unique<LocalSubject>(c.options, now);
  } else {
    ASSERT_EQ(start_error_, nullptr) << *start_error_;
    auto redis = std::make_unique<RedisSubject>(
        redis_->port(), absl::StrCat("conformance:", c.name), c.options, &now);
    ASSERT_TRUE(redis->connected()) << "no connection to redis-server";
    subject = std::move(redis);
  }
  subject->Settle();
  upstream::UpstreamBudget& b = subject->budget();

  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    SCOPED_TRACE(absl::StrCat("step ", i, ": ", Describe(s)));
    ASSERT_GE(t0 + s.at, now) << "the table's steps go forward in time";
    now = t0 + s.at;
    switch (s.op) {
      case Op::kFirsts:
        b.RecordFirstAttempts(now, s.n);
        subject->Settle();
        break;
      case Op::kAcquire:
      case Op::kRetry: {
        std::string got;
        for (int64_t k = 0; k < s.n; ++k) {
          bool ok;
          if (s.op == Op::kAcquire) {
            ok = b.TryAcquire(now);
            if (!ok && subject->Asked()) {  // woken by the answer
              subject->Settle();
              ok = b.TryAcquire(now);
            }
          } else {
            ok = b.TryRetry(now);
          }
          subject->Settle();
          got += ok ? '1' : '0';
        }
        const std::string want =
            std::string(s.granted, '1') + std::string(s.n - s.granted, '0');
        EXPECT_EQ(got, want) << "1: allowed, 0: refused";
        break;
      }
      case Op::kPushback: {
        const bool changed = b.OnPushback(now, s.pause);
        subject->Settle();
        EXPECT_EQ(changed, *s.changed) << "OnPushback's answer";
        break;
      }
      case Op::kSuccess: {
        const bool changed = b.OnSuccess(now);
        subject->Settle();
        EXPECT_EQ(changed, *s.changed) << "OnSuccess's answer";
        break;
      }
    }
    if (s.rate) {
      EXPECT_NEAR(b.EffectiveRatePerMinute(), *s.rate, 1e-6)
          << "EffectiveRatePerMinute";
    }
    if (s.paused_until) {
      EXPECT_EQ(b.PausedUntil(), t0 + *s.paused_until) << "PausedUntil";
    }
  }
}

std::string Name(
    const testing::TestParamInfo<UpstreamBudgetConformance::ParamType>& info) {
  return absl::StrCat(std::get<1>(info.param).name,
                      std::get<0>(info.param) == Impl::kLocal ? "_Local"
                                                              : "_Redis");
}

INSTANTIATE_TEST_SUITE_P(Table, UpstreamBudgetConformance,
                         testing::Combine(testing::Values(Impl::kLocal,
                                                          Impl::kRedis),
                                          testing::ValuesIn(Cases())),
                         Name);

}  // namespace
