#include "engine/result_cache.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "disk_cache/disk_cache.h"
#include "gtest/gtest.h"
#include "retry/clock.h"
#include "testing/temp_dir.h"

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

// A live result that comes with its bytes becomes a cache answer through
// the recoder, from those bytes; without bytes, or when the recoder cannot
// read them, the encoder encodes the cache answer.
TEST(ResultCache, ALiveResultsBytesAreRecodedNotEncodedAgain) {
  int encoded = 0;
  ResultCacheOptions o;
  o.capacity = 10;
  o.encoder = [&encoded](const DecodeResult& r) {
    ++encoded;
    return absl::StrCat(r.vin, "|", r.vehicle.make, "|", r.attempts);
  };
  o.as_cache_answer =
      [](const std::string& live) -> absl::optional<std::string> {
    if (live == "unreadable") return absl::nullopt;
    return "cache answer of " + live;
  };
  ResultCache cache(std::move(o));
  DecodeResult with_bytes = Live("A", "HONDA");
  with_bytes.encoded = std::make_shared<const std::string>("A|HONDA|3");
  auto answer = cache.Insert({"A", 0}, with_bytes, kNow);
  EXPECT_EQ(encoded, 0);
  EXPECT_EQ(*answer->encoded, "cache answer of A|HONDA|3");
  for (const auto& a : {answer, cache.Lookup({"A", 0}, kNow)}) {
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->vin, "A");
    EXPECT_EQ(a->source, Source::kCache);
    EXPECT_EQ(a->attempts, 0);
    EXPECT_EQ(a->decode_time, absl::FromUnixSeconds(1000));
    EXPECT_EQ(a->vehicle.make, "") << "the answer is its bytes alone";
  }
  DecodeResult unreadable = Live("B", "FORD");
  unreadable.encoded = std::make_shared<const std::string>("unreadable");
  EXPECT_EQ(*cache.Insert({"B", 0}, unreadable, kNow)->encoded, "B|FORD|0");
  EXPECT_EQ(*cache.Insert({"C", 0}, Live("C", "KIA"), kNow)->encoded,
            "C|KIA|0");
  EXPECT_EQ(encoded, 2);
}

TEST(ResultCache, ZeroCapacityStoresNothing) {
  ResultCache cache(0, absl::Hours(1));
  cache.Insert({"A", 0}, Live("A", "a"), kNow);
  EXPECT_EQ(cache.Lookup({"A", 0}, kNow), nullptr);
}

}  // namespace
}  // namespace engine

