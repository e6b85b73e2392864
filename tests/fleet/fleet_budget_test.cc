// Fleet mode end to end: the replicas share one upstream budget in Redis
// (DESIGN rules 9-11): the rate, a 429's pause, the retry budget in an
// outage. The fixture is in fleet_test_fixture.h; the budget's table of
// cases on a fake clock is budget_conformance_test.cc.
#include <algorithm>
#include <string>
#include <thread>

#include "fake_vpic/fake_vpic.h"
#include "fleet_test_fixture.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/redis_probe.h"
#include "testing/request_log.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace fleet_test {
namespace {

using testing_util::ValidVin;
using vin::v1::DecodeResponse;

TEST_F(FleetTest, ThreeReplicasTogetherKeepTheRate) {
  server::ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 600;  // 10 a second, for the fleet
  o.engine.budget.burst = 10;
  // The shared bucket is the rule under test: Redis answering late would
  // send each replica to its own fallback bucket (rate / 3 and a burst of
  // its own), as it must. With 1 s, a run beside the chaos soak on two
  // cores still fell back once (44 requests in 0.9 s); 10 s keeps the test
  // on the shared bucket.
  o.fleet.timeout = absl::Seconds(10);
  StartReplicas(o);
  constexpr int kVins = 900;
  Calls calls;
  for (int i = 0; i < kVins; ++i) {
    calls.Start(stubs_[i % kReplicas].get(), ValidVin(1000 + i));
  }
  ASSERT_TRUE(calls.Wait());
  int ok = 0;
  for (const auto* c : calls.calls()) ok += c->status.ok();
  EXPECT_EQ(ok, kVins);
  EXPECT_EQ(fake_->TotalRequests(), kVins);
  // The bucket grants at most burst + rate x 1 s = 20 tokens in any
  // second. A token is used a moment after its grant (a replica may hold
  // one Redis granted, and the request travels to vPIC), so the arrivals
  // are read over 0.9 s windows: those of any such window were granted
  // within one second unless a request took longer than 100 ms to arrive.
  EXPECT_LE(testing_util::DensestWindow(fake_->Requests(),
                                        absl::Milliseconds(900)),
            10u + 10u)
      << "no second of grants holds more than the fleet's rate plus the burst";
  for (const auto& s : servers_) {
    EXPECT_GT(s->engine().Stats().upstream_requests, 0u);
  }
}

TEST_F(FleetTest, A429OnOneReplicaPausesTheOthers) {
  server::ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 6000;
  StartReplicas(o);
  const std::string first = ValidVin(3);
  auto steps = fakevpic::Step::ParseList("429:2");
  ASSERT_TRUE(steps.ok());
  fake_->Script(first, *steps);
  DecodeResponse a;
  std::thread unary([&] { ASSERT_TRUE(Decode(0, first, &a).ok()); });
  // The pause is in Redis once replica A has told it (it answers 429s with
  // a script; the hash's `paused` is then in the future).
  ASSERT_TRUE(testing_util::Eventually([&] {
    auto paused =
        testing_util::RedisCall(redis_.port(), {"HGET", "vin:budget", "paused"});
    return paused.ok() && !paused->str.empty() && paused->str != "0";
  }));
  const absl::Time paused_at = fake_->Requests()[0].time;
  DecodeResponse b, c;
  ASSERT_TRUE(Decode(1, ValidVin(4), &b).ok());
  ASSERT_TRUE(Decode(2, ValidVin(5), &c).ok());
  unary.join();
  const auto log = fake_->Requests();
  ASSERT_EQ(log.size(), 4u);
  for (size_t i = 1; i < log.size(); ++i) {
    EXPECT_GE(log[i].time, paused_at + absl::Seconds(2))
        << log[i].vin << " was asked during the fleet's pause";
  }
  EXPECT_EQ(servers_[1]->engine().Stats().pushbacks, 0u)
      << "B never saw a 429 itself";
}

TEST_F(FleetTest, AnOutageCostsTheFleetAtMostATenthMoreThanWasAsked) {
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 4;
  o.engine.budget.retry_ratio = 0.1;
  o.engine.budget.retry_min_per_second = 1;
  // This rule alone: the circuit breaker (rule 13, its own tests) would
  // open after five failures in a row and answer the rest at once.
  o.engine.breaker.failures = 0;
  StartReplicas(o);
  auto outage = fakevpic::Step::ParseList("503,503,503,503,503,503,503,503");
  ASSERT_TRUE(outage.ok());
  fake_->ScriptEveryVin(*outage);
  constexpr int kVins = 300;
  const absl::Time start = absl::Now();
  Calls calls;
  for (int i = 0; i < kVins; ++i) {
    calls.Start(stubs_[i % kReplicas].get(), ValidVin(20000 + i));
  }
  ASSERT_TRUE(calls.Wait());
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  int unavailable = 0;
  for (const auto* c : calls.calls()) {
    unavailable += c->status.error_code() == grpc::StatusCode::UNAVAILABLE;
  }
  EXPECT_EQ(unavailable, kVins);
  // One budget for the fleet: a tenth of the 300 first attempts, plus the
  // floor (1/s over a 10 s window) once, not once per replica.
  EXPECT_LE(fake_->TotalRequests(), 1.1 * kVins + 1 * std::max(seconds, 10.0))
      << "over " << seconds << " s";
  uint64_t refused = 0, retried = 0;
  for (const auto& s : servers_) {
    refused += s->engine().Stats().retries_refused;
    retried += s->metrics().upstream_retries.value();
  }
  EXPECT_GT(refused, kVins / 2u);
  // Every retry made was granted by the fleet's budget in Redis (where a
  // grant is counted when spent, or, unspent, when granted).
  auto ring = testing_util::RedisCall(redis_.port(),
                                      {"HGETALL", "vin:budget:retries"});
  ASSERT_TRUE(ring.ok()) << ring.status();
  long long granted = 0, firsts = 0;
  for (size_t i = 0; i + 1 < ring->elements.size(); i += 2) {
    // The ring's slots: s<k> (which period), f<k>, r<k>.
    const long long v = std::stoll(ring->elements[i + 1].str);
    const char field = ring->elements[i].str[0];
    if (field == 'r') granted += v;
    if (field == 'f') firsts += v;
  }
  EXPECT_EQ(firsts, kVins) << "every replica's first attempts are counted there";
  EXPECT_GT(retried, 0u);
  EXPECT_LE(static_cast<long long>(retried), granted);
}

}  // namespace
}  // namespace fleet_test

