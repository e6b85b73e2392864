// The circuit breaker across a fleet (DESIGN rule 13), with a real
// redis-server, three VinServers and one fake vPIC over HTTP: a breaker
// opened on A is open on B and C without failures of their own; while vPIC
// stays down, one probe goes per cool-down for the whole fleet, however many
// replicas have flights that want one; a probe of B's that vPIC answers
// closes the breaker on A and C too. The same rules on a fake clock:
// tests/engine/fleet_breaker_test.cc. The fixture is in fleet_test_fixture.h.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet_test_fixture.h"
#include "gtest/gtest.h"
#include "testing/vin_gen.h"

namespace fleet_test {
namespace {

using testing_util::ValidVin;
using vin::v1::DecodeResponse;

constexpr absl::Duration kCooldown = absl::Seconds(2);

class FleetBreakerTest : public FleetTest {
 protected:
  static server::ServerOptions BreakerDefaults() {
    server::ServerOptions o = Defaults();
    o.engine.breaker.failures = 5;
    o.engine.breaker.cooldown = kCooldown;
    o.engine.breaker.cooldown_max = absl::Seconds(4);
    // Slow answers from Redis would make a replica decide alone (as it
    // must when Redis is down); this test is about Redis that answers.
    o.fleet.timeout = absl::Seconds(2);
    return o;
  }
  double State(int replica) const {
    return servers_[replica]->metrics().upstream_breaker_state.value();
  }
  uint64_t UpstreamRequests(int replica) const {
    return servers_[replica]->engine().Stats().upstream_requests;
  }
  // vPIC answers every request 503 from now on (until Recover).
  void Outage() {
    fake_->ScriptEveryVin(std::vector<fakevpic::Step>(
        100, *fakevpic::Step::Parse("503")));
  }
  void Recover() { fake_->ScriptEveryVin({}); }
  // Five distinct VINs on `replica`, at once: their first attempts fail and
  // open its breaker.
  void OpenOn(int replica) {
    Calls calls;
    for (int i = 0; i < 5; ++i) calls.Start(stubs_[replica].get(), ValidVin(vin_++));
    ASSERT_TRUE(calls.Wait());
    for (const auto* c : calls.calls()) {
      EXPECT_EQ(c->status.error_code(), grpc::StatusCode::UNAVAILABLE);
    }
    ASSERT_EQ(State(replica), 1) << "open";
  }
  // Every replica in `state`, as far as its metrics tell.
  bool AllIn(double state) {
    return testing_util::Eventually([&] {
      for (int i = 0; i < kReplicas; ++i) {
        if (State(i) != state) return false;
      }
      return true;
    });
  }

  int vin_ = 7000;
};

TEST_F(FleetBreakerTest, OpenOnAIsOpenOnBAndCAndOneProbeGoesPerCooldown) {
  StartReplicas(BreakerDefaults());
  Outage();
  OpenOn(0);
  ASSERT_TRUE(AllIn(1)) << "B and C heard it from A";
  EXPECT_EQ(UpstreamRequests(1), 0u);
  EXPECT_EQ(UpstreamRequests(2), 0u);
  // B and C answer new VINs at once, without asking vPIC.
  const int before = fake_->TotalRequests();
  for (int r : {1, 2}) {
    DecodeResponse out;
    const absl::Time asked = absl::Now();
    const grpc::Status s = Decode(r, ValidVin(vin_++), &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_NE(s.error_message().find("vPIC is unreachable since"), std::string::npos)
        << s.error_message();
    EXPECT_LT(absl::Now() - asked, absl::Seconds(1)) << "no retry ladder";
  }
  EXPECT_EQ(fake_->TotalRequests(), before);
  EXPECT_EQ(UpstreamRequests(1) + UpstreamRequests(2), 0u);

  // vPIC stays down for 10 s while every replica has a new VIN that wants
  // to be sent every 50 ms: the probes come one at a time, at least a
  // cool-down apart, from whichever replica's flight got the fleet's probe.
  const absl::Time start = absl::Now();
  const absl::Time end = start + absl::Seconds(10);
  Calls calls;
  while (absl::Now() < end) {
    for (int r = 0; r < kReplicas; ++r) calls.Start(stubs_[r].get(), ValidVin(vin_++));
    absl::SleepFor(absl::Milliseconds(50));  // the callers' pace, not a wait for state
  }
  ASSERT_TRUE(calls.Wait());
  std::vector<absl::Time> probes;
  for (const auto& r : fake_->Requests()) {
    if (r.time >= start) probes.push_back(r.time);
  }
  std::sort(probes.begin(), probes.end());
  ASSERT_GE(probes.size(), 2u) << "the cool-downs (2 s to 4 s) passed";
  EXPECT_LE(probes.size(), 6u) << "one per cool-down, not one per replica";
  for (size_t i = 1; i < probes.size(); ++i) {
    EXPECT_GE(probes[i] - probes[i - 1], kCooldown)
        << "probe " << i << " came " << absl::FormatDuration(probes[i] - probes[i - 1])
        << " after the one before";
  }
  uint64_t counted = 0;
  for (int r = 0; r < kReplicas; ++r) {
    counted += servers_[r]->metrics().upstream_breaker_probes[0].value();
  }
  EXPECT_EQ(counted, probes.size()) << "every request was a counted probe";
}

TEST_F(FleetBreakerTest, AProbeOfBThatVpicAnswersClosesTheBreakerForAll) {
  StartReplicas(BreakerDefaults());
  Outage();
  OpenOn(0);
  ASSERT_TRUE(AllIn(1));
  Recover();
  // Only B has callers: once the cool-down has passed, its flight is the
  // fleet's probe, and vPIC answers it.
  DecodeResponse out;
  grpc::Status s;
  testing_util::Eventually(
      [&] {
        s = Decode(1, ValidVin(vin_++), &out);
        return s.ok();
      },
      absl::Seconds(30), absl::Milliseconds(100));  // a caller's retry pace
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(out.result().source(), vin::v1::SOURCE_VPIC);
  ASSERT_TRUE(AllIn(0)) << "closed on A and C by B's probe";
  EXPECT_EQ(servers_[0]->metrics().upstream_breaker_probes[1].value() +
                servers_[2]->metrics().upstream_breaker_probes[1].value(),
            0u)
      << "A and C never probed";
  // A and C decode live again.
  for (int r : {0, 2}) {
    const uint64_t sent = UpstreamRequests(r);
    ASSERT_TRUE(Decode(r, ValidVin(vin_++), &out).ok());
    EXPECT_EQ(out.result().source(), vin::v1::SOURCE_VPIC);
    EXPECT_EQ(UpstreamRequests(r), sent + 1);
  }
}

}  // namespace
}  // namespace fleet_test
