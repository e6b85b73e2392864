// Fleet mode end to end: while Redis is down each replica goes on alone,
// and shares again once it is back; no decode fails because Redis failed.
// The fixture is in fleet_test_fixture.h.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "fleet_test_fixture.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "testing/scrape.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace fleet_test {
namespace {

using testing_util::ValidVin;
using vin::v1::DecodeResponse;

TEST_F(FleetTest, RedisStoppedAndRestartedLosesNoDecode) {
  server::ServerOptions o = Defaults();
  o.metrics_listen = "127.0.0.1:0";
  // A stopped Redis is seen at once (its connections close); what must not
  // happen is a loaded machine's slow reply after the restart sending a
  // replica to decode alone, so Redis gets 5 s to answer (the fixture's
  // 200 ms did, once, beside the chaos soak in CI).
  o.fleet.timeout = absl::Seconds(5);
  StartReplicas(o, 2);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::string last_error;
  absl::Mutex error_mu;
  std::thread feeder([&] {
    for (int i = 0; !stop.load(); ++i) {
      DecodeResponse r;
      grpc::Status s = Decode(i % 2, ValidVin(5000 + i), &r);
      if (s.ok()) {
        ++ok;
      } else {
        ++failed;
        absl::MutexLock lock(&error_mu);
        last_error = s.error_message();
      }
    }
  });
  ASSERT_TRUE(testing_util::Eventually([&] { return ok.load() >= 20; }));
  ASSERT_TRUE(redis_.Stop());
  for (auto& s : servers_) {
    ASSERT_TRUE(testing_util::Eventually(
        [&] { return s->metrics().redis_up.value() == 0; }));
  }
  const int before = ok.load();
  ASSERT_TRUE(testing_util::Eventually([&] {
    return ok.load() >= before + 20;
  })) << "decodes go on without Redis";
  {
    auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", servers_[0]->port()),
        grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service("vin.v1.VinDecoderService");
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING)
        << "the service still answers while Redis is down";
  }
  std::string error;
  ASSERT_TRUE(redis_.Start(&error)) << error;
  for (auto& s : servers_) {
    ASSERT_TRUE(testing_util::Eventually(
        [&] { return s->metrics().redis_up.value() == 1; }));
  }
  const int after = ok.load();
  ASSERT_TRUE(
      testing_util::Eventually([&] { return ok.load() >= after + 20; }));
  stop.store(true);
  feeder.join();
  EXPECT_EQ(failed.load(), 0) << last_error;
  // Shared again: what A decodes now, B answers from the fleet's cache.
  DecodeResponse a, b;
  ASSERT_TRUE(Decode(0, ValidVin(9999), &a).ok());
  ASSERT_TRUE(Decode(1, ValidVin(9999), &b).ok());
  EXPECT_EQ(b.result().source(), vin::v1::SOURCE_CACHE);
  std::string body;
  ASSERT_EQ(testing_util::HttpGet(servers_[0]->metrics_port(), "/metrics", &body), 200);
  testing_util::Samples m = testing_util::ParseSamples(body);
  EXPECT_EQ(m.at("vin_redis_up"), 1);
  EXPECT_GT(m.at("vin_redis_errors_total"), 0) << "the outage's failed commands";
  EXPECT_EQ(m.at("vin_fleet_events_rejected_total"), 0)
      << "every event of the other replica parsed";
}

}  // namespace
}  // namespace fleet_test