namespace fleet_test {
namespace {

// Rule 17 across replicas: a bulk feed on replica A cannot delay an
// interactive call on replica B: the shared bucket keeps a token for
// interactive requests, so each of B's calls goes in one of the first two
// upstream requests of the fleet after it is asked. The burst is 2 (the
// reserve and one more), at 5 requests a second: bulk can send at most the
// one token above the reserve, and one more only if B's call takes over
// 200 ms to reach the bucket. (With a burst of 10, whenever A's feed ran
// short, on a slow TSan machine, the bucket refilled, and bulk then rightly
// spent the surplus: five batches in the 13 ms B's first call took.) The
// whole feed waits at A (its window holds it all), so that it never runs
// short on the server's side.
TEST_F(FleetTest, ABulkFeedOnOneReplicaDoesNotDelayInteractiveCallsOnAnother) {
  server::ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 300;  // for the fleet: 5 a second
  o.engine.budget.burst = 2;
  o.engine.upstream_batch_max = 50;
  o.batch_window = 2000;
  o.fleet.timeout = absl::Seconds(10);  // the shared bucket, not fallbacks
  StartReplicas(o);
  std::vector<vin::v1::DecodeBatchRequest> feed(2000);
  for (size_t i = 0; i < feed.size(); ++i) {
    feed[i].set_vin(testing_util::ValidVin(20000 + i));
  }
  std::thread feeder([&] {
    testing_util::BatchOutcome out = testing_util::RunBatch(stubs_[0].get(), feed);
    EXPECT_TRUE(out.status.ok()) << out.status.error_message();
  });
  ASSERT_TRUE(fake_->WaitForRequests(5, absl::Seconds(30)))
      << "the feed's backlog has formed and the burst is spent";
  std::vector<std::pair<std::string, absl::Time>> calls;
  for (int k = 0; k < 5; ++k) {
    const std::string vin = testing_util::ValidVin(800000 + k);
    vin::v1::DecodeResponse resp;
    const absl::Time asked = absl::Now();
    ASSERT_TRUE(Decode(1, vin, &resp).ok());
    calls.emplace_back(vin, asked);
  }
  feeder.join();
  const std::vector<fakevpic::RequestRecord> log = fake_->Requests();
  for (const auto& [vin, asked] : calls) {
    EXPECT_TRUE(testing_util::InFirstRequestsAfter(log, vin, asked, 2))
        << vin << " was not in the first two requests after it was asked: "
        << testing_util::RequestsAfter(log, vin, asked);
  }
}

}  // namespace
}  // namespace fleet_test
