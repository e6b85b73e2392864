// Rule 17 in the engine, on a fake clock against a scripted upstream that
// answers every request at once: interactive calls ahead of bulk feeds,
// tenants in fair turns whatever their number of streams, bulk's minimum
// share, bulk's share of the rate at NHTSA's peak hours (New York time,
// across a daylight-saving change).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "manual_engine_fixture.h"
#include "testing/vin_gen.h"
#include "upstream/peak_hours.h"

namespace engine {
namespace {

using domain::Priority;
using testing_util::ValidVin;

constexpr absl::Duration kStep = absl::Milliseconds(10);

// A caller that only counts its end.
class Counted final : public DecodeListener {
 public:
  explicit Counted(int* ended) : ended_(ended) {}
  void OnQueued(const Queued&) override {}
  void OnRetrying(const Retrying&) override {}
  void OnDone(std::shared_ptr<const DecodeResult>) override { ++*ended_; done = true; }
  void OnFailed(const Failure&) override { ++*ended_; }
  bool done = false;

 private:
  int* const ended_;
};

// A DecodeBatch stream: `window` items in progress, the next sent when one
// ends, `total` in all, each a new VIN.
struct Feed {
  std::string tenant;
  Priority priority = Priority::kBulk;
  int window = 256;
  int total = 5000;
  uint64_t first_vin = 0;  // ValidVin(first_vin + i) for item i
  int sent = 0;
  int ended = 0;
  absl::Time finished = absl::InfiniteFuture();
  std::vector<std::unique_ptr<Counted>> items;
};

class FairShareTest : public ManualEngineTest {
 protected:
  static EngineOptions Options() {
    EngineOptions o;
    o.budget.rate_per_minute = 600;  // a token every 100 ms
    o.budget.burst = 1;
    o.upstream_batch_max = 50;
    o.max_upstream_concurrency = 1000;
    o.breaker.failures = 0;
    o.uniform = Cycling();
    o.retry_base = absl::Milliseconds(100);  // the feeds' stagger
    return o;
  }

  // Moves the clock to `local` in New York before the engine is made.
  void StartAt(absl::CivilSecond local) {
    absl::TimeZone ny;
    ASSERT_TRUE(absl::LoadTimeZone("America/New_York", &ny)) << "tzdata installed?";
    clock_.Advance(absl::FromCivil(local, ny) - clock_.Now());
  }

  void Refill(Feed& f) {
    while (f.sent < f.total && f.sent - f.ended < f.window) {
      DecodeRequest r;
      r.vin = ValidVin(f.first_vin + static_cast<uint64_t>(f.sent++));
      r.stagger = true;
      r.priority = f.priority;
      r.tenant = f.tenant;
      f.items.push_back(std::make_unique<Counted>(&f.ended));
      ASSERT_TRUE(engine_->Submit(r, f.items.back().get()).ok());
      tenant_of_[r.vin] = f.tenant;
    }
    if (f.ended == f.total && f.finished == absl::InfiniteFuture()) {
      f.finished = clock_.Now();
    }
  }

  // Runs for `d` (or until every feed has finished), the feeds refilled
  // and every open request answered at each step; `each` runs first at
  // every step.
  template <typename Each>
  void Run(std::vector<Feed>& feeds, absl::Duration d, Each each) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      each();
      bool all = true;
      for (Feed& f : feeds) {
        Refill(f);
        all &= f.finished != absl::InfiniteFuture();
      }
      if (all && !feeds.empty()) return;
      upstream_->ReplyAll([this](vpic::UpstreamClient::RequestId id) {
        return upstream_->Ok(id);
      });
      Turn();
      clock_.Advance(kStep);
    }
  }
  void Run(std::vector<Feed>& feeds, absl::Duration d) {
    Run(feeds, d, [] {});
  }

  // VINs sent per tenant in [from, to).
  std::map<std::string, int> SentBy(absl::Time from, absl::Time to) const {
    std::map<std::string, int> out;
    for (const auto& s : upstream_->sent()) {
      if (s.at < from || s.at >= to) continue;
      for (const auto& e : s.entries) ++out[tenant_of_.at(e.vin)];
    }
    return out;
  }
  int RequestsIn(absl::Time from, absl::Time to) const {
    int n = 0;
    for (const auto& s : upstream_->sent()) n += s.at >= from && s.at < to;
    return n;
  }
  absl::Time SentAt(const std::string& vin) const {
    for (const auto& s : upstream_->sent()) {
      for (const auto& e : s.entries) {
        if (e.vin == vin) return s.at;
      }
    }
    return absl::InfiniteFuture();
  }

  // The engine goes before the feeds' callers do (it fails what waits).
  void Stop() { engine_.reset(); }

  std::map<std::string, std::string> tenant_of_;
};

std::vector<Feed> EightFeeds() {
  std::vector<Feed> feeds(8);
  for (int k = 0; k < 8; ++k) {
    feeds[k].tenant = absl::StrCat("feed", k);
    feeds[k].first_vin = 1000000 * static_cast<uint64_t>(k + 1);
  }
  return feeds;
}

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

