// A flight's phase as a type (flight_phase.h): the transitions a flight
// may make (a table), the data each phase holds and no other, a request's
// answer taken only from the request the flight waits for, and Stop
// handing back the work to undo.
#include "engine/flight_phase.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "gtest/gtest.h"

namespace engine {
namespace {

using Kind = FlightPhase::Kind;

TEST(FlightPhase, TheTransitionsAFlightMayMake) {
  const std::vector<std::pair<Kind, Kind>> allowed = {
      {Kind::kIdle, Kind::kStaggering},
      {Kind::kIdle, Kind::kQueued},
      {Kind::kStaggering, Kind::kIdle},
      {Kind::kQueued, Kind::kSending},
      {Kind::kSending, Kind::kSending},
      {Kind::kSending, Kind::kAnswered},
      {Kind::kAnswered, Kind::kWaitingToRetry},
      {Kind::kWaitingToRetry, Kind::kIdle},
  };
  for (size_t from = 0; from < FlightPhase::kKinds; ++from) {
    for (size_t to = 0; to < FlightPhase::kKinds; ++to) {
      const std::pair<Kind, Kind> move{static_cast<Kind>(from),
                                       static_cast<Kind>(to)};
      const bool expected =
          std::find(allowed.begin(), allowed.end(), move) != allowed.end();
      EXPECT_EQ(FlightPhase::Allowed(move.first, move.second), expected)
          << FlightPhase::Name(move.first) << " -> "
          << FlightPhase::Name(move.second);
    }
  }
}

TEST(FlightPhase, EachKindNamesItsPhase) {
  FlightPhase p;
  EXPECT_EQ(p.kind(), Kind::kIdle);
  EXPECT_TRUE(std::holds_alternative<FlightPhase::Idle>(p.state()));
  EXPECT_STREQ(FlightPhase::Name(Kind::kWaitingToRetry), "waiting to retry");
  static_assert(std::variant_size_v<FlightPhase::State> == FlightPhase::kKinds);
}

TEST(FlightPhase, AStaggeredFirstAttemptThenARetryThenAnAnswer) {
  FlightPhase p;
  p.Stagger(11);
  EXPECT_EQ(p.kind(), Kind::kStaggering);
  EXPECT_EQ(p.wakeup(), 11u);
  EXPECT_EQ(p.get<FlightPhase::Queued>(), nullptr);
  EXPECT_FALSE(p.retry_at());

  p.EndWait();
  EXPECT_EQ(p.kind(), Kind::kIdle);
  EXPECT_FALSE(p.wakeup());
  p.Queue(5);
  ASSERT_NE(p.get<FlightPhase::Queued>(), nullptr);
  EXPECT_EQ(p.get<FlightPhase::Queued>()->ticket, 5u);
  EXPECT_FALSE(p.sending());

  p.Send();
  EXPECT_TRUE(p.sending());
  EXPECT_EQ(p.get<FlightPhase::Sending>()->request, 0u);  // not started yet
  EXPECT_EQ(p.get<FlightPhase::Queued>(), nullptr);
  p.Carried(42);
  EXPECT_EQ(p.get<FlightPhase::Sending>()->request, 42u);

  const absl::Time at = absl::UnixEpoch() + absl::Seconds(3);
  ASSERT_TRUE(p.Answer(42));
  EXPECT_EQ(p.kind(), Kind::kAnswered);
  p.AwaitRetry(12, at);
  EXPECT_EQ(p.kind(), Kind::kWaitingToRetry);
  EXPECT_EQ(p.wakeup(), 12u);
  EXPECT_EQ(p.retry_at(), at);

  p.EndWait();
  EXPECT_FALSE(p.retry_at());  // the retry time goes with its wait
  p.Queue(5);                  // its place kept (the engine's)
  p.Send();
  p.Carried(43);
  ASSERT_TRUE(p.Answer(43));
}

TEST(FlightPhase, AnAnswerCountsOnlyFromTheRequestTheFlightWaitsFor) {
  FlightPhase p;
  EXPECT_FALSE(p.Answer(1));  // idle: no request
  p.Queue(1);
  EXPECT_FALSE(p.Answer(1));
  p.Send();
  p.Carried(7);
  EXPECT_FALSE(p.Answer(8));
  EXPECT_TRUE(p.sending());
  EXPECT_TRUE(p.Answer(7));
  EXPECT_FALSE(p.Answer(7));  // once
}

TEST(FlightPhase, StopEndsAnyPhaseAndHandsBackItsWork) {
  FlightPhase p;
  p.Stagger(3);
  FlightPhase::State was = p.Stop();
  EXPECT_EQ(std::get<FlightPhase::Staggering>(was).wakeup, 3u);
  EXPECT_EQ(p.kind(), Kind::kIdle);

  p.Queue(9);
  was = p.Stop();
  EXPECT_EQ(std::get<FlightPhase::Queued>(was).ticket, 9u);

  p.Queue(9);
  p.Send();
  p.Carried(4);
  was = p.Stop();
  EXPECT_EQ(std::get<FlightPhase::Sending>(was).request, 4u);
  EXPECT_FALSE(p.sending());

  was = p.Stop();  // idle: nothing to undo
  EXPECT_TRUE(std::holds_alternative<FlightPhase::Idle>(was));
}

}  // namespace
}  // namespace engine
