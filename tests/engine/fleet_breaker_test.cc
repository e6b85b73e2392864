// The circuit breaker in a fleet (DESIGN rule 13: "the breaker and its probe
// are shared"), on a fake clock: three engines over one in-memory fleet,
// each in front of its own scripted upstream. A breaker opened on one
// replica is open on the others without failures of their own; one probe
// goes per cool-down for the whole fleet; whoever's probe is answered closes
// it for all; with the fleet down, each replica's breaker is its own. With
// a real Redis and real HTTP: tests/fleet/fleet_breaker_test.cc.
#include <string>
#include <vector>

#include "fleet_engine_fixture.h"
#include "testing/vin_gen.h"

namespace engine {
namespace {

using testing_util::ValidVin;

constexpr absl::Duration kCooldown = absl::Seconds(5);
// With the fixture's uniform draw of 0.5, the cool-down after a failed
// probe: 5 s + 0.5 * 2 * 5 s.
constexpr absl::Duration kSecondCooldown = absl::Seconds(10);

class FleetBreakerTest : public FleetEngineTest {
 protected:
  void SetUp() override {
    for (const char* name : {"a", "b", "c"}) {
      nodes.push_back(Make(name, [](EngineOptions* o) {
        o->breaker.failures = 5;
        o->breaker.cooldown = kCooldown;
        o->breaker.cooldown_max = absl::Minutes(2);
        o->attempt_timeout = absl::Seconds(2);  // a probe's lease: 5 s
      }));
    }
  }

  static double State(const Node* n) {
    return n->metrics.upstream_breaker_state.value();
  }
  static size_t Sent(const Node* n) { return n->upstream->sent().size(); }
  size_t SentByAll() const {
    size_t sum = 0;
    for (const Node* n : nodes) sum += Sent(n);
    return sum;
  }
  // Five new VINs on `n`, each answered 503: its breaker opens.
  void OpenOn(Node* n) {
    for (int i = 0; i < 5; ++i) Submit(n, ValidVin(next_vin_++));
    Turn();
    ASSERT_EQ(n->upstream->open().size(), 5u);
    n->upstream->ReplyAll([](auto) { return ScriptedUpstream::Status(503); });
    Turn();
    ASSERT_EQ(State(n), 1) << "open";
  }
  // A new VIN on each replica, all at the same instant.
  std::vector<RecordingListener*> OneNewVinEach() {
    std::vector<RecordingListener*> ls;
    for (Node* n : nodes) ls.push_back(Submit(n, ValidVin(next_vin_++)));
    Turn();
    return ls;
  }
  static RecordingListener::Event Last(const RecordingListener* l) {
    const auto events = l->events();
    return events.empty() ? RecordingListener::Event() : events.back();
  }
  // The replica whose upstream has an unanswered request.
  Node* Asking() const {
    for (Node* n : nodes) {
      if (!n->upstream->open().empty()) return n;
    }
    return nullptr;
  }

