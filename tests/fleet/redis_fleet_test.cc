// The wire forms of fleet mode: --redis_url, and the events on the channel.
#include "fleet/redis_fleet.h"

#include "absl/synchronization/notification.h"
#include "fleet/redis_budget.h"
#include "gtest/gtest.h"
#include "testing/redis_server.h"

namespace fleet {
namespace {

using engine::FleetEvent;

TEST(RedisUrl, HostPortAndDatabase) {
  auto a = ParseRedisUrl("redis://10.0.0.5:6380/2");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "10.0.0.5");
  EXPECT_EQ(a->port, 6380);
  EXPECT_EQ(a->db, 2);
  auto d = ParseRedisUrl("redis://cache");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, 6379);
  EXPECT_EQ(d->db, 0);
}

TEST(RedisUrl, BadOnesNameTheProblem) {
  EXPECT_NE(ParseRedisUrl("http://x:1").status().message().find("redis://host:port"),
            absl::string_view::npos);
  EXPECT_NE(ParseRedisUrl("redis://x:99999").status().message().find("bad port"),
            absl::string_view::npos);
  EXPECT_NE(ParseRedisUrl("redis://:1").status().message().find("no host"),
            absl::string_view::npos);
  EXPECT_NE(ParseRedisUrl("redis://x:1/db").status().message().find("bad database"),
            absl::string_view::npos);
}

TEST(FleetEvents, EveryKindTravelsWhole) {
  FleetEvent done;
  done.kind = FleetEvent::Kind::kDone;
  done.key = "1HGCM82633A004352|2003";
  done.origin = "r1";
  done.encoded = std::make_shared<const std::string>(std::string("live\n\0bytes", 11));
  done.cached = std::make_shared<const std::string>("cache bytes\n");
  done.attempts = 2;
  auto d = DecodeEvent(EncodeEvent(done));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, FleetEvent::Kind::kDone);
  EXPECT_EQ(d->key, done.key);
  EXPECT_EQ(d->origin, "r1");
  EXPECT_EQ(*d->encoded, *done.encoded);
  EXPECT_EQ(*d->cached, *done.cached);
  EXPECT_EQ(d->attempts, 2);
  EXPECT_EQ(d->source, engine::Source::kVpic);

  FleetEvent retrying;
  retrying.kind = FleetEvent::Kind::kRetrying;
  retrying.key = "K|0";
  retrying.origin = "r2";
  retrying.retrying = {1, absl::Milliseconds(250), {503, "status", "vPIC said 503\nbusy"}};
  auto r = DecodeEvent(EncodeEvent(retrying));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->retrying.attempt, 1);
  EXPECT_EQ(r->retrying.next_delay, absl::Milliseconds(250));
  EXPECT_EQ(r->retrying.error.http_status, 503);
  EXPECT_EQ(r->retrying.error.kind, "status");
  EXPECT_EQ(r->retrying.error.message, "vPIC said 503\nbusy");

  FleetEvent failed;
  failed.kind = FleetEvent::Kind::kFailed;
  failed.key = "K|0";
  failed.origin = "r3";
  failed.failure.reason = engine::FailureReason::kUpstreamRejected;
  failed.failure.message = "vPIC rejected the request";
  failed.failure.attempts = 1;
  failed.failure.last_error = vpic::UpstreamError{400, "status", ""};
  auto f = DecodeEvent(EncodeEvent(failed));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->failure.reason, engine::FailureReason::kUpstreamRejected);
  EXPECT_FALSE(f->failure.retryable);
  EXPECT_EQ(f->failure.message, "vPIC rejected the request");
  ASSERT_TRUE(f->failure.last_error.has_value());
  EXPECT_EQ(f->failure.last_error->http_status, 400);

  FleetEvent gone;
  gone.kind = FleetEvent::Kind::kAbandoned;
  gone.key = "K|0";
  gone.origin = "r4";
  auto g = DecodeEvent(EncodeEvent(gone));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->kind, FleetEvent::Kind::kAbandoned);
}

TEST(FleetEvents, GarbageIsNoEvent) {
  EXPECT_FALSE(DecodeEvent("").has_value());
  EXPECT_FALSE(DecodeEvent("9 r K|0\n").has_value());
  EXPECT_FALSE(DecodeEvent("0 r K|0\n0 1 999\nshort").has_value());
  EXPECT_FALSE(DecodeEvent("0 r K|0\n7 1 0\n").has_value()) << "no such source";
}

// With Redis unreachable, a replica's budget is a local bucket at its share
// of the rate: --upstream_rate / --fleet_size_hint.
TEST(RedisBudgetFallback, WithRedisDownEachReplicaKeepsItsShareOfTheRate) {
  absl::Notification down;
  RedisClient client({"127.0.0.1", testing_util::FreePort(), 0},
                     absl::Milliseconds(50), [&](bool up) {
                       if (!up && !down.HasBeenNotified()) down.Notify();
                     });
  ASSERT_TRUE(down.WaitForNotificationWithTimeout(absl::Seconds(10)));
  upstream::BudgetOptions o;
  o.rate_per_minute = 600;
  o.burst = 1;
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  RedisBudget budget(&client, "vin:budget", o, /*fleet_size_hint=*/3,
                     [t0] { return t0; }, [](std::function<void()>) {});
  EXPECT_TRUE(budget.TryAcquire(t0));
  EXPECT_FALSE(budget.TryAcquire(t0)) << "the burst is spent";
  EXPECT_FALSE(budget.shared());
  EXPECT_EQ(budget.StartOfRequest(t0, 1), t0 + absl::Milliseconds(300))
      << "600 a minute over 3 replicas: one every 300 ms";
  EXPECT_EQ(budget.EffectiveRatePerMinute(), 200);
  EXPECT_TRUE(budget.TryAcquire(t0 + absl::Milliseconds(300)));
}

}  // namespace
}  // namespace fleet
