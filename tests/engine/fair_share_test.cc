// Rule 17 in the engine, on a fake clock against a scripted upstream that
// answers every request at once: interactive calls ahead of bulk feeds,
// tenants in fair turns whatever their number of streams, bulk's minimum
// share, bulk's share of the rate at NHTSA's peak hours (New York time,
// across a daylight-saving change).
#include "fair_share_fixture.h"

namespace engine {
namespace fair_share_test {
namespace {

// Eight cold feeds of 5,000 VINs (window 256 each) at 600 requests a
// minute, and 20 unary Decodes of new VINs spread over their run: each
// unary's upstream request starts within two token intervals of its
// arrival, and the feeds lose at most 5% of their throughput.
TEST_F(FairShareTest, InteractiveCallsGoAheadOfEightBulkFeeds) {
  Make(Options());
  std::vector<Feed> alone = EightFeeds();
  Run(alone, absl::Minutes(5));
  absl::Time last_alone = t0_;
  for (const Feed& f : alone) {
    ASSERT_NE(f.finished, absl::InfiniteFuture()) << f.tenant;
    last_alone = std::max(last_alone, f.finished);
  }
  const absl::Duration feeds_alone = last_alone - t0_;

  Make(Options());  // a new engine, the same clock
  tenant_of_.clear();
  std::vector<Feed> feeds = EightFeeds();
  for (Feed& f : feeds) f.first_vin += 100000;  // cold again
  std::vector<std::pair<std::string, absl::Time>> unary;
  std::vector<std::unique_ptr<Counted>> callers;
  int unary_ended = 0;
  const absl::Duration every = feeds_alone / 22;
  absl::Time next = t0_ + every;
  Run(feeds, absl::Minutes(5), [&] {
    if (unary.size() >= 20 || clock_.Now() < next) return;
    next += every;
    DecodeRequest r;
    r.vin = ValidVin(900000000 + unary.size());
    r.tenant = "person";
    callers.push_back(std::make_unique<Counted>(&unary_ended));
    ASSERT_TRUE(engine_->Submit(r, callers.back().get()).ok());
    tenant_of_[r.vin] = "person";
    unary.emplace_back(r.vin, clock_.Now());
  });
  ASSERT_EQ(unary.size(), 20u);
  for (const auto& [vin, arrived] : unary) {
    EXPECT_LE(SentAt(vin) - arrived, absl::Milliseconds(200))
        << vin << " waited behind bulk work";
  }
  EXPECT_EQ(unary_ended, 20);
  absl::Time last = t0_;
  for (const Feed& f : feeds) {
    ASSERT_NE(f.finished, absl::InfiniteFuture()) << f.tenant;
    last = std::max(last, f.finished);
  }
  EXPECT_LE(absl::ToDoubleSeconds(last - t0_),
            1.05 * absl::ToDoubleSeconds(feeds_alone))
      << "the feeds alone took " << feeds_alone;
  Stop();
}

// Tenant A with eight streams and tenant B with one, both with deep
// backlogs: over every 10 s window each gets half the VINs (within 10%);
// with weights 2:1, two thirds and one third.
TEST_F(FairShareTest, TenantsTakeFairTurnsWhateverTheirStreams) {
  for (double weight_a : {1.0, 2.0}) {
    SCOPED_TRACE(weight_a);
    EngineOptions o = Options();
    if (weight_a != 1) o.share.tenant_weights["A"] = weight_a;
    Make(o);
    tenant_of_.clear();
    std::vector<Feed> feeds(9);
    for (int k = 0; k < 9; ++k) {
      feeds[k].tenant = k < 8 ? "A" : "B";
      feeds[k].total = 1000000;  // deep
      feeds[k].first_vin = 100000000 * static_cast<uint64_t>(weight_a) +
                           1000000 * static_cast<uint64_t>(k + 1);
    }
    Run(feeds, absl::Seconds(40));
    const double want_a = weight_a / (weight_a + 1);
    for (int w = 0; w < 4; ++w) {
      const absl::Time from = t0_ + absl::Seconds(10 * w);
      std::map<std::string, int> sent = SentBy(from, from + absl::Seconds(10));
      const double total = sent["A"] + sent["B"];
      ASSERT_GT(total, 0);
      EXPECT_NEAR(sent["A"] / total, want_a, 0.1 * want_a)
          << "window " << w << ": A " << sent["A"] << ", B " << sent["B"];
    }
    Stop();
  }
}

// Interactive load that alone would fill the rate (a window of 300 new
// VINs always waiting) still leaves bulk at least --bulk_min_share.
TEST_F(FairShareTest, BulkKeepsItsMinimumShare) {
  Make(Options());
  std::vector<Feed> feeds(2);
  feeds[0].tenant = "people";
  feeds[0].priority = Priority::kInteractive;
  feeds[0].window = 300;
  feeds[0].total = 1000000;
  feeds[0].first_vin = 1000000;
  feeds[1].tenant = "feed";
  feeds[1].total = 1000000;
  feeds[1].first_vin = 50000000;
  for (Feed& f : feeds) f.items.reserve(20000);
  Run(feeds, absl::Seconds(20));
  std::map<std::string, int> sent = SentBy(t0_, clock_.Now());
  const double total = sent["people"] + sent["feed"];
  ASSERT_GT(total, 5000);
  EXPECT_GE(sent["feed"] / total, 0.1) << "people " << sent["people"];
  EXPECT_LE(sent["feed"] / total, 0.12) << "and bulk gets no more";
  Stop();
}

// On a Tuesday at 10:00 New York time bulk work alone gets half the rate;
// it gets all of it from 18:00 local on, and at 22:00, and on a Sunday.
TEST_F(FairShareTest, BulkUsesHalfTheRateDuringNhtsasPeakHoursOnly) {
  struct Case {
    absl::CivilSecond start;  // New York time
    int requests_first_10s;
    int requests_next_10s;
  };
  for (const Case& c : {
           Case{absl::CivilSecond(2026, 12, 1, 10, 0, 0), 50, 50},    // Tuesday
           Case{absl::CivilSecond(2026, 12, 1, 17, 59, 50), 50, 100},  // until 18:00
           Case{absl::CivilSecond(2026, 12, 1, 22, 0, 0), 100, 100},
           Case{absl::CivilSecond(2026, 12, 6, 10, 0, 0), 100, 100},   // Sunday
           // Monday March 9, 2026, the day after clocks went forward.
           Case{absl::CivilSecond(2026, 3, 9, 17, 59, 50), 50, 100},
       }) {
    SCOPED_TRACE(absl::FormatCivilTime(c.start));
    StartAt(c.start);
    EngineOptions o = Options();
    auto peak = upstream::PeakHours::Parse("Mon-Fri 06:00-18:00 America/New_York");
    ASSERT_TRUE(peak.ok());
    o.peak_hours = *peak;
    o.bulk_peak_share = 0.5;
    Make(o);
    tenant_of_.clear();
    std::vector<Feed> feeds(1);
    feeds[0].tenant = "feed";
    feeds[0].total = 1000000;
    feeds[0].window = 5000;
    feeds[0].first_vin = static_cast<uint64_t>(absl::ToUnixSeconds(clock_.Now()));
    Run(feeds, absl::Seconds(20));
    // Within a request or two: the burst, and the steps of the clock.
    EXPECT_NEAR(RequestsIn(t0_, t0_ + absl::Seconds(10)), c.requests_first_10s, 2);
    EXPECT_NEAR(RequestsIn(t0_ + absl::Seconds(10), t0_ + absl::Seconds(20)),
                c.requests_next_10s, 2);
    Stop();
  }
}

}  // namespace
}  // namespace fair_share_test
}  // namespace engine
