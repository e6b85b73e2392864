#include "coalesce/flight_table.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace coalesce {
namespace {

struct State {
  int attempts = 0;
};
using Table = FlightTable<State, std::string>;

TEST(FlightTable, SameKeyJoinsOneFlight) {
  Table t;
  auto [a, created_a] = t.Join({"1HGCM82633A004352", 0}, 1, "first");
  auto [b, created_b] = t.Join({"1HGCM82633A004352", 0}, 2, "second");
  EXPECT_TRUE(created_a);
  EXPECT_FALSE(created_b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(t.flights(), 1u);
  EXPECT_EQ(t.waiters(), 2u);
  EXPECT_EQ(a->waiters.size(), 2u);
}

TEST(FlightTable, ModelYearHintIsPartOfTheKey) {
  Table t;
  auto [a, ca] = t.Join({"1FTMW1T88MFA00001", 0}, 1, "w");
  auto [b, cb] = t.Join({"1FTMW1T88MFA00001", 2021}, 2, "w");
  EXPECT_TRUE(ca);
  EXPECT_TRUE(cb);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.flights(), 2u);
}

TEST(FlightTable, LeaveReturnsPayloadAndFlight) {
  Table t;
  auto [f, created] = t.Join({"1G4AH59H45G118341", 0}, 7, "seven");
  std::string payload;
  EXPECT_EQ(t.FlightOf(7), f);
  EXPECT_EQ(t.Leave(7, &payload), f);
  EXPECT_EQ(payload, "seven");
  EXPECT_TRUE(f->waiters.empty());
  EXPECT_EQ(t.Leave(7, &payload), nullptr);  // already gone
  EXPECT_EQ(t.FlightOf(7), nullptr);
  EXPECT_EQ(t.waiters(), 0u);
  EXPECT_EQ(t.flights(), 1u);  // the owner decides when to erase
}

TEST(FlightTable, EraseHandsBackWaitersInJoinOrder) {
  Table t;
  const FlightKey key{"1M8GDM9AXKP042788", 0};
  for (WaiterId id : {5, 3, 9}) t.Join(key, id, std::to_string(id));
  Table::Flight* f = t.Find(key);
  ASSERT_NE(f, nullptr);
  auto waiters = t.Erase(f);
  std::vector<WaiterId> ids;
  for (const auto& [id, w] : waiters) ids.push_back(id);
  EXPECT_EQ(ids, (std::vector<WaiterId>{3, 5, 9}));
  EXPECT_EQ(t.flights(), 0u);
  EXPECT_EQ(t.waiters(), 0u);
  EXPECT_EQ(t.FlightOf(5), nullptr);
  EXPECT_EQ(t.Find(key), nullptr);
}

TEST(FlightTable, FlightIdTellsANewFlightFromAStaleOne) {
  Table t;
  const FlightKey key{"1HGCM82633A004352", 0};
  auto [old_flight, c1] = t.Join(key, 1, "a");
  const uint64_t old_id = old_flight->id;
  t.Erase(old_flight);
  auto [new_flight, c2] = t.Join(key, 2, "b");
  EXPECT_TRUE(c2);
  EXPECT_EQ(t.Find(key, old_id), nullptr);
  EXPECT_EQ(t.Find(key, new_flight->id), new_flight);
}

}  // namespace
}  // namespace coalesce
