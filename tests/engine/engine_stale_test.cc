// Stale answers (DESIGN rule 15) in the engine, on a fake clock with a
// scripted upstream: an entry older than --cache_ttl does not answer a new
// request, which goes live; only when the live path fails for good does the
// stale entry answer (source CACHE, its original decode_time, a `stale`
// note), before the snapshot, for LIVE_ONLY too; a fresh vPIC answer
// replaces it; past --cache_stale_max it is gone.
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine_rules_fixture.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot_store.h"
#include "snapshot/test_snapshot.h"
#include "testing/vin_gen.h"

namespace engine {
namespace {

using testing_util::RecordingListener;
using testing_util::ValidVin;

class EngineStaleTest : public EngineRulesTest {
 protected:
  EngineOptions StaleOptions() {
    EngineOptions o = Options();
    o.cache_capacity = 100;
    o.cache_ttl = absl::Seconds(1);
    o.cache_stale_max = absl::Hours(1);
    o.max_attempts = 1;
    return o;
  }
  // Decodes `vin` live (the next request, answered ok); returns its result.
  std::shared_ptr<const DecodeResult> DecodeLive(const std::string& vin) {
    RecordingListener* l = Submit(vin);
    Turn();
    AnswerOk(Sent());
    EXPECT_EQ(l->kinds().back(), "done");
    return l->events().back().result;
  }
  static bool HasStaleNote(const DecodeResult& r) {
    for (const vpic::Note& n : r.notes) {
      if (n.code == "stale" && n.message.find("old") != std::string::npos &&
          n.message.find("HTTP 503") != std::string::npos) {
        return true;
      }
    }
    return false;
  }
};

TEST_F(EngineStaleTest, AStaleEntryGoesLiveAndAnswersOnlyWhenTheLivePathFails) {
  Make(StaleOptions());
  const std::string vin = ValidVin(1);
  const auto first = DecodeLive(vin);
  ASSERT_EQ(Sent(), 1u);
  Step(absl::Seconds(2));  // older than the TTL
  RecordingListener* l = Submit(vin);
  Turn();
  ASSERT_EQ(Sent(), 2u) << "a stale entry does not stop a live decode";
  EXPECT_EQ(l->kinds(), (std::vector<std::string>{"queued"}));
  Answer(2, Status(503));
  ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "done"}));
  const DecodeResult& r = *l->events().back().result;
  EXPECT_EQ(r.source, Source::kCache);
  EXPECT_EQ(r.decode_time, first->decode_time) << "its original decode_time";
  EXPECT_EQ(r.vehicle.make, first->vehicle.make);
  EXPECT_EQ(r.attempts, 1) << "the live attempt it stood in for";
  EXPECT_TRUE(HasStaleNote(r));

  // vPIC healthy: a fresh answer, which replaces the entry.
  Step(absl::Seconds(1));
  RecordingListener* again = Submit(vin);
  Turn();
  ASSERT_EQ(Sent(), 3u);
  AnswerOk(3);
  ASSERT_EQ(again->kinds().back(), "done");
  const auto fresh = again->events().back().result;
  EXPECT_EQ(fresh->source, Source::kVpic);
  EXPECT_GT(fresh->decode_time, first->decode_time);
  RecordingListener* hit = Submit(vin);
  ASSERT_EQ(hit->kinds(), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(hit->events().back().result->source, Source::kCache);
  EXPECT_EQ(hit->events().back().result->decode_time, fresh->decode_time);
  EXPECT_EQ(Sent(), 3u);
}

TEST_F(EngineStaleTest, PastTheStaleMaximumTheFailureStands) {
  Make(StaleOptions());
  const std::string vin = ValidVin(2);
  DecodeLive(vin);
  Step(absl::Hours(1));
  RecordingListener* l = Submit(vin);
  Turn();
  Answer(Sent(), Status(503));
  ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
}

TEST_F(EngineStaleTest, ARejectionIsAnAnswerNotAFailureOfTheLivePath) {
  Make(StaleOptions());
  const std::string vin = ValidVin(3);
  DecodeLive(vin);
  Step(absl::Seconds(2));
  RecordingListener* l = Submit(vin);
  Turn();
  Answer(Sent(), Status(404));
  ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "failed"}));
  EXPECT_EQ(l->events().back().failure.reason, FailureReason::kUpstreamRejected);
}

TEST_F(EngineStaleTest, TheStaleEntryComesBeforeTheSnapshot) {
  SKIP_WITHOUT_SNAPSHOT();
  snapshot::SnapshotStore store(snapshot::testing::SharedSnapshot());
  EngineOptions o = StaleOptions();
  o.snapshots = &store;  // LIVE_THEN_SNAPSHOT by default now
  clock_.Advance(absl::FromCivil(absl::CivilDay(2026, 12, 3), absl::UTCTimeZone()) -
                 clock_.Now());
  Make(o);
  const std::string vin = ValidVin(4);
  DecodeLive(vin);
  Step(absl::Seconds(2));
  RecordingListener* l = Submit(vin);
  Turn();
  Answer(Sent(), Status(503));
  ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "done"}));
  EXPECT_EQ(l->events().back().result->source, Source::kCache);
  EXPECT_TRUE(HasStaleNote(*l->events().back().result));
  // SNAPSHOT_ONLY never uses the cache.
  DecodeRequest r;
  r.vin = vin;
  r.source_preference = SourcePreference::kSnapshotOnly;
  RecordingListener* snap = Submit(r);
  Turn();
  ASSERT_EQ(snap->kinds().back(), "done");
  EXPECT_EQ(snap->events().back().result->source, Source::kSnapshot);
}

TEST_F(EngineStaleTest, AnOpenBreakerAnswersFromTheStaleEntryAtOnce) {
  EngineOptions o = StaleOptions();
  o.breaker.failures = 1;
  Make(o);
  const std::string vin = ValidVin(5);
  DecodeLive(vin);
  Step(absl::Seconds(2));
  RecordingListener* other = Submit(ValidVin(6));
  Turn();
  Answer(Sent(), Status(503));  // the breaker opens
  ASSERT_EQ(other->kinds().back(), "failed");
  const size_t sent = Sent();
  RecordingListener* l = Submit(vin);
  Turn();
  EXPECT_EQ(Sent(), sent) << "nothing is sent while open";
  ASSERT_EQ(l->kinds(), (std::vector<std::string>{"queued", "done"}));
  const DecodeResult& r = *l->events().back().result;
  EXPECT_EQ(r.source, Source::kCache);
  bool unreachable = false;
  for (const vpic::Note& n : r.notes) {
    unreachable |= n.code == "stale" &&
                   n.message.find("vPIC is unreachable since") != std::string::npos;
  }
  EXPECT_TRUE(unreachable);
}

}  // namespace
}  // namespace engine
