// Who decodes a flight in a fleet, on a fake clock without an engine: the
// claim's answers, the lease kept alive by its owner, another replica's
// events relayed, a dead owner's flight taken over, and a replica that goes
// on alone while the fleet is down. Two coordinators share one MemoryFleet,
// each on its own event loop driven by the test.
#include "engine/fleet_coordinator.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loop/event_loop.h"
#include "retry/clock.h"
#include "testing/memory_fleet.h"

namespace engine {
namespace {

using testing::ElementsAre;
using Key = FleetCoordinator::Key;

const Key kKey{"1FTMW1T88MFA00001", 0};
constexpr absl::Duration kLease = absl::Seconds(3);

// What the coordinator told its engine, one line per call.
class RecordingFlights : public FleetCoordinator::Flights {
 public:
  void DecodeHere(const Key& key, uint64_t fid, bool first) override {
    calls.push_back(absl::StrCat("here ", fid, first ? " first" : " takeover"));
  }
  void DecodedElsewhere(const Key& key, uint64_t fid) override {
    calls.push_back(absl::StrCat("elsewhere ", fid, " first"));
  }
  void AnswerFromFleet(const Key& key, uint64_t fid,
                       std::shared_ptr<const DecodeResult> answer,
                       bool hit) override {
    calls.push_back(absl::StrCat("answer ", fid, " ", SourceName(answer->source),
                                 " ", *answer->encoded, hit ? " hit" : ""));
  }
  void RelayRetrying(const Key& key, uint64_t fid, const Retrying& r) override {
    calls.push_back(absl::StrCat("retrying ", fid, " attempt ", r.attempt));
  }
  void RelayFailed(const Key& key, uint64_t fid, const Failure& f) override {
    calls.push_back(absl::StrCat("failed ", fid, " ", f.message));
  }
  void Remember(const Key& key, std::shared_ptr<const DecodeResult> a) override {
    calls.push_back(absl::StrCat("remember ", *a->encoded));
  }
  void BreakerElsewhere(const FleetEvent& e) override {
    calls.push_back(absl::StrCat(
        e.kind == FleetEvent::Kind::kBreakerOpened ? "breaker opened by "
                                                   : "breaker closed by ",
        e.origin));
  }

  static std::string SourceName(Source s) {
    return s == Source::kCache ? "cache" : s == Source::kVpic ? "vpic" : "other";
  }

  std::vector<std::string> calls;
};

// One replica: its loop, its coordinator and what it was told.
struct Replica {
  Replica(testing_util::MemoryFleet* fleet, const retry::Clock* clock,
          const std::string& name)
      : loop(*loop::EventLoop::Create(clock)), backend(fleet->Add(name)) {
    backend->Attach(loop.get());
    SharedFleetOptions options;
    options.backend = backend;
    options.lease = kLease;
    options.cache_ttl = absl::Hours(1);
    coordinator = SharedFleet(options, &flights, &loop->scheduler());
  }
  std::unique_ptr<loop::EventLoop> loop;
  testing_util::MemoryFleet::Replica* backend;
  RecordingFlights flights;
  std::unique_ptr<FleetCoordinator> coordinator;
};

class FleetCoordinatorTest : public testing::Test {
 protected:
  // Runs both loops until neither has anything posted.
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      a_.loop->RunOnce(absl::ZeroDuration());
      b_.loop->RunOnce(absl::ZeroDuration());
    }
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    Settle();
  }
  static DecodeResult Decoded(const std::string& bytes) {
    DecodeResult r;
    r.vin = kKey.vin;
    r.source = Source::kVpic;
    r.attempts = 1;
    r.encoded = std::make_shared<const std::string>(bytes);
    return r;
  }
  static std::shared_ptr<const DecodeResult> CacheAnswerOf(const std::string& b) {
    auto a = std::make_shared<DecodeResult>();
    a->source = Source::kCache;
    a->encoded = std::make_shared<const std::string>(b);
    return a;
  }

  retry::FakeClock clock_;
  testing_util::MemoryFleet fleet_{&clock_};
  Replica a_{&fleet_, &clock_, "a"};
  Replica b_{&fleet_, &clock_, "b"};
};

TEST_F(FleetCoordinatorTest, TheFirstClaimantDecodesAndTheSecondWaitsForIt) {
  EXPECT_TRUE(a_.coordinator->Start(kKey, 1));
  Settle();
  EXPECT_TRUE(b_.coordinator->Start(kKey, 7));
  Settle();
  EXPECT_THAT(a_.flights.calls, ElementsAre("here 1 first"));
  EXPECT_THAT(b_.flights.calls, ElementsAre("elsewhere 7 first"));

  a_.coordinator->Done(kKey, 1, Decoded("v"), CacheAnswerOf("c"));
  Settle();
  EXPECT_THAT(b_.flights.calls,
              ElementsAre("elsewhere 7 first", "remember c", "answer 7 vpic v"));
  EXPECT_TRUE(fleet_.HasResult(FleetKey(kKey.vin, kKey.model_year)));
  EXPECT_FALSE(fleet_.Leased(FleetKey(kKey.vin, kKey.model_year)))
      << "the owner lets the lease go when it is done";
}

