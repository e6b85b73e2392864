// What a replica believes of a reference request's answer (rule 18) read
// from Redis or heard in a DONE event (fleet/trust.h): vPIC's JSON
// document, sealed, for its key, stored within --reference_ttl; and the
// syntax of a reference request's fleet key.
#include <string>
#include <vector>

#include "fleet/event_bounds.h"
#include "fleet/event_mapping.h"
#include "fleet/trust.h"
#include "gtest/gtest.h"
#include "server/common/proto_mapping.h"

namespace fleet {
namespace {

using engine::FleetEvent;

const absl::Time kNow = absl::FromUnixSeconds(1796300000);
constexpr char kModels[] =
    R"({"Count":1,"Message":"Response returned successfully",)"
    R"("SearchCriteria":"Make:honda","Results":[)"
    R"({"Make_ID":474,"Make_Name":"HONDA","Model_ID":1861,"Model_Name":"Accord"}]})";
const std::string kKey = "vpic:GetModelsForMake/honda";
const std::string kOtherKey = "vpic:GetModelsForMake/ford";

std::string RedisKey(const std::string& fleet_key) {
  return "vin:result:" + fleet_key;
}

Trust TrustWith(std::shared_ptr<const FleetSecret> secret) {
  Trust t;
  t.secret = std::move(secret);
  t.read_result = server::CheckResultBytes;
  t.limits.reference_ttl = absl::Hours(24);
  return t;
}

// The value RedisFleet stores for `fleet_key` at `when`.
std::string Stored(const std::string& document, const std::string& fleet_key,
                   absl::Time when = kNow - absl::Minutes(5),
                   const FleetSecret* secret = nullptr) {
  return Seal(EncodeReferenceAnswer(document), RedisKey(fleet_key), when,
              secret);
}

TEST(FleetTrustReference, ACachedAnswerIsASealedDocumentForItsKeyWithinItsTtl) {
  struct Case {
    std::string name;
    std::string stored;
    absl::optional<Rejection> rejected;  // nullopt: believed
  };
  const absl::optional<Rejection> ok;
  const std::vector<Case> cases = {
      {"sealed for its key", Stored(kModels, kKey), ok},
      {"an empty Results is an answer",
       Stored(R"({"Count":0,"Message":"","SearchCriteria":null,"Results":[]})",
              kKey),
       ok},
      {"unsealed", EncodeReferenceAnswer(kModels),
       Rejection::kResultUnparsable},
      {"the bare document, unwrapped", kModels, Rejection::kResultUnparsable},
      {"not vPIC's document (a maintenance page)",
       Stored("<html>down for maintenance</html>", kKey),
       Rejection::kResultUnparsable},
      {"a truncated document", Stored(std::string(kModels, 60), kKey),
       Rejection::kResultUnparsable},
      {"another request's answer moved here", Stored(kModels, kOtherKey),
       Rejection::kResultWrongKey},
      {"stored longer ago than --reference_ttl",
       Stored(kModels, kKey, kNow - absl::Hours(25)),
       Rejection::kResultExpired},
      {"stored in the future", Stored(kModels, kKey, kNow + absl::Hours(1)),
       Rejection::kResultFuture},
  };
  const Trust trust = TrustWith(nullptr);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Verdict<std::string> v =
        CheckCachedResult(c.stored, RedisKey(kKey), kKey, kNow, trust);
    if (!c.rejected) {
      ASSERT_TRUE(v.value.has_value())
          << RejectionName(v.rejected) << ": " << v.why;
      EXPECT_TRUE(engine::IsReferenceDocument(*v.value)) << "the document";
    } else {
      EXPECT_FALSE(v.value.has_value());
      EXPECT_EQ(RejectionName(v.rejected), RejectionName(*c.rejected)) << v.why;
    }
  }
  Verdict<std::string> v = CheckCachedResult(Stored(kModels, kKey),
                                             RedisKey(kKey), kKey, kNow, trust);
  EXPECT_EQ(v.value.value_or(""), kModels) << "the document, unwrapped";
}

TEST(FleetTrustReference, WithTheSecretOnlyASignedAnswerIsBelieved) {
  const auto secret = *FleetSecret::Create("the fleet's secret, 32 bytes ...");
  const auto other = *FleetSecret::Create("another fleet's secret, 32 bytes");
  const Trust trust = TrustWith(secret);
  auto check = [&](const std::string& stored) {
    return CheckCachedResult(stored, RedisKey(kKey), kKey, kNow, trust);
  };
  EXPECT_TRUE(check(Stored(kModels, kKey, kNow, secret.get())).value);
  EXPECT_EQ(check(Stored(kModels, kKey)).rejected, Rejection::kResultUnsigned);
  EXPECT_EQ(check(Stored(kModels, kKey, kNow, other.get())).rejected,
            Rejection::kResultBadSignature);
}

TEST(FleetTrustReference, ADoneEventCarriesVpicsDocument) {
  const Trust trust = TrustWith(nullptr);
  EventChecks checks(&trust);
  auto done = [](const std::string& encoded, const std::string& cached) {
    FleetEvent e;
    e.kind = FleetEvent::Kind::kDone;
    e.key = kKey;
    e.origin = "r1";
    e.encoded = std::make_shared<const std::string>(encoded);
    e.cached = std::make_shared<const std::string>(cached);
    return EncodeEvent(e);
  };
  Verdict<FleetEvent> v =
      checks.Check(done(kModels, kModels), "vin:events", kNow);
  ASSERT_TRUE(v.value.has_value()) << v.why;
  EXPECT_EQ(*v.value->cached, kModels);
  for (const std::string& bad :
       {done("<html>", kModels), done(kModels, "{\"Count\":1}")}) {
    Verdict<FleetEvent> r = checks.Check(bad, "vin:events", kNow);
    EXPECT_FALSE(r.value.has_value());
    EXPECT_EQ(r.rejected, Rejection::kEventUnparsable) << r.why;
  }
}

TEST(FleetBounds, AReferenceFleetKeyIsAPrintableRequest) {
  auto k = ParseFleetKey(kKey);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->reference, "GetModelsForMake/honda");
  EXPECT_TRUE(k->vin.empty());
  EXPECT_TRUE(ParseFleetKey("vpic:GetModelsForMakeYear/make/honda/modelyear/"
                            "2015?x=%20")
                  .ok());
  EXPECT_TRUE(ParseFleetKey("vpic:" + std::string(4096, 'G')).ok());
  for (const std::string& bad :
       {std::string("vpic:"), std::string("vpic:/GetAllMakes"),
        std::string("vpic:GetModelsForMake/a b"),
        std::string("vpic:GetModelsForMake/\x01"),
        std::string("vpic:GetModelsForMake/\xc3\xa9"),
        "vpic:" + std::string(4097, 'G'), std::string("VPIC:GetAllMakes")}) {
    EXPECT_FALSE(ParseFleetKey(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace fleet
