// The wire form of fleet mode's events on the channel
// (vin.fleet.v1.FleetEvent); --redis_url's is in redis_url_test.cc.
#include "fleet/redis_fleet.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "fleet/redis_budget.h"
#include "gtest/gtest.h"
#include "loop/event_loop.h"
#include "testing/redis_probe.h"
#include "testing/redis_server.h"
#include "vin/fleet/v1/fleet.pb.h"

namespace fleet {
namespace {

using engine::FleetEvent;

// The wire form is vin.fleet.v1.FleetEvent: every kind, with every field
// set, comes back whole.
TEST(FleetEvents, EveryKindTravelsWhole) {
  FleetEvent done;
  done.kind = FleetEvent::Kind::kDone;
  done.key = "1HGCM82633A004352|2003";
  done.origin = "r1";
  done.encoded = std::make_shared<const std::string>(std::string("live\n\0bytes", 11));
  done.cached = std::make_shared<const std::string>("cache bytes\n");
  done.source = engine::Source::kSnapshot;
  done.attempts = 2;
  auto d = DecodeEvent(EncodeEvent(done));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind, FleetEvent::Kind::kDone);
  EXPECT_EQ(d->key, done.key);
  EXPECT_EQ(d->origin, "r1");
  EXPECT_EQ(*d->encoded, *done.encoded);
  EXPECT_EQ(*d->cached, *done.cached);
  EXPECT_EQ(d->attempts, 2);
  EXPECT_EQ(d->source, engine::Source::kSnapshot);
  for (engine::Source s : {engine::Source::kVpic, engine::Source::kCache,
                           engine::Source::kSnapshot}) {
    done.source = s;
    auto again = DecodeEvent(EncodeEvent(done));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->source, s);
  }

  FleetEvent retrying;
  retrying.kind = FleetEvent::Kind::kRetrying;
  retrying.key = "K|0";
  retrying.origin = "r2";
  retrying.retrying = {3, absl::Milliseconds(1250) + absl::Nanoseconds(7),
                       {503, "http", "vPIC said 503\nbusy"}};
  auto r = DecodeEvent(EncodeEvent(retrying));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, FleetEvent::Kind::kRetrying);
  EXPECT_EQ(r->key, "K|0");
  EXPECT_EQ(r->origin, "r2");
  EXPECT_EQ(r->retrying.attempt, 3);
  EXPECT_EQ(r->retrying.next_delay, absl::Milliseconds(1250) + absl::Nanoseconds(7));
  EXPECT_EQ(r->retrying.error.http_status, 503);
  EXPECT_EQ(r->retrying.error.kind, "http");
  EXPECT_EQ(r->retrying.error.message, "vPIC said 503\nbusy");

  FleetEvent failed;
  failed.kind = FleetEvent::Kind::kFailed;
  failed.key = "K|0";
  failed.origin = "r3";
  failed.failure.reason = engine::FailureReason::kUpstreamUnavailable;
  failed.failure.message = "vPIC kept failing";
  failed.failure.retryable = true;
  failed.failure.attempts = 4;
  failed.failure.retry_delay = absl::Seconds(30);
  failed.failure.last_error = vpic::UpstreamError{0, "timeout", "no answer in 5s"};
  auto f = DecodeEvent(EncodeEvent(failed));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->kind, FleetEvent::Kind::kFailed);
  EXPECT_EQ(f->origin, "r3");
  EXPECT_EQ(f->failure.reason, engine::FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(f->failure.retryable);
  EXPECT_EQ(f->failure.attempts, 4);
  EXPECT_EQ(f->failure.retry_delay, absl::Seconds(30));
  EXPECT_EQ(f->failure.message, "vPIC kept failing");
  ASSERT_TRUE(f->failure.last_error.has_value());
  EXPECT_EQ(f->failure.last_error->http_status, 0);
  EXPECT_EQ(f->failure.last_error->kind, "timeout");
  EXPECT_EQ(f->failure.last_error->message, "no answer in 5s");
  // Every reason maps to its own value and back; no last error stays none.
  failed.failure.last_error.reset();
  for (size_t i = 0; i < domain::kFailureReasons; ++i) {
    failed.failure.reason = static_cast<engine::FailureReason>(i);
    auto again = DecodeEvent(EncodeEvent(failed));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->failure.reason, failed.failure.reason) << i;
    EXPECT_FALSE(again->failure.last_error.has_value());
  }

  FleetEvent gone;
  gone.kind = FleetEvent::Kind::kAbandoned;
  gone.key = "K|0";
  gone.origin = "r4";
  auto g = DecodeEvent(EncodeEvent(gone));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->kind, FleetEvent::Kind::kAbandoned);
  EXPECT_EQ(g->key, "K|0");
  EXPECT_EQ(g->origin, "r4");

  // The breaker's events carry no key.
  FleetEvent opened;
  opened.kind = FleetEvent::Kind::kBreakerOpened;
  opened.origin = "r5";
  opened.breaker.unreachable_since =
      absl::FromUnixSeconds(1796300000) + absl::Nanoseconds(123456789);
  opened.breaker.cooldown = absl::Milliseconds(7250);
  opened.breaker.last_error = {0, "connect", "Couldn't connect to server"};
  auto o = DecodeEvent(EncodeEvent(opened));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->kind, FleetEvent::Kind::kBreakerOpened);
  EXPECT_EQ(o->key, "");
  EXPECT_EQ(o->origin, "r5");
  EXPECT_EQ(o->breaker.unreachable_since, opened.breaker.unreachable_since);
  EXPECT_EQ(o->breaker.cooldown, absl::Milliseconds(7250));
  EXPECT_EQ(o->breaker.last_error.kind, "connect");
  EXPECT_EQ(o->breaker.last_error.message, "Couldn't connect to server");

  FleetEvent closed;
  closed.kind = FleetEvent::Kind::kBreakerClosed;
  closed.origin = "r6";
  auto c = DecodeEvent(EncodeEvent(closed));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kind, FleetEvent::Kind::kBreakerClosed);
  EXPECT_EQ(c->origin, "r6");
}

