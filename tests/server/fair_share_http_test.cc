// Rule 17 through the real server and the fake vPIC over HTTP: a unary
// Decode of a person's tenant goes ahead of a bulk feed's backlog, in the
// next upstream request or the one after (two token intervals), and the
// metrics name the tenants and priorities of what was sent. (The rules'
// times are tested on a fake clock in tests/engine/fair_share_test.cc.)
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/scrape.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"

namespace server {
namespace {

using testing_util::ValidVin;

class FairShareHttpTest : public testing_util::ServerFixture {};

TEST_F(FairShareHttpTest, AUnaryCallGoesAheadOfAFeedsBacklog) {
  ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 600;  // a request every 100 ms
  o.engine.budget.burst = 1;
  o.engine.upstream_batch_max = 50;
  o.metrics_listen = "127.0.0.1:0";
  StartServer(o);
  // A feed of 3,000 VINs: about six seconds of upstream requests.
  std::vector<vin::v1::DecodeBatchRequest> feed(3000);
  for (size_t i = 0; i < feed.size(); ++i) feed[i].set_vin(ValidVin(10000 + i));
  std::atomic<int> feed_events{0};
  std::thread feeder([&] {
    testing_util::BatchOutcome out = testing_util::RunBatch(
        stub_.get(), feed, [&](const vin::v1::DecodeBatchResponse&) { ++feed_events; });
    EXPECT_TRUE(out.status.ok()) << out.status.error_message();
  });
  // Once the backlog has formed (requests have gone, many VINs wait):
  ASSERT_TRUE(fake_->WaitForRequests(5, absl::Seconds(30)));
  std::vector<std::pair<std::string, absl::Time>> calls;
  for (int k = 0; k < 5; ++k) {
    const std::string vin = ValidVin(900000 + k);
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-vin-tenant", "person");
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    vin::v1::DecodeResponse resp;
    const absl::Time asked = absl::Now();
    ASSERT_TRUE(stub_->Decode(&ctx, req, &resp).ok());
    calls.emplace_back(vin, asked);
  }
  feeder.join();
  // Each call's VIN went in one of the first two upstream requests that
  // started after it was asked for, ahead of the feed's waiting VINs.
  const std::vector<fakevpic::RequestRecord> log = fake_->Requests();
  for (const auto& [vin, asked] : calls) {
    int after = 0;
    bool found = false;
    for (const auto& r : log) {
      if (r.time < asked) continue;
      ++after;
      for (const auto& [v, year] : r.batch) found |= v == vin;
      if (r.vin == vin) found = true;
      if (found || after == 2) break;
    }
    EXPECT_TRUE(found) << vin << " was not in the first two requests after it was asked";
  }
  std::string body;
  ASSERT_EQ(testing_util::HttpGet(server_->metrics_port(), "/metrics", &body), 200);
  const testing_util::Samples m = testing_util::ParseSamples(body);
  EXPECT_EQ(m.at("vin_upstream_tenant_vins_total{tenant=\"person\",priority=\"interactive\"}"), 5);
  EXPECT_EQ(m.at("vin_upstream_tenant_vins_total{tenant=\"default\",priority=\"bulk\"}"), 3000);
  EXPECT_EQ(m.at("vin_upstream_wait_seconds_count{priority=\"interactive\"}"), 5);
  EXPECT_EQ(m.at("vin_upstream_wait_seconds_count{priority=\"bulk\"}"), 3000);
  EXPECT_EQ(m.at("vin_upstream_bulk_share"), 1) << "no peak hours in the fixture";
}

}  // namespace
}  // namespace server