// QUEUED tells each caller honestly how long its flight will wait in the
// new order: an interactive flight ahead of a bulk backlog is not waiting
// for the rate; a bulk flight behind it is, about as long as it then
// waits; at peak hours, about twice as long (bulk at half the rate).
TEST_F(FairShareTest, QueuedSaysHowLongEachWaitsInTheFairOrder) {
  for (bool peak : {false, true}) {
    SCOPED_TRACE(peak);
    StartAt(absl::CivilSecond(2026, 12, 1, 10, 0, 0));  // a Tuesday morning
    EngineOptions o = Options();
    if (peak) {
      auto p = upstream::PeakHours::Parse("Mon-Fri 06:00-18:00 America/New_York");
      ASSERT_TRUE(p.ok());
      o.peak_hours = *p;
    }
    Make(o);
    std::vector<Feed> none;
    std::vector<std::unique_ptr<Counted>> callers;
    int ended = 0;
    for (int i = 0; i < 1000; ++i) {  // a backlog: 20 requests
      DecodeRequest r;
      r.vin = ValidVin(7000000 + i);
      r.priority = Priority::kBulk;
      callers.push_back(std::make_unique<Counted>(&ended));
      ASSERT_TRUE(engine_->Submit(r, callers.back().get()).ok());
    }
    Turn();
    DecodeRequest person;
    person.vin = ValidVin(8000000);
    testing_util::RecordingListener* p = Submit(person);
    DecodeRequest late;
    late.vin = ValidVin(8000001);
    late.priority = Priority::kBulk;
    testing_util::RecordingListener* l = Submit(late);
    Turn();
    ASSERT_FALSE(p->events().empty());
    EXPECT_FALSE(p->events().front().queued.waiting_for_rate)
        << "the person's flight goes with the next token";
    ASSERT_FALSE(l->events().empty());
    const Queued q = l->events().front().queued;  // a copy: events grow
    ASSERT_TRUE(q.waiting_for_rate);
    EXPECT_EQ(q.bulk_peak_hours, peak)
        << "a bulk flight says when it waits for NHTSA's peak hours";
    Run(none, absl::Seconds(10));
    const absl::Duration waited = SentAt(late.vin) - t0_;
    EXPECT_LE(SentAt(person.vin) - t0_, absl::Milliseconds(100));
    EXPECT_NEAR(absl::ToDoubleSeconds(q.estimated_wait), absl::ToDoubleSeconds(waited),
                0.25)
        << "estimated " << q.estimated_wait << ", waited " << waited;
    EXPECT_NEAR(absl::ToDoubleSeconds(waited), peak ? 4.0 : 2.0, 0.3);
    Stop();
  }
}

// A flight counts for the most urgent of its waiters: a bulk item queued
// behind a backlog goes with the next token once a person asks for the
// same VIN, and counts for that person's tenant.
TEST_F(FairShareTest, AFlightCountsForItsMostUrgentWaiter) {
  Make(Options());
  std::vector<std::unique_ptr<Counted>> callers;
  int ended = 0;
  const auto submit = [&](const std::string& vin, Priority p, const std::string& tenant) {
    DecodeRequest r;
    r.vin = vin;
    r.priority = p;
    r.tenant = tenant;
    callers.push_back(std::make_unique<Counted>(&ended));
    ASSERT_TRUE(engine_->Submit(r, callers.back().get()).ok());
  };
  for (int i = 0; i < 1000; ++i) submit(ValidVin(6000000 + i), Priority::kBulk, "feed");
  const std::string shared = ValidVin(6100000);
  submit(shared, Priority::kBulk, "feed");  // behind the backlog: about 2 s
  Turn();
  clock_.Advance(absl::Milliseconds(300));
  const absl::Time asked = clock_.Now();
  submit(shared, Priority::kInteractive, "person");
  std::vector<Feed> none;
  Run(none, absl::Seconds(5));
  EXPECT_LE(SentAt(shared) - asked, absl::Milliseconds(100))
      << "it went with the next token, ahead of the feed's backlog";
  EXPECT_EQ(ended, 1002) << "both of its callers, and the backlog, answered";
  int person = 0;
  for (const auto& sent : upstream_->sent()) {
    for (const auto& e : sent.entries) person += e.vin == shared;
  }
  EXPECT_EQ(person, 1) << "one flight for both callers";
  Stop();
}

// A person who asks for a VIN that a feed's item is still staggering does
// not wait out the stagger.
TEST_F(FairShareTest, APersonDoesNotWaitOutAFeedItemsStagger) {
  EngineOptions o = Options();
  o.retry_base = absl::Seconds(10);  // staggers of up to 10 s
  o.retry_cap = absl::Seconds(20);
  o.uniform = [] { return 0.95; };   // this one: 9.5 s
  Make(o);
  const std::string vin = ValidVin(6200000);
  int ended = 0;
  Counted item(&ended), person(&ended);
  DecodeRequest r;
  r.vin = vin;
  r.priority = Priority::kBulk;
  r.stagger = true;
  ASSERT_TRUE(engine_->Submit(r, &item).ok());
  Turn();
  clock_.Advance(absl::Seconds(1));
  r.priority = Priority::kInteractive;
  r.stagger = false;
  ASSERT_TRUE(engine_->Submit(r, &person).ok());
  std::vector<Feed> none;
  Run(none, absl::Seconds(1));
  EXPECT_LE(SentAt(vin) - t0_, absl::Seconds(1) + absl::Milliseconds(50));
  EXPECT_EQ(ended, 2);
  Stop();
}

}  // namespace
}  // namespace engine