// A time beyond protobuf's Timestamp (an infinite one) travels as its
// edge, never as an overflow.
TEST(FleetEvents, AnInfiniteTimeTravelsAsTimestampsEdge) {
  FleetEvent opened;
  opened.kind = FleetEvent::Kind::kBreakerOpened;
  opened.origin = "r5";
  for (const auto& [time, edge] :
       {std::make_pair(absl::InfinitePast(),
                       absl::FromUnixSeconds(-62135596800)),
        std::make_pair(absl::InfiniteFuture(),
                       absl::FromUnixSeconds(253402300799))}) {
    opened.breaker.unreachable_since = time;
    auto o = DecodeEvent(EncodeEvent(opened));
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->breaker.unreachable_since, edge);
  }
  opened.breaker.unreachable_since =
      absl::FromUnixSeconds(-5) + absl::Milliseconds(250);
  EXPECT_EQ(DecodeEvent(EncodeEvent(opened))->breaker.unreachable_since,
            opened.breaker.unreachable_since)
      << "before 1970: seconds toward the past, nanoseconds forward";
}

// What another replica sent, as protobuf, with the fields given.
std::string Wire(const std::function<void(vin::fleet::v1::FleetEvent*)>& set) {
  vin::fleet::v1::FleetEvent m;
  m.set_key("K|0");
  m.set_origin("r9");
  set(&m);
  return m.SerializeAsString();
}

TEST(FleetEvents, GarbageIsRejectedSayingWhy) {
  using vin::fleet::v1::FleetEvent;
  auto why = [](const std::string& bytes) {
    auto e = DecodeEvent(bytes);
    EXPECT_FALSE(e.ok()) << "decoded as an event: " << absl::CEscape(bytes);
    return std::string(e.status().message());
  };
  EXPECT_NE(why("\xff\xff\xff garbage").find("not a vin.fleet.v1.FleetEvent"),
            std::string::npos);
  // The old hand-packed text form of a done event.
  EXPECT_NE(why("0 r K|0\n0 1 5\nbytes").find("not a vin.fleet.v1.FleetEvent"),
            std::string::npos);
  // A good event cut short.
  const std::string whole = Wire([](FleetEvent* m) {
    m->set_kind(FleetEvent::KIND_DONE);
    m->mutable_done()->set_source(vin::fleet::v1::SOURCE_VPIC);
    m->mutable_done()->set_encoded(std::string(100, 'x'));
  });
  ASSERT_TRUE(DecodeEvent(whole).ok());
  EXPECT_FALSE(DecodeEvent(whole.substr(0, whole.size() - 10)).ok());
  EXPECT_NE(why("").find("unknown kind 0"), std::string::npos)
      << "an empty message has no kind";
  EXPECT_NE(why(Wire([](FleetEvent* m) { m->set_kind(static_cast<FleetEvent::Kind>(99)); }))
                .find("unknown kind 99"),
            std::string::npos)
      << "a kind of a newer version";
  EXPECT_NE(why(Wire([](FleetEvent* m) {
              m->set_kind(FleetEvent::KIND_ABANDONED);
              m->clear_key();
            })).find("no key"),
            std::string::npos);
  EXPECT_NE(why(Wire([](FleetEvent* m) { m->set_kind(FleetEvent::KIND_DONE); }))
                .find("without its result"),
            std::string::npos);
  EXPECT_NE(why(Wire([](FleetEvent* m) {
              m->set_kind(FleetEvent::KIND_DONE);
              m->mutable_done()->set_attempts(1);
            })).find("unknown source 0"),
            std::string::npos);
  EXPECT_NE(why(Wire([](FleetEvent* m) { m->set_kind(FleetEvent::KIND_BREAKER_OPENED); }))
                .find("without the breaker"),
            std::string::npos);
  EXPECT_NE(why(Wire([](FleetEvent* m) { m->set_kind(FleetEvent::KIND_RETRYING); }))
                .find("without its attempt"),
            std::string::npos);
  EXPECT_NE(why(Wire([](FleetEvent* m) {
              m->set_kind(FleetEvent::KIND_FAILED);
              m->mutable_failure()->set_message("x");
            })).find("unknown failure reason 0"),
            std::string::npos);
  EXPECT_NE(why(Wire([](FleetEvent* m) {
              m->set_kind(FleetEvent::KIND_FAILED);
              m->mutable_failure()->set_reason(
                  static_cast<vin::fleet::v1::FailureReason>(42));
            })).find("unknown failure reason 42"),
            std::string::npos);
}

