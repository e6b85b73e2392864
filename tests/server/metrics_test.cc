// The Prometheus metrics through a real HTTP scrape of /metrics on loopback,
// checked against what the fake vPIC logged and what callers received.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/batch_checks.h"
#include "snapshot/test_snapshot.h"
#include "testing/batch_session.h"
#include "testing/scrape.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"

namespace {

using testing::HasSubstr;
using testing_util::BatchOutcome;
using testing_util::HttpGet;
using testing_util::Item;
using testing_util::ParseSamples;
using testing_util::RunBatch;
using testing_util::Samples;
using testing_util::Sum;
using testing_util::ValidVin;
using vin::v1::DecodeBatchRequest;

class MetricsTest : public testing_util::ServerFixture {
 protected:
  static server::ServerOptions WithMetrics(server::ServerOptions o = Defaults()) {
    o.metrics_listen = "127.0.0.1:0";
    return o;
  }
  Samples Scrape() {
    std::string body;
    EXPECT_EQ(HttpGet(server_->metrics_port(), "/metrics", &body), 200);
    return ParseSamples(body);
  }
  // Nothing in progress, the streams' ends included: a client has its
  // stream's status a moment before the server's reactor is done with it.
  bool Idle() {
    const std::string left =
        testing_util::WaitUntilNothingInProgress(*server_, absl::Seconds(20));
    EXPECT_EQ(left, "") << "still in progress";
    return left.empty();
  }
};

TEST_F(MetricsTest, CountsAreExactAfterAMixedFeed) {
  server::ServerOptions o = WithMetrics();
  o.engine.upstream_batch_max = 50;
  StartServer(o);
  ASSERT_NE(server_->metrics_port(), 0);
  // 400 items over 100 distinct VINs (repeats: cache hits or joiners), 10
  // invalid VINs, a VIN that is retried once.
  const std::string retried = ValidVin(5000);
  Script(retried, "503,ok");
  std::vector<DecodeBatchRequest> feed;
  for (int i = 0; i < 400; ++i) feed.push_back(Item(ValidVin(i % 100)));
  for (int i = 0; i < 10; ++i) feed.push_back(Item("NOT-A-VIN"));
  feed.push_back(Item(retried));
  BatchOutcome out = RunBatch(stub_.get(), feed);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(Decode(ValidVin(1), &resp).ok());  // from the cache
  EXPECT_FALSE(Decode("1HGCM82643A004352", &resp).ok());  // check digit
  ASSERT_TRUE(Idle());

  int terminals = 0, done = 0;
  for (const auto& e : out.events) {
    terminals += e.has_done() || e.has_failed();
    done += e.has_done();
  }
  const Samples m = Scrape();
  EXPECT_EQ(Sum(m, "vin_upstream_requests_total"), fake_->TotalRequests())
      << "every request vPIC received is counted";
  EXPECT_EQ(Sum(m, "vin_upstream_vins_total"), fake_->TotalVinsRequested());
  EXPECT_EQ(Sum(m, "vin_decodes_total"), terminals + 2)
      << "every terminal event and unary answer";
  EXPECT_EQ(m.at(R"(vin_decodes_total{source="vpic",outcome="failed"})"), 11);
  EXPECT_EQ(m.at(R"(vin_decode_failures_total{reason="invalid_vin"})"), 11);
  EXPECT_EQ(m.at(R"(vin_decodes_total{source="cache",outcome="done"})") +
                m.at(R"(vin_decodes_total{source="vpic",outcome="done"})"),
            done + 1);
  // The 503 fails the whole request it is in (a batch, maybe): every VIN of
  // it is asked again; retries are the VINs asked beyond the 101 flights.
  int answered_503 = 0;
  for (const auto& r : fake_->Requests()) answered_503 += r.served == "503";
  EXPECT_EQ(answered_503, 1);
  EXPECT_EQ(m.at("vin_upstream_retries_total"), fake_->TotalVinsRequested() - 101);
  EXPECT_GE(m.at("vin_upstream_retries_total"), 1);
  EXPECT_EQ(m.at(R"(vin_upstream_requests_total{endpoint="single",result="retryable"})") +
                m.at(R"(vin_upstream_requests_total{endpoint="batch",result="retryable"})"),
            answered_503);
  // Each valid lookup was a hit or a miss; each miss created a flight or
  // joined one; 101 flights (100 VINs and the retried one) were created.
  EXPECT_EQ(m.at("vin_cache_hits_total") + m.at("vin_cache_misses_total"),
            400 + 1 + 1);
  EXPECT_EQ(m.at("vin_cache_misses_total") - m.at("vin_coalesced_waiters_total"),
            101);
  EXPECT_EQ(m.at("vin_cache_entries"), 101);
  EXPECT_EQ(Sum(m, "vin_decode_duration_seconds_count"), terminals + 2);
  EXPECT_EQ(Sum(m, "vin_upstream_request_duration_seconds_count"),
            fake_->TotalRequests());
  // Idle now: the gauges are back to zero.
  EXPECT_EQ(m.at("vin_flights_in_progress"), 0);
  EXPECT_EQ(m.at("vin_waiting_for_rate"), 0);
  EXPECT_EQ(m.at("vin_scheduler_pending"), 0);
  EXPECT_EQ(m.at("vin_batch_streams_open"), 0);
  EXPECT_EQ(m.at("vin_batch_items_in_window"), 0);
  EXPECT_EQ(m.at("vin_upstream_rate_per_minute"), 0) << "unlimited";
  EXPECT_EQ(m.count("vin_snapshot_info"), 0u);
}

TEST_F(MetricsTest, PushbackBudgetAndRateAreVisible) {
  server::ServerOptions o = WithMetrics();
  o.engine.budget.rate_per_minute = 600;
  o.engine.budget.retry_min_per_second = 0;  // no floor: share only
  o.engine.max_attempts = 4;
  StartServer(o);
  Script(ValidVin(1), "429:1,ok");
  vin::v1::DecodeResponse resp;
  grpc::Status s = Decode(ValidVin(1), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), HasSubstr("retry budget"));
  Samples m = Scrape();
  EXPECT_EQ(m.at("vin_upstream_pushback_total"), 1);
  EXPECT_GT(m.at("vin_upstream_rate_per_minute"), 299);
  EXPECT_LT(m.at("vin_upstream_rate_per_minute"), 600) << "cut, not yet back";
  EXPECT_EQ(m.at("vin_retry_budget_refused_total"), 1)
      << "one flight, a tenth of a retry: the 429's retry was refused";
}

