// The fair order of the upstream queue (rule 17): interactive first, bulk's
// minimum share, tenants in turns with weights, places kept for retries.
// And the gate with it: bulk held to its share of the rate at peak hours,
// on fake times.
#include "upstream/fair_queue.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "upstream/local_budget.h"
#include "upstream/upstream_gate.h"

namespace upstream {
namespace {

using domain::Priority;
using testing::ElementsAre;
using Ticket = FairQueue::Ticket;

Ticket T(const std::string& vin, Priority p = Priority::kInteractive,
         const std::string& tenant = "default") {
  static uint64_t id = 0;
  return Ticket{{vin, 0}, ++id, p, tenant};
}
// Bulk's guaranteed share, no tenant weights.
FairShareOptions BulkShare(double share) {
  FairShareOptions o;
  o.bulk_min_share = share;
  return o;
}
// The gate as attempt_runner makes it: 50 VINs a request, bulk's 10 %
// share, and at most half the rate for bulk at peak hours.
GateOptions PeakGate() {
  GateOptions o;
  o.batch_max = 50;
  o.share = BulkShare(0.1);
  o.bulk_peak_share = 0.5;
  return o;
}
std::vector<std::string> Vins(const std::vector<Ticket>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) out.push_back(t.key.vin);
  return out;
}

TEST(FairQueue, InteractiveFlightsGoFirstThenBulkFillsTheRoom) {
  FairQueue q(BulkShare(0));
  q.Enqueue(T("b1", Priority::kBulk));
  q.Enqueue(T("b2", Priority::kBulk));
  q.Enqueue(T("i1"));
  q.Enqueue(T("b3", Priority::kBulk));
  q.Enqueue(T("i2"));
  EXPECT_THAT(Vins(q.Pick(3, true)), ElementsAre("i1", "i2", "b1"));
  EXPECT_THAT(Vins(q.Pick(3, false)), ElementsAre()) << "bulk not allowed";
  EXPECT_THAT(Vins(q.Pick(3, true)), ElementsAre("b2", "b3"));
}

TEST(FairQueue, BulkKeepsItsShareWhenInteractiveWouldFillEveryRequest) {
  for (size_t n : {size_t{50}, size_t{1}}) {
    SCOPED_TRACE(n);
    FairQueue q(BulkShare(0.1));
    int b = 0, i = 0;
    for (int k = 0; k < 2000; ++k) q.Enqueue(T(absl::StrCat("b", b++), Priority::kBulk));
    size_t bulk = 0, total = 0;
    for (int round = 0; round < 200; ++round) {
      // Interactive load that alone fills every request.
      while (q.waiting(Priority::kInteractive) < 2 * n) q.Enqueue(T(absl::StrCat("i", i++)));
      for (const Ticket& t : q.Pick(n, true)) {
        bulk += t.priority == Priority::kBulk;
        ++total;
      }
    }
    EXPECT_EQ(total, 200 * n);
    EXPECT_GE(static_cast<double>(bulk) / total, 0.1);
    EXPECT_LE(static_cast<double>(bulk) / total, 0.11) << "and not more";
  }
}

// Tenant A with eight streams' windows (2,048 flights in the queue), tenant
// B with one (256), both kept deep: each gets half the VINs, request after
// request; with weights 2:1, two thirds and one third.
TEST(FairQueue, TenantsTakeTurnsWhateverTheirNumberOfStreams) {
  for (double wa : {1.0, 2.0}) {
    SCOPED_TRACE(wa);
    FairShareOptions o;
    o.tenant_weights["A"] = wa;
    FairQueue q(o);
    int n = 0;
    std::map<std::string, int> queued;
    const auto refill = [&] {
      while (queued["A"] < 2048) { q.Enqueue(T(absl::StrCat("v", n++), Priority::kBulk, "A")); ++queued["A"]; }
      while (queued["B"] < 256) { q.Enqueue(T(absl::StrCat("v", n++), Priority::kBulk, "B")); ++queued["B"]; }
    };
    refill();
    for (int request = 0; request < 100; ++request) {
      std::map<std::string, int> sent;
      for (const Ticket& t : q.Pick(50, true)) {
        ++sent[t.tenant];
        --queued[t.tenant];
      }
      const double share_a = sent["A"] / 50.0;
      const double want = wa / (wa + 1);
      EXPECT_NEAR(share_a, want, 0.1 * want) << "request " << request;
      refill();
    }
  }
}

TEST(FairQueue, AFlightBackForARetryKeepsItsPlaceInItsTenant) {
  FairQueue q(BulkShare(0));
  const FairQueue::Seq a = q.Enqueue(T("A1", Priority::kBulk, "A"));
  q.Enqueue(T("A2", Priority::kBulk, "A"));
  ASSERT_THAT(Vins(q.Pick(1, true)), ElementsAre("A1"));
  q.Enqueue(T("A3", Priority::kBulk, "A"));
  q.Enqueue(T("A1", Priority::kBulk, "A"), a);  // back for its retry
  EXPECT_THAT(Vins(q.Pick(3, true)), ElementsAre("A1", "A2", "A3"));
}

TEST(FairQueue, OneVinOncePerRequestAndRemovedFlightsDoNotTravel) {
  FairQueue q(BulkShare(0));
  q.Enqueue(T("X"));
  q.Enqueue(T("X", Priority::kBulk));
  const FairQueue::Seq gone = q.Enqueue(T("Y"));
  q.Enqueue(T("Z", Priority::kBulk, "other"));
  q.Remove(gone);
  q.Remove(gone);
  EXPECT_THAT(Vins(q.Pick(5, true)), ElementsAre("X", "Z"));
  EXPECT_THAT(Vins(q.Pick(5, true)), ElementsAre("X"));
  EXPECT_EQ(q.waiting(), 0u);
}

TEST(FairQueue, AheadCountsWhatGoesFirst) {
  FairQueue q(BulkShare(0.1));
  for (int k = 0; k < 100; ++k) q.Enqueue(T(absl::StrCat("b", k), Priority::kBulk, "feed"));
  for (int k = 0; k < 10; ++k) q.Enqueue(T(absl::StrCat("i", k)));
  EXPECT_EQ(q.Ahead(0, Priority::kInteractive, "default"), 10)
      << "a new interactive flight: the ten before it, no bulk";
  EXPECT_EQ(q.Ahead(0, Priority::kBulk, "feed"), 110) << "every one";
  EXPECT_EQ(q.Ahead(0, Priority::kBulk, "newcomer"), 10 + 1)
      << "a new tenant's first flight: the interactive ones, and the other "
         "tenant's turn";
}

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

// At peak hours bulk alone gets its share of the rate (600/min, half:
// 5 requests a second); off peak, all of it; interactive flights meanwhile
// are not held by bulk's share.
TEST(UpstreamGatePeak, BulkUsesItsShareOfTheRateAtPeakHoursAndAllOfItOutside) {
  for (bool peak : {true, false}) {
    SCOPED_TRACE(peak);
    BudgetOptions b;
    b.rate_per_minute = 600;
    b.burst = 1;
    LocalBudget budget(b, kT0);
    UpstreamGate gate(&budget, PeakGate(), kT0);
    int n = 0;
    int requests = 0;
    absl::Time now = kT0;
    for (; now < kT0 + absl::Seconds(60); now += absl::Milliseconds(10)) {
      while (gate.waiting() < 500) gate.Enqueue(T(absl::StrCat("b", n++), Priority::kBulk));
      while (!gate.Take(now, peak).empty()) ++requests;
    }
    EXPECT_NEAR(requests, peak ? 300 : 600, 3);
  }
  // At peak, with bulk's share used up, an interactive flight goes at the
  // next token of the budget (and bulk does not ride along in it).
  BudgetOptions b;
  b.rate_per_minute = 600;
  b.burst = 1;
  LocalBudget budget(b, kT0);
  UpstreamGate gate(&budget, PeakGate(), kT0);
  for (int k = 0; k < 500; ++k) gate.Enqueue(T(absl::StrCat("b", k), Priority::kBulk));
  absl::Time now = kT0;
  ASSERT_EQ(gate.Take(now, true).size(), 50u);
  now += absl::Milliseconds(100);  // a token of the budget, none of bulk's
  EXPECT_TRUE(gate.Take(now, true).empty());
  EXPECT_EQ(gate.NextStart(now, true), kT0 + absl::Milliseconds(200))
      << "bulk's next token: 5 a second";
  gate.Enqueue(T("person"));
  EXPECT_EQ(gate.NextStart(now, true), now);
  EXPECT_THAT(Vins(gate.Take(now, true)), ElementsAre("person"));
}

}  // namespace
}  // namespace upstream
