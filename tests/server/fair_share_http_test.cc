// Rule 17 through the real server and the fake vPIC over HTTP: a unary
// Decode of a person's tenant goes ahead of a bulk feed's backlog, in the
// next upstream request or the one after (two token intervals), and the
// metrics name the tenants and priorities of what was sent. (The rules'
// times are tested on a fake clock in tests/engine/fair_share_test.cc.)
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/request_log.h"
#include "testing/scrape.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"
#include "upstream/peak_hours.h"

namespace server {
namespace {

using testing_util::ValidVin;

// The fixture, and its options with a rate cap toward the fake (burst 1)
// and batches of `batch`.
class RateCappedFixture : public testing_util::ServerFixture {
 protected:
  static ServerOptions RateCapped(double per_minute, int batch) {
    ServerOptions o = Defaults();
    o.engine.budget.rate_per_minute = per_minute;
    o.engine.budget.burst = 1;
    o.engine.upstream_batch_max = batch;
    return o;
  }
};

class FairShareHttpTest : public RateCappedFixture {};

TEST_F(FairShareHttpTest, AUnaryCallGoesAheadOfAFeedsBacklog) {
  ServerOptions o = RateCapped(600, 50);
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
    EXPECT_TRUE(testing_util::InFirstRequestsAfter(log, vin, asked, 2))
        << vin << " was not in the first two requests after it was asked";
  }
  std::string body;
  ASSERT_EQ(testing_util::HttpGet(server_->metrics_port(), "/metrics", &body), 200);
  const testing_util::Samples m = testing_util::ParseSamples(body);
  EXPECT_EQ(m.at("vin_upstream_tenant_vins_total{tenant=\"person\",priority=\"interactive\"}"), 5);
  EXPECT_EQ(m.at("vin_upstream_tenant_vins_total{tenant=\"default\",priority=\"bulk\"}"), 3000);
  EXPECT_EQ(m.at("vin_upstream_wait_seconds_count{priority=\"interactive\"}"), 5);
  EXPECT_EQ(m.at("vin_upstream_wait_seconds_count{priority=\"bulk\"}"), 3000);
  EXPECT_EQ(m.at("vin_upstream_bulk_share_ratio"), 1)
      << "no peak hours in the fixture";
}

// Tenant A with four streams and tenant B with one, both with backlogs:
// until B's last VIN is sent, A has had about as many sent (within 10%),
// not four times as many.
TEST_F(FairShareHttpTest, TenantsShareTheRateWhateverTheirStreams) {
  ServerOptions o = RateCapped(1200, 50);
  // Each stream's whole feed at the server at once, so that B's one stream
  // never runs short of waiting VINs however slowly its client (a sanitizer
  // build's) sends them: the turns are what is measured.
  o.batch_window = 1000;
  StartServer(o);
  const auto stream = [this](const std::string& tenant, uint64_t first) {
    std::vector<vin::v1::DecodeBatchRequest> feed(1000);
    for (size_t i = 0; i < feed.size(); ++i) feed[i].set_vin(ValidVin(first + i));
    testing_util::BatchOutcome out = testing_util::RunBatch(
        stub_.get(), feed, {},
        [tenant](grpc::ClientContext* ctx) { ctx->AddMetadata("x-vin-tenant", tenant); });
    EXPECT_TRUE(out.status.ok()) << tenant << ": " << out.status.error_message();
  };
  std::vector<std::thread> streams;
  streams.emplace_back(stream, "B", 500000);
  for (int k = 0; k < 4; ++k) streams.emplace_back(stream, "A", 100000 + 10000 * k);
  for (auto& t : streams) t.join();
  // B's VINs are ValidVin(500000..500999).
  std::set<std::string> b;
  for (int i = 0; i < 1000; ++i) b.insert(ValidVin(500000 + i));
  int a_sent = 0, b_sent = 0;
  for (const auto& r : fake_->Requests()) {
    if (b_sent == 1000) break;
    for (const auto& [vin, year] : r.batch) (b.count(vin) ? b_sent : a_sent)++;
    if (!r.vin.empty()) (b.count(r.vin) ? b_sent : a_sent)++;
  }
  ASSERT_EQ(b_sent, 1000);
  EXPECT_NEAR(a_sent, 1000, 100) << "A's VINs sent while B had some waiting";
}

// Interactive calls that alone would fill every request (1,000 always in
// flight, all at the server) still leave a bulk feed its 10% of the VINs
// sent. At 600 requests a minute the waiting calls are twenty requests'
// worth, so a client slowed down (a sanitizer build's) still keeps the
// interactive queue full.
TEST_F(FairShareHttpTest, BulkKeepsItsMinimumShareUnderInteractiveLoad) {
  ServerOptions o = RateCapped(600, 50);
  o.max_streams_per_connection = 2000;  // every call at the server at once
  StartServer(o);
  std::vector<vin::v1::DecodeBatchRequest> feed(2000);
  for (size_t i = 0; i < feed.size(); ++i) feed[i].set_vin(ValidVin(600000 + i));
  std::set<std::string> bulk;
  for (const auto& r : feed) bulk.insert(r.vin());
  std::thread feeder([&] { testing_util::RunBatch(stub_.get(), feed); });
  // 1,000 unary calls in flight for 5 s, each replaced when it ends.
  struct Call {
    grpc::ClientContext ctx;
    vin::v1::DecodeRequest req;
    vin::v1::DecodeResponse resp;
  };
  absl::Mutex mu;
  int in_flight = 0, next = 0;
  std::vector<std::unique_ptr<Call>> calls;
  const absl::Time end = absl::Now() + absl::Seconds(5);
  while (absl::Now() < end) {
    {
      absl::MutexLock lock(&mu);
      mu.AwaitWithTimeout(absl::Condition(
                              +[](int* n) { return *n < 1000; }, &in_flight),
                          absl::Milliseconds(100));
      if (in_flight >= 1000) continue;
      ++in_flight;
    }
    calls.push_back(std::make_unique<Call>());
    Call* c = calls.back().get();
    c->req.set_vin(ValidVin(700000 + next++));
    c->ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    stub_->async()->Decode(&c->ctx, &c->req, &c->resp, [&](grpc::Status) {
      absl::MutexLock lock(&mu);
      --in_flight;
    });
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(+[](int* n) { return *n == 0; }, &in_flight));
  }
  feeder.join();
  // Over the requests while both kinds waited (the first 5 s, less the
  // first second's start): bulk's share of the VINs is at least its 10%.
  // People first: their VINs filled all but bulk's share (45 of 50) of at
  // least ten of those requests; bulk first, or a bigger share, would leave
  // none so filled. A request with fewer of theirs met a queue that a
  // slowed client (a sanitizer build's) had let run short, and bulk rightly
  // took the room.
  const std::vector<fakevpic::RequestRecord> log = fake_->Requests();
  ASSERT_GE(log.size(), 40u);
  int b = 0, total = 0, full_b = 0, full_total = 0, full_requests = 0;
  for (size_t i = 10; i < 45 && i < log.size(); ++i) {
    int rb = 0, rn = 0;
    for (const auto& [vin, year] : log[i].batch) {
      rb += bulk.count(vin) > 0;
      ++rn;
    }
    b += rb;
    total += rn;
    if (rn - rb >= 45) {
      full_b += rb;
      full_total += rn;
      ++full_requests;
    }
  }
  ASSERT_GT(total, 0);
  EXPECT_GE(static_cast<double>(b) / total, 0.1) << b << " of " << total;
  ASSERT_GE(full_requests, 10) << "people filled too few requests to judge";
  EXPECT_LE(static_cast<double>(full_b) / full_total, 0.15)
      << "people first: " << full_b << " of " << full_total << " in "
      << full_requests << " requests";
}