TEST_F(MetricsTest, SnapshotInfoWhileOneIsLoaded) {
  SKIP_WITHOUT_SNAPSHOT();
  server::ServerOptions o = WithMetrics();
  o.snapshot_path = snapshot::testing::SnapshotPath();
  StartServer(o);
  ASSERT_NE(server_->snapshot(), nullptr);
  std::string body;
  const absl::Time before = absl::Now();
  ASSERT_EQ(HttpGet(server_->metrics_port(), "/metrics", &body), 200);
  const auto& info = server_->snapshot()->info();
  EXPECT_THAT(body, HasSubstr("vin_snapshot_info{sha256=\"" + info.sha256 +
                              "\",data_date=\"" + info.date + "\"} 1"));
  // Its data's age: from the data date (midnight UTC) to the scrape.
  absl::Time data_time;
  std::string error;
  ASSERT_TRUE(absl::ParseTime("%Y-%m-%d", info.date, absl::UTCTimeZone(),
                              &data_time, &error));
  const Samples m = Scrape();
  ASSERT_TRUE(m.count("vin_snapshot_age_seconds"));
  EXPECT_GE(m.at("vin_snapshot_age_seconds"),
            absl::ToDoubleSeconds(before - data_time) - 1);
  EXPECT_LE(m.at("vin_snapshot_age_seconds"),
            absl::ToDoubleSeconds(absl::Now() - data_time) + 1);
}

TEST_F(MetricsTest, OffUnlessAsked) {
  StartServer();
  EXPECT_EQ(server_->metrics_port(), 0);
}

TEST_F(MetricsTest, AnAddressInUseIsAClearError) {
  StartServer(WithMetrics());
  server::ServerOptions o = WithMetrics();
  o.listen = "127.0.0.1:0";
  o.metrics_listen = absl::StrCat("127.0.0.1:", server_->metrics_port());
  o.engine.vpic_base_url = fake_->base_url();
  auto second = server::VinServer::Start(o);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("cannot serve metrics on"));
}

}  // namespace
