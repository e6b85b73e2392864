// The circuit breaker (DESIGN rule 13) on the real vin-server binary over
// real HTTP: with vPIC unreachable (an address where nothing listens, or
// one that accepts and never answers), a 10,000-VIN feed finishes from the
// snapshot with fewer than 20 upstream requests in all, health says the
// upstream is NOT_SERVING while the service stays SERVING, and the log
// names the transition.
#include <grpcpp/create_channel.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fake_vpic/fake_vpic.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/batch_session.h"
#include "testing/redis_server.h"
#include "testing/scrape.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

using grpc::health::v1::HealthCheckResponse;
using testing_util::Item;
using testing_util::ValidVin;

struct Unreachable {
  const char* name;
  bool hangs;  // accepts and never answers; else nothing listens
};

class BreakerHttpTest : public testing::TestWithParam<Unreachable> {};

int PortOf(const std::string& line) {
  return std::stoi(line.substr(line.find("(port ") + 6));
}

HealthCheckResponse::ServingStatus Health(grpc::Channel* channel,
                                          const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(
      std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  HealthCheckResponse resp;
  EXPECT_TRUE(stub->Check(&ctx, req, &resp).ok());
  return resp.status();
}

TEST_P(BreakerHttpTest, AFeedFinishesFromTheSnapshotWithAlmostNoRequests) {
  SKIP_WITHOUT_SNAPSHOT();
  std::unique_ptr<fakevpic::FakeVpic> hanging;
  std::string vpic_url;
  if (GetParam().hangs) {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok());
    hanging = *std::move(fake);
    hanging->ScriptEveryVin(*fakevpic::Step::ParseList("hang"));
    hanging->ScriptBatch(*fakevpic::Step::ParseList("hang"));
    vpic_url = hanging->base_url();
  } else {
    vpic_url = absl::StrCat("http://127.0.0.1:", testing_util::FreePort(),
                            "/api/vehicles");
  }
  testing_util::Subprocess server;
  ASSERT_TRUE(server.Start(
      {VIN_SERVER_BIN, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
       "--vpic_base_url=" + vpic_url,
       "--snapshot_path=" + snapshot::testing::SnapshotPath(),
       "--attempt_timeout=1s"}));
  auto started = server.WaitForLine("listening on", absl::Seconds(30));
  ASSERT_TRUE(started.has_value());
  auto metrics_line = server.WaitForLine("metrics on", absl::Seconds(5));
  ASSERT_TRUE(metrics_line.has_value());
  auto channel = grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", PortOf(*started)),
      grpc::InsecureChannelCredentials());
  auto stub = vin::v1::VinDecoderService::NewStub(channel);

  constexpr int kVins = 10000;
  std::vector<vin::v1::DecodeBatchRequest> feed;
  for (int i = 0; i < kVins; ++i) feed.push_back(Item(ValidVin(i)));
  const testing_util::BatchOutcome out = testing_util::RunBatch(stub.get(), feed);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  int done = 0, unreachable_noted = 0;
  for (const auto& e : out.events) {
    if (!e.has_done()) continue;
    ++done;
    EXPECT_EQ(e.done().result().source(), vin::v1::SOURCE_SNAPSHOT);
    for (const auto& n : e.done().result().notes()) {
      if (n.code() == "live_failure" &&
          n.message().find("vPIC is unreachable since") != std::string::npos) {
        ++unreachable_noted;
      }
    }
  }
  EXPECT_EQ(done, kVins) << "every item answered, from the snapshot";
  EXPECT_GT(unreachable_noted, kVins - 500)
      << "nearly all say vPIC is unreachable (the first few failed alone)";

  std::string body;
  ASSERT_EQ(testing_util::HttpGet(PortOf(*metrics_line), "/metrics", &body), 200);
  const testing_util::Samples s = testing_util::ParseSamples(body);
  const double requests = testing_util::Sum(s, "vin_upstream_requests_total");
  EXPECT_LT(requests, 20) << body;
  EXPECT_GE(requests, 5);
  if (hanging) EXPECT_LT(hanging->TotalRequests(), 20);
  EXPECT_GE(testing_util::Sum(s, "vin_upstream_breaker_transitions_total{to=\"open\"}"), 1);
  EXPECT_NE(testing_util::Sum(s, "vin_upstream_breaker_state"), 0);

  EXPECT_EQ(Health(channel.get(), "vin.v1.VinDecoderService.upstream"),
            HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(Health(channel.get(), "vin.v1.VinDecoderService"),
            HealthCheckResponse::SERVING);
  EXPECT_TRUE(server.WaitForLine("vPIC unreachable: circuit breaker open",
                                 absl::Seconds(5)))
      << "the transition is logged";
}

INSTANTIATE_TEST_SUITE_P(
    Vpic, BreakerHttpTest,
    testing::Values(Unreachable{"NothingListens", false},
                    Unreachable{"AcceptsAndNeverAnswers", true}),
    [](const testing::TestParamInfo<Unreachable>& p) { return p.param.name; });

}  // namespace
