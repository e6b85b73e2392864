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
// as it is in the engine. The table is budget_conformance_cases.cc.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "budget_conformance_cases.h"
#include "fleet/redis_budget.h"
#include "fleet/redis_client.h"
#include "gtest/gtest.h"
#include "loop/event_loop.h"
#include "testing/redis_server.h"
#include "upstream/local_budget.h"

namespace budget_conformance {
namespace {

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

// Rule 17 in the fleet's budget (Redis only: in one process the gate's
// queue puts interactive requests first itself). A request of bulk work
// alone leaves one token for interactive requests of any replica, and at
// peak hours takes one of bulk's own bucket too, at its share of the rate.
class RedisBudgetShares : public UpstreamBudgetConformance {};

TEST_F(RedisBudgetShares, BulkLeavesTheInteractiveReserveAndKeepsToItsPeakShare) {
  ASSERT_EQ(start_error_, nullptr) << *start_error_;
  using Purpose = upstream::UpstreamBudget::Purpose;
  const Purpose bulk{true, false, 1.0}, interactive{false, false, 1.0};
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  absl::Time now = t0;
  upstream::BudgetOptions o;
  o.rate_per_minute = 600;  // a token every 100 ms
  o.burst = 3;
  RedisSubject redis(redis_->port(), "shares:reserve", o, &now);
  ASSERT_TRUE(redis.connected());
  redis.Settle();
  upstream::UpstreamBudget& b = redis.budget();
  const auto acquire = [&](const Purpose& p) {
    if (b.TryAcquire(now, p)) return true;
    if (!redis.Asked()) return false;
    redis.Settle();
    return b.TryAcquire(now, p);
  };
  EXPECT_TRUE(acquire(bulk));
  EXPECT_TRUE(acquire(bulk));
  EXPECT_FALSE(acquire(bulk)) << "the last token is the reserve";
  EXPECT_TRUE(acquire(interactive)) << "an interactive request takes it at once";
  EXPECT_FALSE(acquire(interactive));
  now += absl::Milliseconds(100);
  EXPECT_FALSE(acquire(bulk)) << "one token: the reserve again";
  EXPECT_TRUE(acquire(interactive));

  // At peak hours, bulk alone: half the rate over 10 s; interactive: all.
  for (double share : {0.5, 1.0}) {
    SCOPED_TRACE(share);
    RedisSubject peak(redis_->port(), absl::StrCat("shares:peak", share), o, &now);
    ASSERT_TRUE(peak.connected());
    peak.Settle();
    upstream::UpstreamBudget& pb = peak.budget();
    const Purpose p{true, true, share};
    int granted = 0;
    const absl::Time from = now;
    for (; now < from + absl::Seconds(10); now += absl::Milliseconds(10)) {
      bool ok = pb.TryAcquire(now, p);
      if (!ok && peak.Asked()) {
        peak.Settle();
        ok = pb.TryAcquire(now, p);
      }
      granted += ok;
    }
    // 5 or 10 a second, the burst's first tokens less the reserve.
    EXPECT_NEAR(granted, share * 100 + (share < 1 ? 0 : 2), 3);
  }
}

}  // namespace
}  // namespace budget_conformance
