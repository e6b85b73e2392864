// The attempt runner on its own, on a fake clock with a scripted upstream:
// batching from the gate, the concurrency limit, one signal per answer
// (a pushback delays the queue before any flight hears its outcome), and
// a request no flight waits for is aborted.
#include "engine/attempt_runner.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/scripted_upstream.h"
#include "upstream/local_budget.h"

namespace engine {
namespace {

using testing::ElementsAre;
using testing_util::ScriptedUpstream;
using Ticket = AttemptRunner::Ticket;

// Records what the runner tells the flights' side, in order.
struct RecordingFlights : AttemptRunner::Flights {
  bool Sending(const Ticket& t) override {
    log.push_back("sending " + t.key.vin);
    return true;
  }
  void Carried(const Ticket& t, AttemptRunner::RequestId id) override {
    log.push_back("carried " + t.key.vin + " in " + std::to_string(id));
  }
  void Answered(const Ticket& t, AttemptRunner::RequestId,
                vpic::Outcome o) override {
    log.push_back("answered " + t.key.vin + " " +
                  (o.verdict == vpic::Outcome::Verdict::kDecoded ? "decoded"
                   : o.verdict == vpic::Outcome::Verdict::kRetry ? "retry"
                                                                 : "reject"));
  }
  void Delayed() override { log.push_back("delayed"); }
  void Unreachable() override { log.push_back("unreachable"); }
  void Resent(const Ticket& t, int extra) override {
    log.push_back("resent " + t.key.vin + " " + std::to_string(extra));
  }
  std::vector<std::string> log;
};

class AttemptRunnerTest : public testing::Test {
 protected:
  void Make(int concurrency, int batch_max, double rate = 0) {
    auto loop = loop::EventLoop::Create(&clock_);
    ASSERT_TRUE(loop.ok());
    loop_ = *std::move(loop);
    upstream::BudgetOptions b;
    b.rate_per_minute = rate;
    budget_ = std::make_unique<upstream::LocalBudget>(b, clock_.Now());
    auto upstream = std::make_unique<ScriptedUpstream>(&clock_);
    upstream_ = upstream.get();
    upstream_->Attach(loop_.get());
    AttemptRunner::Options o;
    o.max_concurrency = concurrency;
    o.batch_max = batch_max;
    o.configured_rate = rate;
    o.retry_after_max = absl::Seconds(60);
    runner_ =
        std::make_unique<AttemptRunner>(o, std::move(upstream), budget_.get(),
                                        &clock_, &metrics_, nullptr, &flights_);
  }
  void Queue(const std::string& vin, uint64_t id) {
    runner_->Enqueue({{vin, 0}, id}, 0);
  }

  retry::FakeClock clock_;
  std::unique_ptr<loop::EventLoop> loop_;
  std::unique_ptr<upstream::LocalBudget> budget_;
  metrics::ServiceMetrics metrics_;
  RecordingFlights flights_;
  ScriptedUpstream* upstream_ = nullptr;
  std::unique_ptr<AttemptRunner> runner_;
};

TEST_F(AttemptRunnerTest, ABacklogTravelsInOneBatchAndEachFlightGetsItsOwn) {
  Make(8, 50);
  Queue("1FTMW1T88MFA00001", 1);
  Queue("1HGCM82633A004352", 2);
  runner_->StartReady();
  ASSERT_EQ(upstream_->sent().size(), 1u);
  EXPECT_TRUE(upstream_->sent()[0].batch);
  EXPECT_EQ(runner_->counts().batch_requests, 1u);
  EXPECT_EQ(runner_->counts().vins, 2u);
  // The second VIN is missing from vPIC's answer: a retry for it alone.
  upstream_->Reply(1, upstream_->Ok(1, {"1HGCM82633A004352"}));
  loop_->RunOnce(absl::ZeroDuration());
  EXPECT_THAT(flights_.log,
              ElementsAre("sending 1FTMW1T88MFA00001",
                          "sending 1HGCM82633A004352",
                          "carried 1FTMW1T88MFA00001 in 1",
                          "carried 1HGCM82633A004352 in 1",
                          "answered 1FTMW1T88MFA00001 decoded",
                          "answered 1HGCM82633A004352 retry"));
  EXPECT_EQ(runner_->active(), 0u);
}

TEST_F(AttemptRunnerTest, TheConcurrencyLimitHoldsTheNextRequest) {
  Make(1, 1);
  Queue("1FTMW1T88MFA00001", 1);
  Queue("1HGCM82633A004352", 2);
  runner_->StartReady();
  EXPECT_EQ(upstream_->sent().size(), 1u);
  EXPECT_EQ(runner_->waiting(), 1u);
  EXPECT_EQ(runner_->NextStart(clock_.Now()), absl::nullopt)
      << "at the limit, only a request's end lets the next start";
  upstream_->Reply(1, upstream_->Ok(1));
  loop_->RunOnce(absl::ZeroDuration());
  runner_->StartReady();
  EXPECT_EQ(upstream_->sent().size(), 2u);
}

TEST_F(AttemptRunnerTest, APushbackDelaysTheQueueBeforeTheFlightsHearIt) {
  Make(8, 1, /*rate=*/600);
  Queue("1FTMW1T88MFA00001", 1);
  runner_->StartReady();
  Queue("1HGCM82633A004352", 2);  // queued while the first is out
  const absl::Time before = runner_->EstimatedStart(0, clock_.Now());
  upstream_->Reply(1, ScriptedUpstream::Status(429, "5"));
  loop_->RunOnce(absl::ZeroDuration());
  EXPECT_THAT(flights_.log,
              ElementsAre("sending 1FTMW1T88MFA00001",
                          "carried 1FTMW1T88MFA00001 in 1", "delayed",
                          "answered 1FTMW1T88MFA00001 retry"));
  EXPECT_EQ(runner_->counts().pushbacks, 1u);
  EXPECT_EQ(budget_->PausedUntil(), clock_.Now() + absl::Seconds(5));
  EXPECT_GE(runner_->EstimatedStart(0, clock_.Now()),
            clock_.Now() + absl::Seconds(5));
  EXPECT_LT(before, clock_.Now() + absl::Seconds(5));
  runner_->StartReady();
  EXPECT_EQ(upstream_->sent().size(), 1u) << "nothing starts during the pause";
}

TEST_F(AttemptRunnerTest, ARequestNoFlightWaitsForIsAbortedAndNeverAnswers) {
  Make(8, 50);
  Queue("1FTMW1T88MFA00001", 1);
  Queue("1HGCM82633A004352", 2);
  runner_->StartReady();
  runner_->Leave(1);
  EXPECT_EQ(runner_->active(), 1u) << "one flight still waits for it";
  runner_->Leave(1);
  EXPECT_EQ(runner_->active(), 0u);
  EXPECT_TRUE(upstream_->sent()[0].cancelled);
  EXPECT_EQ(metrics_
                .upstream_requests[metrics::I(metrics::Endpoint::kBatch)]
                                  [metrics::I(metrics::UpstreamResult::kCancelled)]
                .value(),
            1u);
  upstream_->Reply(1, upstream_->Ok(1));
  loop_->RunOnce(absl::ZeroDuration());
  EXPECT_EQ(flights_.log.size(), 4u) << "no answer after the abort";
}

}  // namespace
}  // namespace engine
