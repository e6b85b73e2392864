// Rule 17 in the engine, continued (fixture: fair_share_fixture.h): what
// QUEUED tells each caller of its wait in the fair order, a flight counted
// for its most urgent waiter, and a person who joins a feed item's flight
// not waiting out its stagger.
#include "fair_share_fixture.h"

namespace engine {
namespace fair_share_test {
namespace {

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
}  // namespace fair_share_test
}  // namespace engine
