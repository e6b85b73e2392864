// What a replica believes of what it reads from Redis (fleet/trust.h,
// fleet/event_bounds.h), as tables: each cached value or event, with and
// without the fleet's secret, and the verdict. Results are encoded and read
// back by the server's own mapping (server/common/proto_mapping.h), as in
// production.
#include "fleet/trust.h"

#include <string>
#include <vector>

#include "fleet/event_mapping.h"
#include "gtest/gtest.h"
#include "server/common/proto_mapping.h"

namespace fleet {
namespace {

using engine::FleetEvent;

const absl::Time kNow = absl::FromUnixSeconds(1796300000);
constexpr char kHonda[] = "1HGCM82633A004352";
constexpr char kTesla[] = "5YJ3E1EA7KF317000";

std::string ResultBytes(const std::string& vin, const std::string& make,
                        int model_year = 2003,
                        absl::Time decoded = kNow - absl::Minutes(5)) {
  engine::DecodeResult r;
  r.vin = vin;
  r.vehicle.make = make;
  r.vehicle.model_year = model_year;
  r.source = engine::Source::kCache;
  r.decode_time = decoded;
  return server::EncodeResult(r);
}

Trust TrustWith(std::shared_ptr<const FleetSecret> secret) {
  Trust t;
  t.secret = std::move(secret);
  t.read_result = server::CheckResultBytes;
  t.limits.cache_ttl = absl::Hours(24);
  t.limits.breaker_cooldown_max = absl::Minutes(2);
  t.limits.delay_max = absl::Minutes(2);
  return t;
}

std::shared_ptr<const FleetSecret> Secret(const std::string& s) {
  return *FleetSecret::Create(s);
}

std::string Key(const std::string& fleet_key) {
  return "vin:result:" + fleet_key;
}

struct ResultCase {
  std::string name;
  std::string stored;
  std::string fleet_key;
  absl::optional<Rejection> rejected;  // nullopt: believed
};

void RunResultCases(const Trust& trust, const std::vector<ResultCase>& cases) {
  for (const ResultCase& c : cases) {
    SCOPED_TRACE(c.name);
    Verdict<std::string> v =
        CheckCachedResult(c.stored, Key(c.fleet_key), c.fleet_key, kNow, trust);
    if (!c.rejected) {
      ASSERT_TRUE(v.value.has_value())
          << RejectionName(v.rejected) << ": " << v.why;
      engine::DecodeResult r;
      ASSERT_TRUE(server::DecodeResultBytes(*v.value, &r))
          << "the seal is gone";
      EXPECT_EQ(r.vin, c.fleet_key.substr(0, 17));
    } else {
      EXPECT_FALSE(v.value.has_value());
      EXPECT_EQ(RejectionName(v.rejected), RejectionName(*c.rejected)) << v.why;
      EXPECT_FALSE(v.why.empty());
    }
  }
}

TEST(FleetTrust, CachedResultsWithoutASecretAreCheckedLikeDiskRows) {
  const std::string honda = ResultBytes(kHonda, "HONDA");
  const std::string k0 = std::string(kHonda) + "|0";
  const std::string k2003 = std::string(kHonda) + "|2003";
  const std::string k2010 = std::string(kHonda) + "|2010";
  const std::string tesla_key = std::string(kTesla) + "|0";
  const absl::optional<Rejection> ok;
  RunResultCases(
      TrustWith(nullptr),
      {
          {"sealed for its key", Seal(honda, Key(k0), kNow, nullptr), k0, ok},
          {"unsealed (an older replica's)", honda, k0, ok},
          {"garbage", "\xff\xfe garbage", k0, Rejection::kResultUnparsable},
          {"empty", "", k0, Rejection::kResultUnparsable},
          {"protobuf, but no VIN nor time", std::string("\x20\x02", 2), k0,
           Rejection::kResultUnparsable},
          {"larger than a result can be", std::string(kMaxValueBytes + 1, 'x'),
           k0, Rejection::kResultUnparsable},
          {"another VIN's result (a TESLA for a HONDA)",
           ResultBytes(kTesla, "TESLA"), k0, Rejection::kResultWrongVin},
          {"another VIN's sealed value moved here",
           Seal(ResultBytes(kTesla, "TESLA"), Key(tesla_key), kNow, nullptr),
           k0, Rejection::kResultWrongKey},
          {"this VIN's, sealed for another hint",
           Seal(honda, Key(k0), kNow, nullptr), k2003,
           Rejection::kResultWrongKey},
          {"unsealed, of the hint's year", honda, k2003, ok},
          {"unsealed, of another year than the hint", honda, k2010,
           Rejection::kResultWrongKey},
          {"unsealed, no year", ResultBytes(kHonda, "HONDA", 0), k2010, ok},
          {"decoded longer ago than --cache_ttl",
           ResultBytes(kHonda, "HONDA", 2003, kNow - absl::Hours(25)), k0,
           Rejection::kResultExpired},
          {"decoded in the future",
           ResultBytes(kHonda, "HONDA", 2003, kNow + absl::Hours(25)), k0,
           Rejection::kResultFuture},
          {"decoded a little ahead of this clock (skew)",
           ResultBytes(kHonda, "HONDA", 2003, kNow + absl::Seconds(20)), k0,
           ok},
          {"a key that is no fleet key", honda, "K|0",
           Rejection::kResultWrongKey},
      });
}

// A replica of the previous version reads a sealed result as it reads any:
// the seal is a field it does not know.
TEST(FleetTrust, ASealedResultStillParsesForAReaderWithoutSeals) {
  const auto secret = Secret("the fleet's secret, 32 bytes ...");
  const std::string k0 = std::string(kHonda) + "|0";
  engine::DecodeResult r;
  ASSERT_TRUE(server::DecodeResultBytes(
      Seal(ResultBytes(kHonda, "HONDA"), Key(k0), kNow, secret.get()), &r));
  EXPECT_EQ(r.vin, kHonda);
  EXPECT_EQ(r.vehicle.make, "HONDA");
}

TEST(FleetTrust, WithTheSecretOnlySignedResultsForTheirKeyAreBelieved) {
  const auto secret = Secret("the fleet's secret, 32 bytes ...");
  const auto other = Secret("another fleet's secret, 32 bytes");
  const std::string honda = ResultBytes(kHonda, "HONDA");
  const std::string k0 = std::string(kHonda) + "|0";
  const std::string k2003 = std::string(kHonda) + "|2003";
  const std::string signed_ = Seal(honda, Key(k0), kNow, secret.get());
  // The signed value's seal behind other bytes: the MAC is for the first.
  const std::string other_bytes = ResultBytes(kHonda, "FORGED");
  const std::string tampered = other_bytes + signed_.substr(honda.size());
  RunResultCases(
      TrustWith(secret),
      {
          {"signed for its key", signed_, k0, absl::nullopt},
          {"unsealed", honda, k0, Rejection::kResultUnsigned},
          {"sealed without a MAC", Seal(honda, Key(k0), kNow, nullptr), k0,
           Rejection::kResultUnsigned},
          {"signed with another secret",
           Seal(honda, Key(k0), kNow, other.get()), k0,
           Rejection::kResultBadSignature},
          {"signed for another key", signed_, k2003,
           Rejection::kResultWrongKey},
          {"other bytes under the seal", tampered, k0,
           Rejection::kResultBadSignature},
          {"garbage", "\xff garbage", k0, Rejection::kResultUnparsable},
      });
}

FleetEvent Abandoned() {
  FleetEvent e;
  e.kind = FleetEvent::Kind::kAbandoned;
  e.key = std::string(kHonda) + "|0";
  e.origin = "r1";
  return e;
}

FleetEvent Done(const std::string& encoded, const std::string& cached) {
  FleetEvent e;
  e.kind = FleetEvent::Kind::kDone;
  e.key = std::string(kHonda) + "|0";
  e.origin = "r1";
  e.encoded = std::make_shared<const std::string>(encoded);
  e.cached = std::make_shared<const std::string>(cached);
  return e;
}

FleetEvent BreakerOpened(absl::Duration cooldown) {
  FleetEvent e;
  e.kind = FleetEvent::Kind::kBreakerOpened;
  e.origin = "r1";
  e.breaker.cooldown = cooldown;
  e.breaker.unreachable_since = kNow - absl::Minutes(1);
  return e;
}

struct EventCase {
  std::string name;
  std::string message;
  absl::optional<Rejection> rejected;
};

void RunEventCases(EventChecks* checks, const std::vector<EventCase>& cases) {
  for (const EventCase& c : cases) {
    Verdict<FleetEvent> v = checks->Check(c.message, "vin:events", kNow);
    if (!c.rejected) {
      EXPECT_TRUE(v.value.has_value())
          << c.name << ": " << RejectionName(v.rejected) << ": " << v.why;
    } else {
      EXPECT_FALSE(v.value.has_value()) << c.name;
      EXPECT_EQ(RejectionName(v.rejected), RejectionName(*c.rejected))
          << c.name << ": " << v.why;
    }
  }
}

TEST(FleetTrust, EventsWithoutASecretMustParseAndNameTheirKeysVin) {
  const Trust trust = TrustWith(nullptr);
  EventChecks checks(&trust);
  const std::string honda = ResultBytes(kHonda, "HONDA");
  FleetEvent bad_key = Abandoned();
  bad_key.key = "K|0";
  RunEventCases(
      &checks,
      {
          {"unsealed (an older replica's)", EncodeEvent(Abandoned()),
           absl::nullopt},
          {"sealed for the channel",
           Seal(EncodeEvent(Abandoned()), "vin:events", kNow, nullptr),
           absl::nullopt},
          {"sealed for another channel",
           Seal(EncodeEvent(Abandoned()), "other:events", kNow, nullptr),
           Rejection::kEventWrongChannel},
          {"garbage", "\xff\xff garbage", Rejection::kEventUnparsable},
          {"a key that is no fleet key", EncodeEvent(bad_key),
           Rejection::kEventUnparsable},
          {"a DONE whose result is garbage",
           EncodeEvent(Done("\xff garbage", honda)),
           Rejection::kEventUnparsable},
          {"a DONE with another VIN's result",
           EncodeEvent(Done(honda, ResultBytes(kTesla, "TESLA"))),
           Rejection::kEventWrongVin},
          {"a DONE of this VIN", EncodeEvent(Done(honda, honda)),
           absl::nullopt},
          {"a DONE whose result is decoded in the future",
           EncodeEvent(Done(ResultBytes(kHonda, "HONDA", 2003,
                                        kNow + absl::Hours(25)),
                            honda)),
           Rejection::kEventStale},
      });
  // Believed, but cut to this replica's limits: a 10-year cool-down is two
  // minutes here.
  Verdict<FleetEvent> v = checks.Check(
      EncodeEvent(BreakerOpened(absl::Hours(87600))), "vin:events", kNow);
  ASSERT_TRUE(v.value.has_value()) << v.why;
  EXPECT_EQ(v.value->breaker.cooldown, absl::Minutes(2));
}

TEST(FleetTrust, WithTheSecretEventsAreSignedFreshAndNew) {
  const auto secret = Secret("the fleet's secret, 32 bytes ...");
  const auto other = Secret("another fleet's secret, 32 bytes");
  const Trust trust = TrustWith(secret);
  EventChecks checks(&trust);
  const std::string event = EncodeEvent(BreakerOpened(absl::Hours(87600)));
  const std::string signed_ = Seal(event, "vin:events", kNow, secret.get());
  RunEventCases(
      &checks,
      {
          {"unsigned", event, Rejection::kEventUnsigned},
          {"sealed without a MAC", Seal(event, "vin:events", kNow, nullptr),
           Rejection::kEventUnsigned},
          {"signed with another secret",
           Seal(event, "vin:events", kNow, other.get()),
           Rejection::kEventBadSignature},
          {"signed for another channel",
           Seal(event, "other:events", kNow, secret.get()),
           Rejection::kEventWrongChannel},
          {"issued 31 s ago",
           Seal(event, "vin:events", kNow - absl::Seconds(31), secret.get()),
           Rejection::kEventStale},
          {"issued 31 s ahead",
           Seal(event, "vin:events", kNow + absl::Seconds(31), secret.get()),
           Rejection::kEventStale},
          {"signed, fresh", signed_, absl::nullopt},
          {"the same again (replayed)", signed_, Rejection::kEventReplayed},
          {"signed a moment later",
           Seal(event, "vin:events", kNow + absl::Milliseconds(1),
                secret.get()),
           absl::nullopt},
      });
}

TEST(FleetBounds, AnEventIsCutToThisReplicasLimits) {
  FleetLimits limits;
  limits.breaker_cooldown_max = absl::Seconds(2);
  limits.delay_max = absl::Seconds(5);
  FleetEvent opened = BreakerOpened(absl::Hours(87600));
  opened.breaker.unreachable_since = kNow + absl::Hours(1);
  opened.breaker.last_error = {70000, std::string(40, 'k'),
                               std::string(3000, 'm')};
  EXPECT_TRUE(ClampEvent(limits, kNow, &opened));
  EXPECT_EQ(opened.breaker.cooldown, absl::Seconds(2));
  EXPECT_EQ(opened.breaker.unreachable_since, kNow) << "not in the future";
  EXPECT_EQ(opened.breaker.last_error.http_status, 999);
  EXPECT_EQ(opened.breaker.last_error.kind.size(), 32u);
  EXPECT_EQ(opened.breaker.last_error.message.size(), kMaxEventTextBytes);

  FleetEvent negative = BreakerOpened(-absl::Seconds(3));
  EXPECT_TRUE(ClampEvent(limits, kNow, &negative));
  EXPECT_EQ(negative.breaker.cooldown, absl::ZeroDuration());

  FleetEvent retrying = Abandoned();
  retrying.kind = FleetEvent::Kind::kRetrying;
  retrying.retrying.attempt = -4;
  retrying.retrying.next_delay = absl::Hours(87600);
  EXPECT_TRUE(ClampEvent(limits, kNow, &retrying));
  EXPECT_EQ(retrying.retrying.attempt, 1);
  EXPECT_EQ(retrying.retrying.next_delay, absl::Seconds(5));

  FleetEvent failed = Abandoned();
  failed.kind = FleetEvent::Kind::kFailed;
  failed.failure.attempts = 1 << 30;
  failed.failure.retry_delay = absl::Hours(87600);
  // Two-byte characters: the cut never splits one.
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xc3\xa9";
  failed.failure.message = text;
  EXPECT_TRUE(ClampEvent(limits, kNow, &failed));
  EXPECT_EQ(failed.failure.attempts, kMaxReportedAttempts);
  EXPECT_EQ(failed.failure.retry_delay, absl::Seconds(5));
  EXPECT_EQ(failed.failure.message.size(), kMaxEventTextBytes);
  EXPECT_EQ(failed.failure.message.back(), '\xa9');

  FleetEvent fine = BreakerOpened(absl::Seconds(1));
  EXPECT_FALSE(ClampEvent(limits, kNow, &fine)) << "within the limits: as is";
  EXPECT_EQ(fine.breaker.cooldown, absl::Seconds(1));
}

TEST(FleetBounds, AFleetKeyIsAVinAndAModelYear) {
  EXPECT_TRUE(ParseFleetKey("1HGCM82633A004352|0").ok());
  auto k = ParseFleetKey("1HGCM82633A004352|2003");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->vin, "1HGCM82633A004352");
  EXPECT_EQ(k->model_year, 2003);
  auto partial = ParseFleetKey("5UXWX7C5*BA|2011");  // rule 18
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(partial->vin, "5UXWX7C5*BA");
  for (const char* bad :
       {"K|0", "1HGCM82633A004352", "1HGCM82633A0043521|0", "1H*CM826|0",
        "1HGCM82633A004352|", "1HGCM82633A004352|+0", "1HGCM82633A004352|1979",
        "1HGCM82633A004352|2101", "1HGCM82633A00435I|0", "1hgcm82633a004352|0",
        "1HGCM82633A004352|20031"}) {
    EXPECT_FALSE(ParseFleetKey(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace fleet