// How long twenty request intervals of one bulk feed take at 600 requests
// a minute, with peak hours all week (bulk at half the rate) or none.
// Batches of 10, so that the server (also a sanitizer build's) keeps up
// with the rate easily: the rate is what is measured.
class PeakShareHttpTest : public RateCappedFixture {
 protected:
  double TwentyIntervals(bool peak) {
    ServerOptions o = RateCapped(600, 10);
    if (peak) {
      auto p = upstream::PeakHours::Parse("Mon-Sun 00:00-24:00 UTC");
      EXPECT_TRUE(p.ok());
      o.engine.peak_hours = *p;
      o.engine.bulk_peak_share = 0.5;
    }
    StartServer(o);
    std::vector<vin::v1::DecodeBatchRequest> feed(300);
    for (size_t i = 0; i < feed.size(); ++i) feed[i].set_vin(ValidVin(300000 + i));
    testing_util::BatchOutcome out = testing_util::RunBatch(stub_.get(), feed);
    EXPECT_TRUE(out.status.ok()) << out.status.error_message();
    const std::vector<fakevpic::RequestRecord> log = fake_->Requests();
    if (log.size() < 26) {
      ADD_FAILURE() << log.size() << " requests";
      return 0;
    }
    // From the 5th request to the 25th.
    return absl::ToDoubleSeconds(log[24].time - log[4].time);
  }
};

TEST_F(PeakShareHttpTest, AtPeakHoursBulkGetsHalfTheRate) {
  EXPECT_NEAR(TwentyIntervals(true), 4.0, 0.4) << "5 requests a second";
}

TEST_F(PeakShareHttpTest, OutsidePeakHoursBulkGetsAllOfIt) {
  EXPECT_NEAR(TwentyIntervals(false), 2.0, 0.4) << "10 requests a second";
}

}  // namespace
}  // namespace server