  std::vector<Node*> nodes;
  int next_vin_ = 5000;
};

TEST_F(FleetBreakerTest, OpenedOnOneReplicaItIsOpenOnTheOthersWithoutTheirFailures) {
  Node* a = nodes[0];
  OpenOn(a);
  for (Node* n : {nodes[1], nodes[2]}) {
    EXPECT_EQ(State(n), 1) << "told by A at once";
    EXPECT_EQ(Sent(n), 0u);
    EXPECT_EQ(n->metrics.upstream_breaker_transitions[1].value(), 1u);
  }
  const absl::Time opened = clock_.Now();
  Advance(absl::Seconds(1));
  // New VINs on B and C never reach their vPIC: they fail at once,
  // retryable, with the time to the fleet's probe and why.
  for (Node* n : {nodes[1], nodes[2]}) {
    RecordingListener* l = Submit(n, ValidVin(next_vin_++));
    Turn();
    EXPECT_EQ(Sent(n), 0u);
    ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
    const RecordingListener::Event e = Last(l);
    EXPECT_EQ(e.failure.reason, FailureReason::kUpstreamUnavailable);
    EXPECT_TRUE(e.failure.retryable);
    EXPECT_LE(e.failure.retry_delay, opened + kCooldown - clock_.Now());
    EXPECT_GT(e.failure.retry_delay, opened + kCooldown - clock_.Now() -
                                         absl::Milliseconds(100));
    EXPECT_NE(e.failure.message.find("vPIC is unreachable since"),
              std::string::npos)
        << e.failure.message;
    EXPECT_NE(e.failure.message.find("on another replica of the fleet"),
              std::string::npos)
        << e.failure.message;
    ASSERT_TRUE(e.failure.last_error);
    EXPECT_EQ(e.failure.last_error->http_status, 503) << "A's last answer";
  }
}

// Whatever a fleet backend delivers, the engine takes no cool-down longer
// than its own --breaker_cooldown_max (DESIGN rule 19; fleet::RedisFleet
// cuts it too): the 10-year event holds callers 2 minutes.
TEST_F(FleetBreakerTest, AnotherReplicasCooldownIsNeverLongerThanTheMax) {
  FleetEvent opened;
  opened.kind = FleetEvent::Kind::kBreakerOpened;
  opened.origin = "a";
  opened.breaker.cooldown = absl::Hours(87600);
  opened.breaker.unreachable_since = clock_.WallNow();
  opened.breaker.last_error = {503, "http", "503"};
  nodes[0]->fleet->Publish(opened);
  Turn();
  for (Node* n : {nodes[1], nodes[2]}) {
    ASSERT_EQ(State(n), 1) << "open";
    RecordingListener* l = Submit(n, ValidVin(next_vin_++));
    Turn();
    ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
    EXPECT_EQ(Last(l).failure.retry_delay, absl::Minutes(2))
        << Last(l).failure.message;
  }
  Advance(absl::Minutes(2));
  RecordingListener* probe = Submit(nodes[1], ValidVin(next_vin_++));
  Turn();
  EXPECT_EQ(Sent(nodes[1]), 1u)
      << "the probe goes after 2 minutes, not 10 years";
  EXPECT_EQ(probe->kinds(), (std::vector<std::string>{"queued"}));
}

TEST_F(FleetBreakerTest, OneProbePerCooldownForTheWholeFleet) {
  OpenOn(nodes[0]);
  const size_t before = SentByAll();
  Advance(kCooldown);
  // Every replica has a flight that wants to send once the cool-down is
  // over: one of them probes, the other two answer at once.
  std::vector<RecordingListener*> first = OneNewVinEach();
  EXPECT_EQ(SentByAll(), before + 1) << "one probe for the fleet";
  Node* prober = Asking();
  ASSERT_NE(prober, nullptr);
  EXPECT_EQ(fleet_.ProbeHolder(), prober->fleet->replica());
  int failed = 0;
  for (const RecordingListener* l : first) failed += Last(l).kind == "failed";
  EXPECT_EQ(failed, 2);
  for (const Node* n : nodes) {
    EXPECT_EQ(State(n), n == prober ? 2 : 1) << "half open only where it probes";
  }
  // The probe fails: every replica is open for the longer cool-down.
  prober->upstream->ReplyAll([](auto) { return ScriptedUpstream::Status(503); });
  Turn();
  for (const Node* n : nodes) EXPECT_EQ(State(n), 1);
  EXPECT_EQ(fleet_.ProbeHolder(), prober->fleet->replica())
      << "kept for the whole new cool-down";
  const size_t after_first = SentByAll();
  // A first cool-down's length later, nobody probes...
  Advance(kCooldown + absl::Milliseconds(100));
  for (const RecordingListener* l : OneNewVinEach()) {
    EXPECT_EQ(Last(l).kind, "failed");
    EXPECT_GT(Last(l).failure.retry_delay, absl::Seconds(4));
  }
  EXPECT_EQ(SentByAll(), after_first);
  // ...and once the longer one has passed, again exactly one request goes.
  Advance(kSecondCooldown - kCooldown);
  OneNewVinEach();
  EXPECT_EQ(SentByAll(), after_first + 1);
  EXPECT_EQ(fleet_.probe_claims, 3 + 3)
      << "each replica's would-be probe asked the fleet";
}

TEST_F(FleetBreakerTest, ClosingOnOneReplicaClosesItForAll) {
  Node* b = nodes[1];
  OpenOn(nodes[0]);
  Advance(kCooldown);
  RecordingListener* probe = Submit(b, ValidVin(next_vin_++));
  Turn();
  ASSERT_EQ(Sent(b), 1u) << "B's flight is the fleet's probe";
  b->upstream->Reply(1, b->upstream->Ok(1));
  Turn();
  EXPECT_EQ(Last(probe).kind, "done");
  for (const Node* n : nodes) {
    EXPECT_EQ(State(n), 0) << "closed everywhere";
    EXPECT_EQ(n->metrics.upstream_breaker_transitions[0].value(), 1u);
  }
  EXPECT_EQ(fleet_.ProbeHolder(), "") << "the probe's lease is let go";
  // A and C send again, without a probe of their own.
  const size_t a_before = Sent(nodes[0]);
  Submit(nodes[0], ValidVin(next_vin_++));
  Submit(nodes[2], ValidVin(next_vin_++));
  Turn();
  EXPECT_EQ(Sent(nodes[0]), a_before + 1);
  EXPECT_EQ(Sent(nodes[2]), 1u);
}

TEST_F(FleetBreakerTest, AProbeWhoseReplicaDiedIsTakenOverWhenItsLeaseEnds) {
  Node* a = nodes[0];
  Node* b = nodes[1];
  OpenOn(a);
  Advance(kCooldown);
  Submit(b, ValidVin(next_vin_++));
  Turn();
  ASSERT_EQ(Sent(b), 1u);
  const absl::Time probed = clock_.Now();
  b->alive = false;  // killed with its probe under way
  // A's flights are refused while B's lease (2 x 2 s + 1 s) lasts, then one
  // of A's probes.
  const size_t a_before = Sent(a);
  while (Sent(a) == a_before && clock_.Now() < probed + absl::Seconds(20)) {
    Submit(a, ValidVin(next_vin_++));
    Advance(absl::Milliseconds(500));
  }
  ASSERT_EQ(Sent(a), a_before + 1) << "A probed";
  EXPECT_GE(clock_.Now() - probed, absl::Seconds(5));
  EXPECT_LE(clock_.Now() - probed, absl::Seconds(6));
}

TEST_F(FleetBreakerTest, WithTheFleetDownEachReplicaKeepsItsOwnBreaker) {
  for (Node* n : nodes) n->fleet->set_up(false);
  OpenOn(nodes[0]);
  EXPECT_EQ(State(nodes[1]), 0);
  EXPECT_EQ(State(nodes[2]), 0);
  RecordingListener* l = Submit(nodes[1], ValidVin(next_vin_++));
  Turn();
  EXPECT_EQ(Sent(nodes[1]), 1u) << "B still asks its vPIC";
  nodes[1]->upstream->ReplyAll([&](auto id) { return nodes[1]->upstream->Ok(id); });
  Turn();
  EXPECT_EQ(Last(l).kind, "done");
  // A's probe after its cool-down goes without the fleet's word.
  Advance(kCooldown);
  Submit(nodes[0], ValidVin(next_vin_++));
  Turn();
  EXPECT_EQ(nodes[0]->upstream->open().size(), 1u);
  EXPECT_EQ(fleet_.probe_claims, 0);
}

}  // namespace
}  // namespace engine
