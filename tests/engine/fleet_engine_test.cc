// Fleet mode in the engine on a fake clock (src/engine/fleet.cc): several
// engines sharing one in-memory fleet (the state RedisFleet keeps in Redis),
// each in front of a scripted upstream: one flight per VIN across them, the
// owner's events relayed, takeover when an owner stops renewing its lease or
// leaves, and going on alone when the fleet does not answer. With a real
// Redis and HTTP: tests/fleet/fleet_flights_test.cc.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet_engine_fixture.h"
#include "testing/vin_gen.h"

namespace engine {
namespace {

using testing_util::ValidVin;

TEST_F(FleetEngineTest, OneFlightAcrossReplicasTheOthersJoinIt) {
  Node* a = Make("a");
  Node* b = Make("b");
  const std::string vin = ValidVin(1);
  RecordingListener* la = Submit(a, vin);
  Turn();
  ASSERT_EQ(a->upstream->sent().size(), 1u);
  RecordingListener* lb1 = Submit(b, vin);
  RecordingListener* lb2 = Submit(b, vin);
  Turn();
  EXPECT_EQ(b->upstream->sent().size(), 0u) << "B joined A's flight";
  ASSERT_FALSE(lb1->events().empty());
  EXPECT_TRUE(lb1->events().front().coalesced) << "joined a flight on A";
  EXPECT_TRUE(lb2->events().front().coalesced);
  EXPECT_FALSE(la->events().front().coalesced);
  a->upstream->Reply(1, a->upstream->Ok(1));
  Turn();
  for (RecordingListener* l : {la, lb1, lb2}) {
    ASSERT_EQ(Kinds(l), (std::vector<std::string>{"queued", "done"}));
    EXPECT_EQ(*l->events().back().result->encoded,
              *la->events().back().result->encoded)
        << "every waiter gets the owner's result";
    EXPECT_EQ(l->events().back().result->source, Source::kVpic);
  }
  EXPECT_TRUE(fleet_.HasResult(FleetKey(vin, 0)));
  EXPECT_FALSE(fleet_.Leased(FleetKey(vin, 0))) << "released when done";
  // A third replica: the fleet's cache answers.
  Node* c = Make("c");
  RecordingListener* lc = Submit(c, vin);
  Turn();
  ASSERT_EQ(Kinds(lc), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(lc->events().back().result->source, Source::kCache);
  EXPECT_EQ(lc->events().back().result->attempts, 0);
  EXPECT_EQ(c->upstream->sent().size(), 0u);
}

// Rule 18: a reference request is one flight across the fleet too, and its
// answer (vPIC's document) the fleet's cache answer.
TEST_F(FleetEngineTest, AReferenceRequestIsOneFlightAcrossReplicasAndShared) {
  constexpr char kModels[] =
      R"({"Count":1,"Message":"Response returned successfully",)"
      R"("SearchCriteria":"Make:honda","Results":[{"Model_Name":"Accord"}]})";
  const std::string ref = "GetModelsForMake/honda";
  Node* a = Make("a");
  Node* b = Make("b");
  RecordingListener* la = Ask(a, ref);
  Turn();
  ASSERT_EQ(a->upstream->sent().size(), 1u);
  EXPECT_EQ(a->upstream->sent()[0].reference, ref);
  RecordingListener* lb = Ask(b, ref);
  Turn();
  EXPECT_EQ(b->upstream->sent().size(), 0u) << "B joined A's flight";
  ASSERT_FALSE(lb->events().empty());
  EXPECT_TRUE(lb->events().front().coalesced);
  vpic::HttpResult ok;
  ok.http_status = 200;
  ok.body = kModels;
  a->upstream->Reply(1, ok);
  Turn();
  for (RecordingListener* l : {la, lb}) {
    ASSERT_EQ(Kinds(l), (std::vector<std::string>{"queued", "done"}));
    ASSERT_NE(l->events().back().result->document, nullptr);
    EXPECT_EQ(*l->events().back().result->document, kModels);
    EXPECT_EQ(l->events().back().result->source, Source::kVpic);
  }
  EXPECT_TRUE(fleet_.HasResult("vpic:" + ref));
  EXPECT_FALSE(fleet_.Leased("vpic:" + ref)) << "released when done";
  // A third replica: the fleet's cache answers, with the document.
  Node* c = Make("c");
  RecordingListener* lc = Ask(c, ref);
  Turn();
  ASSERT_EQ(Kinds(lc), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(lc->events().back().result->source, Source::kCache);
  ASSERT_NE(lc->events().back().result->document, nullptr);
  EXPECT_EQ(*lc->events().back().result->document, kModels);
  EXPECT_EQ(c->upstream->sent().size(), 0u);
  // A VIN's flight and a reference's do not mix: the same fleet, other keys.
  EXPECT_FALSE(fleet_.HasResult(FleetKey(ValidVin(1), 0)));
}

TEST_F(FleetEngineTest, TheOwnersRetriesAndFailureReachTheOtherReplicas) {
  Node* a = Make("a");
  Node* b = Make("b");
  const std::string vin = ValidVin(2);
  Submit(a, vin);
  Turn();
  RecordingListener* lb = Submit(b, vin);
  Turn();
  a->upstream->Reply(1, ScriptedUpstream::Status(503));
  Turn();
  ASSERT_EQ(Kinds(lb), (std::vector<std::string>{"queued", "retrying"}));
  EXPECT_EQ(lb->events()[1].retrying.attempt, 1);
  EXPECT_EQ(lb->events()[1].retrying.next_delay, absl::Milliseconds(100));
  EXPECT_EQ(lb->events()[1].retrying.error.http_status, 503);
  // Every attempt fails: A gives up, and B's waiter hears why.
  for (int i = 0; i < 10; ++i) {
    Advance(absl::Milliseconds(200));  // past the retry's wake-up
    a->upstream->ReplyAll([](auto) { return ScriptedUpstream::Status(503); });
    Turn();
  }
  const auto events = lb->events();
  ASSERT_EQ(events.back().kind, "failed");
  EXPECT_EQ(events.back().failure.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_EQ(events.back().failure.attempts, 4);
  EXPECT_EQ(b->upstream->sent().size(), 0u) << "B never asked vPIC";
  int terminals = 0;
  for (const auto& e : events) terminals += e.kind == "done" || e.kind == "failed";
  EXPECT_EQ(terminals, 1);
}

TEST_F(FleetEngineTest, AnOwnerThatStopsRenewingIsTakenOverAfterItsLease) {
  Node* a = Make("a");
  Node* b = Make("b");
  const std::string vin = ValidVin(3);
  Submit(a, vin);
  Turn();
  ASSERT_EQ(a->upstream->sent().size(), 1u);
  RecordingListener* lb = Submit(b, vin);
  Turn();
  const absl::Time died = clock_.Now();
  a->alive = false;  // killed: it never renews, answers or publishes again
  // B looks every half lease; the lease runs out kLease after A's last
  // renewal, which was when it claimed.
  while (b->upstream->sent().empty() && clock_.Now() < died + 3 * kLease) {
    Advance(absl::Milliseconds(50));
  }
  ASSERT_EQ(b->upstream->sent().size(), 1u) << "B took the flight over";
  const absl::Duration after = b->upstream->sent()[0].at - died;
  EXPECT_GE(after, kLease) << "not before the lease ran out";
  EXPECT_LE(after, kLease + kLease / 2 + absl::Milliseconds(100))
      << "within a half lease of it";
  b->upstream->Reply(1, b->upstream->Ok(1));
  Turn();
  EXPECT_EQ(Kinds(lb), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(lb->events().back().result->attempts, 1);
}

TEST_F(FleetEngineTest, AnOwnerThatRenewsKeepsItsFlightHoweverLongItTakes) {
  Node* a = Make("a");
  Node* b = Make("b");
  const std::string vin = ValidVin(6);
  Submit(a, vin);
  Turn();
  RecordingListener* lb = Submit(b, vin);
  Advance(4 * kLease);  // vPIC is slow; A is alive and renews
  EXPECT_EQ(b->upstream->sent().size(), 0u) << "no duplicate while A lives";
  EXPECT_TRUE(fleet_.Leased(FleetKey(vin, 0)));
  a->upstream->Reply(1, a->upstream->Ok(1));
  Turn();
  EXPECT_EQ(Kinds(lb), (std::vector<std::string>{"queued", "done"}));
}

TEST_F(FleetEngineTest, AnOwnerWhoseCallersAllLeftHandsTheFlightOverAtOnce) {
  Node* a = Make("a");
  Node* b = Make("b");
  const std::string vin = ValidVin(4);
  RecordingListener* la = Submit(a, vin);
  Turn();
  RecordingListener* lb = Submit(b, vin);
  Turn();
  ASSERT_EQ(Kinds(la).size(), 1u);
  a->engine->Cancel(1);  // A's only waiter (the first id)
  Turn();
  EXPECT_EQ(Kinds(la).back(), "failed");
  ASSERT_EQ(b->upstream->sent().size(), 1u)
      << "B claimed it at once, without waiting for the lease";
  EXPECT_EQ(b->upstream->sent()[0].at, a->upstream->sent()[0].at);
  b->upstream->Reply(1, b->upstream->Ok(1));
  Turn();
  EXPECT_EQ(Kinds(lb), (std::vector<std::string>{"queued", "done"}));
}

TEST_F(FleetEngineTest, WithTheFleetDownEachReplicaGoesOnAlone) {
  Node* a = Make("a");
  Node* b = Make("b");
  a->fleet->set_up(false);
  b->fleet->set_up(false);
  const std::string vin = ValidVin(5);
  RecordingListener* la = Submit(a, vin);
  RecordingListener* lb = Submit(b, vin);
  Turn();
  EXPECT_EQ(a->upstream->sent().size(), 1u);
  EXPECT_EQ(b->upstream->sent().size(), 1u) << "a duplicate, never a failure";
  a->upstream->Reply(1, a->upstream->Ok(1));
  b->upstream->Reply(1, b->upstream->Ok(1));
  Turn();
  EXPECT_EQ(Kinds(la), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(Kinds(lb), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(fleet_.claims, 0) << "nothing asked of a fleet that is down";
}

}  // namespace
}  // namespace engine