// On a real channel: an event that does not parse is dropped and counted
// (and told to the rejection handler); the next good one still arrives.
TEST(FleetEvents, ARejectedEventIsCountedAndTheChannelGoesOn) {
  testing_util::RedisServer redis;
  std::string error;
  ASSERT_TRUE(redis.Start(&error)) << error;
  // The test's thread is the fleet's loop.
  auto loop = loop::EventLoop::Create();
  ASSERT_TRUE(loop.ok()) << loop.status();
  RedisFleetOptions o;
  o.address = {"127.0.0.1", redis.port(), 0};
  o.prefix = "t:";
  o.timeout = absl::Seconds(5);
  RedisFleet fleet(std::move(o));
  std::vector<std::string> rejected;
  std::vector<FleetEvent> events;
  fleet.OnRejected([&](Rejection what, const std::string& why) {
    EXPECT_EQ(what, Rejection::kEventUnparsable);
    rejected.push_back(why);
  });
  fleet.OnEvent([&](FleetEvent e) { events.push_back(std::move(e)); });
  fleet.Attach(loop->get());
  auto run_until = [&](const std::function<bool()>& done) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (!done() && absl::Now() < give_up) {
      (*loop)->RunOnce(absl::Milliseconds(50));
    }
    return done();
  };
  // Until the fleet's subscription is in place.
  ASSERT_TRUE(run_until([&] {
    auto n = testing_util::RedisCall(redis.port(), {"PUBSUB", "NUMSUB", "t:events"});
    return n.ok() && n->elements.size() == 2 && n->elements[1].integer == 1;
  })) << "the fleet never subscribed";
  FleetEvent gone;
  gone.kind = FleetEvent::Kind::kAbandoned;
  gone.key = "1HGCM82633A004352|0";
  gone.origin = "another replica";
  ASSERT_TRUE(testing_util::RedisCall(redis.port(),
                                      {"PUBLISH", "t:events", "0 r K|0\n"})
                  .ok());
  ASSERT_TRUE(testing_util::RedisCall(
                  redis.port(), {"PUBLISH", "t:events", EncodeEvent(gone)})
                  .ok());
  ASSERT_TRUE(run_until([&] { return !events.empty(); }));
  ASSERT_EQ(rejected.size(), 1u) << "the garbage came first, on one connection";
  EXPECT_NE(rejected[0].find("not a vin.fleet.v1.FleetEvent"), std::string::npos)
      << rejected[0];
  EXPECT_EQ(fleet.events_rejected(), 1u);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FleetEvent::Kind::kAbandoned);
  EXPECT_EQ(events[0].origin, "another replica");
  fleet.Detach();
}

// With Redis unreachable, a replica's budget is a local bucket at its share
// of the rate: --upstream_rate / --fleet_size_hint.
TEST(RedisBudgetFallback, WithRedisDownEachReplicaKeepsItsShareOfTheRate) {
  auto loop = loop::EventLoop::Create();
  ASSERT_TRUE(loop.ok()) << loop.status();
  bool down = false;
  RedisClient client({"127.0.0.1", testing_util::FreePort(), 0},
                     absl::Milliseconds(50), [&](bool up) { down = !up; });
  client.Attach(loop->get());
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (!down && absl::Now() < give_up) (*loop)->RunOnce(absl::Milliseconds(50));
  ASSERT_TRUE(down) << "a closed port never said Redis is down";
  upstream::BudgetOptions o;
  o.rate_per_minute = 600;
  o.burst = 1;
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  RedisBudget budget(&client, "vin:budget", o, /*fleet_size_hint=*/3,
                     [t0] { return t0; });
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