namespace engine {
namespace {

// 10 entries, fresh for an hour (a reference answer for six), kept 48 hours,
// over `disk`.
ResultCacheOptions OverDisk(ResultEncoder encoder, ResultDecoder decoder,
                            disk_cache::DiskCache* disk,
                            const retry::Clock* clock) {
  ResultCacheOptions o;
  o.capacity = 10;
  o.ttl = absl::Hours(1);
  o.reference_ttl = absl::Hours(6);
  o.stale_max = absl::Hours(48);
  o.encoder = std::move(encoder);
  o.decoder = std::move(decoder);
  o.disk = disk;
  o.clock = clock;
  return o;
}

// The disk layer (rule 14): what one cache wrote, a new cache over the same
// file answers, with the entry's age; a row that does not parse is
// discarded, never answered; a stale one answers LookupStale only.
TEST(ResultCacheDisk, AnotherCacheOverTheSameFileAnswersWithTheAge) {
  const testing_util::TempDir dir("vin-result-cache");
  const std::string path = dir.File("c.db");
  retry::FakeClock clock(absl::FromUnixSeconds(1000) + absl::Minutes(1));
  ResultEncoder encoder = [](const DecodeResult& r) {
    return r.vin + "|" + r.vehicle.make;
  };
  ResultDecoder decoder = [](const std::string& b, DecodeResult* out) {
    const size_t bar = b.find('|');
    if (bar == std::string::npos) return false;
    out->vin = b.substr(0, bar);
    out->vehicle.make = b.substr(bar + 1);
    return true;
  };
  const coalesce::FlightKey a{"1HGCM82633A004352", 0}, b{"1FTMW1T88MFA00001", 0};
  {
    disk_cache::Options d;
    d.path = path;
    d.clock = &clock;
    auto disk = disk_cache::DiskCache::Open(d, [](const std::string&) {});
    ASSERT_TRUE(disk.ok()) << disk.status();
    ResultCache cache(OverDisk(encoder, decoder, disk->get(), &clock));
    cache.Insert(a, Live(a.vin, "HONDA"), clock.Now());
    cache.Insert(b, Live(b.vin, "FORD"), clock.Now());
    (*disk)->Close();
    EXPECT_EQ((*disk)->stats().entries, 2u);
  }
  disk_cache::Options d;
  d.path = path;
  d.clock = &clock;
  auto disk = disk_cache::DiskCache::Open(d, [](const std::string&) {});
  ASSERT_TRUE(disk.ok());
  ResultCache cache(OverDisk(encoder, decoder, disk->get(), &clock));
  auto hit = cache.Lookup(a, clock.Now());
  ASSERT_NE(hit, nullptr) << "read from the file";
  EXPECT_EQ(hit->source, Source::kCache);
  EXPECT_EQ(*hit->encoded, a.vin + "|HONDA");
  EXPECT_EQ(hit->decode_time, absl::FromUnixSeconds(1000));
  // Two hours on, b is stale: no hit, but LookupStale has it with its age.
  clock.Advance(absl::Hours(2));
  EXPECT_EQ(cache.Lookup(b, clock.Now()), nullptr);
  auto stale = cache.LookupStale(b, clock.Now());
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->age, absl::Hours(2) + absl::Minutes(1));
}

// Rule 18: a reference answer (GetModelsForMake, ...) is kept as its
// document, fresh for --reference_ttl (not --cache_ttl), on disk as it is;
// a row that is not a vPIC document is discarded, never answered.
TEST(ResultCacheDisk, AReferenceAnswerIsItsDocumentForTheReferenceTtl) {
  const testing_util::TempDir dir("vin-result-cache");
  const std::string path = dir.File("c.db");
  retry::FakeClock clock(absl::FromUnixSeconds(1000));
  ResultDecoder never = [](const std::string&, DecodeResult*) { return false; };
  const std::string doc =
      R"({"Count":1,"Message":"Response returned successfully",)"
      R"("SearchCriteria":"Make:honda","Results":[{"Make_ID":474,)"
      R"("Make_Name":"HONDA","Model_ID":1861,"Model_Name":"Accord"}]})";
  coalesce::FlightKey models;
  models.reference = "GetModelsForMake/honda";
  coalesce::FlightKey broken;
  broken.reference = "GetAllMakes";
  disk_cache::Options d;
  d.path = path;
  d.clock = &clock;
  {
    auto disk = disk_cache::DiskCache::Open(d, [](const std::string&) {});
    ASSERT_TRUE(disk.ok()) << disk.status();
    ResultCache cache(OverDisk({}, never, disk->get(), &clock));
    DecodeResult live;
    live.document = std::make_shared<const std::string>(doc);
    live.decode_time = clock.WallNow();
    live.attempts = 1;
    auto answer = cache.Insert(models, live, clock.Now());
    EXPECT_EQ(answer->source, Source::kCache);
    EXPECT_EQ(answer->attempts, 0);
    (*disk)->Put({"GetAllMakes", 0, "<html>maintenance</html>",
                  clock.WallNow()});
    (*disk)->Close();
  }
  auto disk = disk_cache::DiskCache::Open(d, [](const std::string&) {});
  ASSERT_TRUE(disk.ok());
  ResultCache cache(OverDisk({}, never, disk->get(), &clock));
  clock.Advance(absl::Hours(5));  // past --cache_ttl, within --reference_ttl
  auto hit = cache.Lookup(models, clock.Now());
  ASSERT_NE(hit, nullptr) << "read from the file";
  ASSERT_NE(hit->document, nullptr);
  EXPECT_EQ(*hit->document, doc);
  EXPECT_EQ(hit->source, Source::kCache);
  EXPECT_EQ(cache.Lookup(broken, clock.Now()), nullptr);
  EXPECT_FALSE((*disk)->MayContain("GetAllMakes", 0)) << "discarded";
  clock.Advance(absl::Hours(2));  // past --reference_ttl: stale
  EXPECT_EQ(cache.Lookup(models, clock.Now()), nullptr);
  auto stale = cache.LookupStale(models, clock.Now());
  ASSERT_TRUE(stale);
  EXPECT_EQ(*stale->answer->document, doc);
}

}  // namespace
}  // namespace engine
