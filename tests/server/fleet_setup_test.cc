// Fleet mode's options from the server's (server/fleet_setup.h): what this
// replica believes of others is cut to its own flags (DESIGN rule 19), and
// reference answers (rule 18) expire at its --reference_ttl.
#include "server/fleet_setup.h"

#include "gtest/gtest.h"
#include "server/server.h"

namespace server {
namespace {

TEST(RedisFleetOptionsFor, TheTrustLimitsAreThisReplicasOwnFlags) {
  FleetOptions o;
  o.redis_url = "redis://127.0.0.1:6379";
  engine::EngineOptions e;
  e.cache_ttl = absl::Hours(5);
  e.reference_ttl = absl::Hours(7);
  e.breaker.cooldown_max = absl::Minutes(3);
  e.retry_cap = absl::Seconds(20);
  e.retry_after_max = absl::Seconds(40);
  auto f = RedisFleetOptionsFor(o, e);
  ASSERT_TRUE(f.ok()) << f.status();
  const fleet::FleetLimits& l = f->trust.limits;
  EXPECT_EQ(l.cache_ttl, absl::Hours(5));
  EXPECT_EQ(l.reference_ttl, absl::Hours(7));
  EXPECT_EQ(l.breaker_cooldown_max, absl::Minutes(3));
  EXPECT_EQ(l.pause_max, absl::Seconds(40));
  EXPECT_EQ(l.delay_max, absl::Minutes(3)) << "the longest of the three";
  EXPECT_TRUE(f->trust.read_result) << "results are checked when read";
}

}  // namespace
}  // namespace server