TEST_F(FleetCoordinatorTest, AFinishedDecodeIsAnsweredFromTheFleetCacheAsAHit) {
  ASSERT_TRUE(a_.coordinator->Start(kKey, 1));
  Settle();
  a_.coordinator->Done(kKey, 1, Decoded("v"), CacheAnswerOf("c"));
  Settle();
  b_.flights.calls.clear();
  ASSERT_TRUE(b_.coordinator->Start(kKey, 2));
  Settle();
  EXPECT_THAT(b_.flights.calls, ElementsAre("remember c", "answer 2 cache c hit"));
}

TEST_F(FleetCoordinatorTest, TheOwnerRenewsItsLeaseWhileTheFlightLives) {
  ASSERT_TRUE(a_.coordinator->Start(kKey, 1));
  Settle();
  const std::string key = FleetKey(kKey.vin, kKey.model_year);
  for (int i = 0; i < 6; ++i) Advance(kLease / 3);
  EXPECT_TRUE(fleet_.Leased(key)) << "two leases long, renewed every third";
  a_.coordinator->Abandoned(kKey, 1);
  EXPECT_FALSE(fleet_.Leased(key));
  ASSERT_FALSE(fleet_.published.empty());
  EXPECT_EQ(fleet_.published.back().kind, FleetEvent::Kind::kAbandoned);
}

TEST_F(FleetCoordinatorTest, RetryingAndFailedOfTheOwnerAreRelayed) {
  ASSERT_TRUE(a_.coordinator->Start(kKey, 1));
  Settle();
  ASSERT_TRUE(b_.coordinator->Start(kKey, 2));
  Settle();
  Retrying r;
  r.attempt = 1;
  a_.coordinator->RetryScheduled(kKey, 1, r);
  Failure f{FailureReason::kUpstreamRejected, "vPIC said no", false};
  a_.coordinator->Failed(kKey, 1, f);
  Settle();
  EXPECT_THAT(b_.flights.calls,
              ElementsAre("elsewhere 2 first", "retrying 2 attempt 1",
                          "failed 2 vPIC said no"));
  // The flight is over on b: a late event about it changes nothing.
  a_.coordinator->RetryScheduled(kKey, 1, r);
  Settle();
  EXPECT_EQ(b_.flights.calls.size(), 3u);
}

TEST_F(FleetCoordinatorTest, AFlightOfADeadOwnerIsTakenOver) {
  ASSERT_TRUE(a_.coordinator->Start(kKey, 1));
  Settle();
  ASSERT_TRUE(b_.coordinator->Start(kKey, 2));
  Settle();
  a_.backend->set_up(false);  // a stops renewing: its lease runs out
  a_.coordinator.reset();
  for (int i = 0; i < 4; ++i) Advance(kLease / 2);
  EXPECT_THAT(b_.flights.calls, ElementsAre("elsewhere 2 first", "here 2 takeover"));
}

TEST_F(FleetCoordinatorTest, AnAbandonedFlightIsClaimedAtOnceByAWaitingReplica) {
  ASSERT_TRUE(a_.coordinator->Start(kKey, 1));
  Settle();
  ASSERT_TRUE(b_.coordinator->Start(kKey, 2));
  Settle();
  a_.coordinator->Abandoned(kKey, 1);
  Settle();
  EXPECT_THAT(b_.flights.calls, ElementsAre("elsewhere 2 first", "here 2 takeover"))
      << "without waiting for its next look";
}

TEST_F(FleetCoordinatorTest, WhileTheFleetIsDownAFlightGoesOnAlone) {
  a_.backend->set_up(false);
  EXPECT_FALSE(a_.coordinator->Start(kKey, 1));
  Settle();
  EXPECT_TRUE(a_.flights.calls.empty());
  EXPECT_EQ(fleet_.claims, 0);
}

TEST_F(FleetCoordinatorTest, AClaimThatAnswersAfterTheCallersLeftGivesTheLeaseBack) {
  ASSERT_TRUE(a_.coordinator->Start(kKey, 1));
  a_.coordinator->Abandoned(kKey, 1);  // before the claim's answer
  Settle();
  EXPECT_TRUE(a_.flights.calls.empty());
  EXPECT_FALSE(fleet_.Leased(FleetKey(kKey.vin, kKey.model_year)));
}

TEST_F(FleetCoordinatorTest, TheLocalFleetDecidesNothing) {
  auto local = LocalFleet();
  EXPECT_FALSE(local->Start(kKey, 1));
}

}  // namespace
}  // namespace engine
