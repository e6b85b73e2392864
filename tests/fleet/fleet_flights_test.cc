// Fleet mode end to end (README "Running a fleet"): one flight per VIN
// across three replicas, a decode of one replica a cache answer on another,
// and a flight taken over when its owner is killed (vin-server processes).
// The fixture is in fleet_test_fixture.h.
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet_test_fixture.h"
#include "gtest/gtest.h"
#include "testing/http_client.h"
#include "testing/real_server.h"
#include "testing/scrape.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace fleet_test {
namespace {

using google::protobuf::util::MessageDifferencer;
using testing_util::ValidVin;
using vin::v1::DecodeResponse;

TEST_F(FleetTest, ThreeHundredCallsOverThreeReplicasMakeOneUpstreamRequest) {
  StartReplicas();
  const std::string vin = ValidVin(1);
  fake_->HoldAnswers();  // upstream is slow: every call joins the flight
  Calls calls;
  for (int i = 0; i < 300; ++i) calls.Start(stubs_[i % kReplicas].get(), vin);
  ASSERT_TRUE(testing_util::Eventually([&] { return Waiters() == 300; }))
      << "waiting: " << Waiters();
  fake_->ReleaseAnswers();
  ASSERT_TRUE(calls.Wait());
  EXPECT_EQ(fake_->TotalRequests(), 1) << "one flight across the fleet";
  const auto all = calls.calls();
  ASSERT_TRUE(all[0]->status.ok()) << all[0]->status.error_message();
  const DecodeResponse& first = all[0]->resp;
  EXPECT_EQ(all[0]->resp.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(all[0]->resp.result().attempts(), 1);
  int identical = 0;
  for (const auto* c : all) {
    EXPECT_TRUE(c->status.ok()) << c->status.error_message();
    identical += MessageDifferencer::Equals(c->resp, first);
  }
  EXPECT_EQ(identical, 300);
  // The other replicas' waiters were coalesced with a flight they did not
  // run: no replica but one asked vPIC.
  int asked = 0;
  for (const auto& s : servers_) asked += s->engine().Stats().upstream_requests > 0;
  EXPECT_EQ(asked, 1);
}

TEST_F(FleetTest, AVinDecodedOnOneReplicaIsACacheAnswerOnAnother) {
  StartReplicas();
  const std::string vin = ValidVin(2);
  DecodeResponse a, b;
  ASSERT_TRUE(Decode(0, vin, &a).ok());
  EXPECT_EQ(a.result().source(), vin::v1::SOURCE_VPIC);
  ASSERT_TRUE(Decode(1, vin, &b).ok());
  EXPECT_EQ(b.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(b.result().attempts(), 0);
  EXPECT_EQ(b.result().decode_time().seconds(), a.result().decode_time().seconds());
  EXPECT_EQ(b.result().decode_time().nanos(), a.result().decode_time().nanos());
  EXPECT_TRUE(MessageDifferencer::Equals(b.result().vehicle(),
                                         a.result().vehicle()));
  EXPECT_EQ(fake_->TotalRequests(), 1);
  EXPECT_EQ(servers_[1]->engine().Stats().upstream_requests, 0u);
  EXPECT_EQ(servers_[1]->metrics().cache_hits.value(), 1u)
      << "misses " << servers_[1]->metrics().cache_misses.value();
  // Now in replica B's own cache too.
  DecodeResponse again;
  ASSERT_TRUE(Decode(1, vin, &again).ok());
  EXPECT_EQ(again.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

// Rule 18 over Redis: vPIC's reference answer made on one replica is the
// fleet's cache answer on another, in whatever format that caller asks.
// The other replica starts after the answer was made: it reads it from
// Redis (the shared cache), not from the DONE event it never heard.
TEST_F(FleetTest, AReferenceAnswerOfOneReplicaIsACacheAnswerOnAnother) {
  server::ServerOptions o = Defaults();
  o.http.listen = "127.0.0.1:0";
  o.fleet.redis_url = redis_.url();
  o.fleet.size_hint = 2;
  AddReplica(o);
  WaitForRedis();
  const std::string path = "/api/vehicles/GetModelsForMake/honda";
  testing_util::HttpResponse a =
      testing_util::HttpGet(servers_[0]->http_port(), path + "?format=json");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.Header("X-Vin-Source"), "vpic");
  AddReplica(o);
  WaitForRedis();
  testing_util::HttpResponse b =
      testing_util::HttpGet(servers_[1]->http_port(), path + "?format=xml");
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(b.Header("X-Vin-Source"), "cache");
  EXPECT_NE(b.body.find("<Model_Name>"), std::string::npos) << b.body;
  EXPECT_EQ(fake_->TotalRequests(), 1);
  EXPECT_EQ(servers_[1]->engine().Stats().upstream_requests, 0u);
  // The same document: B's JSON is A's, byte for byte.
  testing_util::HttpResponse b_json =
      testing_util::HttpGet(servers_[1]->http_port(), path + "?format=json");
  EXPECT_EQ(b_json.body, a.body);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(FleetTest, WhenTheOwnerIsKilledAnotherReplicaTakesTheFlightOver) {
  constexpr absl::Duration kLease = absl::Seconds(1);
  // Replicas as processes (this test kills one).
  std::vector<std::unique_ptr<testing_util::RealServer>> replicas;
  for (int i = 0; i < kReplicas; ++i) {
    auto r = std::make_unique<testing_util::RealServer>();
    ASSERT_TRUE(r->Start(
        {"--vpic_base_url=" + fake_->base_url(), "--upstream_batch_max=1",
         "--upstream_rate=0", "--redis_url=" + redis_.url(),
         "--redis_timeout=200ms", "--fleet_lease=1s", "--attempt_timeout=5s"}));
    replicas.push_back(std::move(r));
  }
  for (auto& r : replicas) {
    ASSERT_TRUE(testing_util::Eventually(
        [&] { return r->Metric("vin_redis_up") == 1; }));
  }
  const std::string vin = ValidVin(7);
  fake_->HoldAnswers();
  Calls owner_calls, calls;
  owner_calls.Start(replicas[0]->stub(), vin);
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(20)));
  for (int i = 0; i < 10; ++i) calls.Start(replicas[1 + i % 2]->stub(), vin);
  // Every waiter of B and C has joined A's flight (QUEUED coalesced).
  for (int r = 1; r < kReplicas; ++r) {
    ASSERT_TRUE(testing_util::Eventually([&] {
      return replicas[r]->Metric("vin_coalesced_waiters_total") == 5;
    }));
  }
  replicas[0]->proc().Signal(SIGKILL);
  ASSERT_TRUE(replicas[0]->proc().Wait(absl::Seconds(10)).has_value());
  const absl::Time killed = absl::Now();
  fake_->ReleaseAnswers();
  ASSERT_TRUE(calls.Wait());
  const absl::Duration took = absl::Now() - killed;
  for (const auto* c : calls.calls()) {
    ASSERT_TRUE(c->status.ok()) << c->status.error_message();
    EXPECT_EQ(c->resp.result().vin(), vin);
  }
  EXPECT_EQ(fake_->TotalRequests(), 2) << "the dead owner's, and one takeover";
  // The lease, the look of a waiting replica every half lease, one attempt.
  EXPECT_LT(took, kLease + kLease / 2 + absl::Seconds(5)) << took;
  // Answers sent by B and C, whatever their source (a replica whose look at
  // the lease comes before the owner's DONE reaches it answers from the
  // shared cache).
  double decodes = 0;
  for (int r = 1; r < kReplicas; ++r) {
    std::string body;
    ASSERT_EQ(
        testing_util::HttpGet(replicas[r]->metrics_port(), "/metrics", &body),
        200);
    decodes += testing_util::Sum(testing_util::ParseSamples(body), "vin_decodes_total");
  }
  EXPECT_EQ(decodes, 10) << "exactly one answer per call";
}

}  // namespace
}  // namespace fleet_test
