#include "engine/result_cache.h"

#include "gtest/gtest.h"

namespace engine {
namespace {

DecodeResult Live(const std::string& vin, const std::string& make) {
  DecodeResult r;
  r.vin = vin;
  r.vehicle.make = make;
  r.source = Source::kVpic;
  r.attempts = 3;
  r.decode_time = absl::FromUnixSeconds(1000);
  return r;
}

const absl::Time kNow = absl::FromUnixSeconds(2000);

TEST(ResultCache, HitIsACacheAnswerWithTheOriginalDecode) {
  ResultCache cache(10, absl::Hours(24));
  cache.Insert({"1HGCM82633A004352", 0}, Live("1HGCM82633A004352", "HONDA"),
               kNow);
  auto hit = cache.Lookup({"1HGCM82633A004352", 0}, kNow + absl::Hours(1));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->source, Source::kCache);
  EXPECT_EQ(hit->attempts, 0);
  EXPECT_EQ(hit->vehicle.make, "HONDA");
  EXPECT_EQ(hit->decode_time, absl::FromUnixSeconds(1000));
  EXPECT_EQ(cache.Lookup({"1HGCM82633A004352", 2003}, kNow), nullptr)
      << "the model-year hint is part of the key";
}

TEST(ResultCache, ExpiresAfterTtl) {
  ResultCache cache(10, absl::Minutes(5));
  cache.Insert({"A", 0}, Live("A", "X"), kNow);
  EXPECT_NE(cache.Lookup({"A", 0}, kNow + absl::Minutes(4)), nullptr);
  EXPECT_EQ(cache.Lookup({"A", 0}, kNow + absl::Minutes(5)), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ResultCache, EvictsLeastRecentlyUsed) {
  ResultCache cache(2, absl::Hours(1));
  cache.Insert({"A", 0}, Live("A", "a"), kNow);
  cache.Insert({"B", 0}, Live("B", "b"), kNow);
  ASSERT_NE(cache.Lookup({"A", 0}, kNow), nullptr);  // A is now fresher
  cache.Insert({"C", 0}, Live("C", "c"), kNow);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.Lookup({"A", 0}, kNow), nullptr);
  EXPECT_EQ(cache.Lookup({"B", 0}, kNow), nullptr);
  EXPECT_NE(cache.Lookup({"C", 0}, kNow), nullptr);
}

TEST(ResultCache, ZeroCapacityStoresNothing) {
  ResultCache cache(0, absl::Hours(1));
  cache.Insert({"A", 0}, Live("A", "a"), kNow);
  EXPECT_EQ(cache.Lookup({"A", 0}, kNow), nullptr);
}

}  // namespace
}  // namespace engine
