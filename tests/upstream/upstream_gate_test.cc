#include "upstream/upstream_gate.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "upstream/local_budget.h"

namespace upstream {
namespace {

using testing::ElementsAre;

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

std::vector<std::string> Vins(const std::vector<UpstreamGate::Ticket>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) out.push_back(t.key.vin);
  return out;
}

BudgetOptions Rate(double per_minute, double burst) {
  BudgetOptions o;
  o.rate_per_minute = per_minute;
  o.burst = burst;
  return o;
}

TEST(UpstreamGate, ALoneReadyFlightLeavesAloneAtOnce) {
  LocalBudget budget(Rate(60, 1), kT0);
  UpstreamGate gate(&budget, 50);
  gate.Enqueue({{"A", 0}, 1});
  EXPECT_THAT(Vins(gate.Take(kT0)), ElementsAre("A"));
  EXPECT_EQ(gate.waiting(), 0u);
}

TEST(UpstreamGate, TheBacklogLeavesInBatchesInOrder) {
  LocalBudget budget(Rate(60, 1), kT0);
  UpstreamGate gate(&budget, 3);
  ASSERT_EQ(Vins(gate.Take(kT0)).size(), 0u) << "nothing waits";
  for (const char* v : {"A", "B", "C", "D", "E"}) gate.Enqueue({{v, 0}, 1});
  EXPECT_THAT(Vins(gate.Take(kT0)), ElementsAre("A", "B", "C"));
  EXPECT_TRUE(gate.Take(kT0).empty()) << "one token a second";
  EXPECT_EQ(gate.NextStart(kT0), kT0 + absl::Seconds(1));
  EXPECT_THAT(Vins(gate.Take(kT0 + absl::Seconds(1))), ElementsAre("D", "E"));
  EXPECT_FALSE(gate.NextStart(kT0).has_value());
}

TEST(UpstreamGate, OneVinOncePerBatch) {
  LocalBudget budget(Rate(0, 1), kT0);
  UpstreamGate gate(&budget, 50);
  gate.Enqueue({{"A", 0}, 1});
  gate.Enqueue({{"A", 2011}, 2});
  gate.Enqueue({{"B", 0}, 3});
  std::vector<UpstreamGate::Ticket> first = gate.Take(kT0);
  EXPECT_THAT(Vins(first), ElementsAre("A", "B"));
  EXPECT_EQ(first[0].key.model_year, 0);
  std::vector<UpstreamGate::Ticket> second = gate.Take(kT0);
  ASSERT_THAT(Vins(second), ElementsAre("A"));
  EXPECT_EQ(second[0].key.model_year, 2011);
}

TEST(UpstreamGate, AFlightBackForARetryKeepsItsPlace) {
  LocalBudget budget(Rate(0, 1), kT0);
  UpstreamGate gate(&budget, 2);
  const UpstreamGate::Seq a = gate.Enqueue({{"A", 0}, 1});
  gate.Enqueue({{"B", 0}, 2});
  ASSERT_THAT(Vins(gate.Take(kT0)), ElementsAre("A", "B"));
  gate.Enqueue({{"C", 0}, 3});
  gate.Enqueue({{"D", 0}, 4});
  gate.Enqueue({{"A", 0}, 1}, a);  // A failed and is back for its retry
  EXPECT_THAT(Vins(gate.Take(kT0)), ElementsAre("A", "C"));
  EXPECT_THAT(Vins(gate.Take(kT0)), ElementsAre("D"));
}

TEST(UpstreamGate, RemovedFlightsDoNotTravel) {
  LocalBudget budget(Rate(0, 1), kT0);
  UpstreamGate gate(&budget, 50);
  gate.Enqueue({{"A", 0}, 1});
  const UpstreamGate::Seq b = gate.Enqueue({{"B", 0}, 2});
  gate.Enqueue({{"C", 0}, 3});
  gate.Remove(b);
  gate.Remove(b);  // twice is harmless
  EXPECT_THAT(Vins(gate.Take(kT0)), ElementsAre("A", "C"));
}

TEST(UpstreamGate, EstimatedStartCountsTheRequestsAhead) {
  LocalBudget budget(Rate(60, 1), kT0);
  UpstreamGate gate(&budget, 10);
  std::vector<UpstreamGate::Seq> seqs;
  for (int i = 0; i < 25; ++i) {
    seqs.push_back(gate.Enqueue({{"V" + std::to_string(i), 0}, 1}));
  }
  // One token now (burst 1), then one a second; ten flights per request.
  EXPECT_EQ(gate.EstimatedStart(seqs[0], kT0), kT0);
  EXPECT_EQ(gate.EstimatedStart(seqs[9], kT0), kT0);
  EXPECT_EQ(gate.EstimatedStart(seqs[10], kT0), kT0 + absl::Seconds(1));
  EXPECT_EQ(gate.EstimatedStart(seqs[24], kT0), kT0 + absl::Seconds(2));
  EXPECT_EQ(gate.EstimatedStart(0, kT0), kT0 + absl::Seconds(2))
      << "a flight queued now would be the 26th";
  budget.OnPushback(kT0, absl::Seconds(5));  // pause, and 30/min
  EXPECT_EQ(gate.EstimatedStart(seqs[0], kT0), kT0 + absl::Seconds(7));
}

}  // namespace
}  // namespace upstream
