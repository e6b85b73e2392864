// Snapshot decodes of real VINs, checked against NHTSA's rules
// (SNAPSHOT.md section 4) and, where we have one, the live vPIC answer.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot.h"
#include "test_snapshot.h"

namespace snapshot {
namespace {

using ::snapshot::testing::SharedSnapshot;
using ::testing::Contains;
using ::testing::Field;
using ::testing::Not;

constexpr int kReferenceYear = 2026;

SnapshotDecode MustDecode(const std::string& vin, int hint = 0,
                          int reference_year = kReferenceYear) {
  auto snapshot = SharedSnapshot();
  if (snapshot == nullptr) return {};
  absl::StatusOr<SnapshotDecode> d = snapshot->Decode(vin, hint, reference_year);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : SnapshotDecode();
}

std::string Attr(const SnapshotDecode& d, const std::string& name) {
  auto it = d.vehicle.attributes.find(name);
  return it == d.vehicle.attributes.end() ? "<absent>" : it->second;
}

auto HasCode(const std::string& code) {
  return Contains(Field(&vpic::Note::code, code));
}

TEST(SnapshotDecode, FordF150MatchesTheLiveAnswer) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode d = MustDecode("1FTMW1T88MFA00001");
  const vpic::Vehicle& v = d.vehicle;
  EXPECT_EQ(v.make, "FORD");  // upper case, as the live API
  EXPECT_EQ(v.model, "F-150");
  EXPECT_EQ(v.model_year, 2021);
  EXPECT_EQ(v.series, "F-Series");
  EXPECT_EQ(v.body_class, "Pickup");
  EXPECT_EQ(Attr(d, "PlantCity"), "DEARBORN");
  EXPECT_EQ(v.plant_country, "UNITED STATES (USA)");
  EXPECT_EQ(v.vehicle_type, "TRUCK");
  EXPECT_EQ(v.engine_cylinders, 6);
  EXPECT_DOUBLE_EQ(v.displacement_l, 3.5);
  EXPECT_EQ(Attr(d, "DisplacementCC"), "3500.0");
  EXPECT_EQ(Attr(d, "DisplacementCI"), "213.58310433156");
  EXPECT_EQ(Attr(d, "GVWR"), "Class 2E: 6,001 - 7,000 lb (2,722 - 3,175 kg)");
  EXPECT_EQ(Attr(d, "MakeID"), "460");
  EXPECT_EQ(Attr(d, "ModelID"), "1801");
  // What the snapshot lacks stays absent: no guesses.
  EXPECT_EQ(v.trim, "");
  EXPECT_EQ(v.drive_type, "");
  EXPECT_EQ(Attr(d, "Trim"), "<absent>");
  EXPECT_EQ(Attr(d, "DriveType"), "<absent>");
  EXPECT_EQ(Attr(d, "EngineHP"), "<absent>");
  EXPECT_THAT(d.notes, HasCode("0"));
  EXPECT_THAT(d.notes, Not(HasCode("8")));
  EXPECT_THAT(d.notes, HasCode("snapshot"));
}

TEST(SnapshotDecode, SnapshotNoteNamesDateAndSha256) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode d = MustDecode("1FTMW1T88MFA00001");
  auto snapshot = SharedSnapshot();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->info().date, "2026-02-17");
  EXPECT_EQ(snapshot->info().sha256.size(), 64u);
  bool found = false;
  for (const vpic::Note& n : d.notes) {
    if (n.code != "snapshot") continue;
    found = true;
    EXPECT_NE(n.message.find(snapshot->info().date), std::string::npos);
    EXPECT_NE(n.message.find(snapshot->info().sha256), std::string::npos);
  }
  EXPECT_TRUE(found);
}

// corgi 2.0.1 says F-550 / F-450 here; NHTSA's ranking says F-150.
TEST(SnapshotDecode, NhtsaRankingPicksF150WhereCorgiDoesNot) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const char* vin : {"1FTFW5L86RFB45612", "1FTFW4L86RFA86622"}) {
    const SnapshotDecode d = MustDecode(vin);
    EXPECT_EQ(d.vehicle.make, "FORD") << vin;
    EXPECT_EQ(d.vehicle.model, "F-150") << vin;
    EXPECT_EQ(d.vehicle.model_year, 2024) << vin;
  }
}

TEST(SnapshotDecode, UnknownWmiIsCodeSevenWithNoVehicleData) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode d = MustDecode("AAAAA1118GA000001");
  EXPECT_THAT(d.notes, HasCode("7"));
  EXPECT_THAT(d.notes, Not(HasCode("0")));
  EXPECT_EQ(d.vehicle.make, "");
  EXPECT_EQ(d.vehicle.model, "");
  EXPECT_EQ(d.vehicle.model_year, 0);
}

// Position 10 that is no model-year code: vPIC still decodes, over every
// year's schemas, with codes 11 (model year) and 400 (character), and its
// check-digit rule rejects the position too (1).
TEST(SnapshotDecode, InvalidPositionTenStillDecodesWithCodes) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const char* vin :
       {"1FTMW1T850FA00001", "1FTMW1T88UFA00001", "1FTMW1T89ZFA00001"}) {
    const SnapshotDecode d = MustDecode(vin);
    EXPECT_EQ(d.vehicle.make, "FORD") << vin;
    EXPECT_EQ(d.vehicle.model, "F-150") << vin;
    EXPECT_EQ(d.vehicle.model_year, 0) << vin;
    EXPECT_THAT(d.notes, HasCode("11")) << vin;
    EXPECT_THAT(d.notes, HasCode("400")) << vin;
    EXPECT_THAT(d.notes, HasCode("1")) << vin;
    EXPECT_THAT(Attr(d, "AdditionalErrorText"),
                ::testing::HasSubstr("Invalid character(s): 10:"))
        << vin;
  }
}

// Position 3 '9': the WMI is positions 1-3 + 12-14 (1F9434, a motorcycle
// maker), and positions 15-17 must be digits.
TEST(SnapshotDecode, SixCharacterWmi) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode trike = MustDecode("1F9T00009EA434001");
  EXPECT_EQ(trike.vehicle.make, "FULMER FABRICATIONS");
  EXPECT_EQ(trike.vehicle.model, "Fulmer Trike");
  EXPECT_EQ(trike.vehicle.model_year, 2014);
  EXPECT_EQ(trike.vehicle.vehicle_type, "MOTORCYCLE");
  EXPECT_THAT(trike.notes, HasCode("0"));
  // Same maker, other positions 12-14: an unknown six-character WMI.
  const SnapshotDecode other = MustDecode("1F9T00009EA435001");
  EXPECT_THAT(other.notes, HasCode("7"));
}

// Heavy vehicles: no position-7 rule; both candidate years are decoded and
// the better pass wins.
TEST(SnapshotDecode, HeavyVehicleYearFromBothCandidates) {
  SKIP_WITHOUT_SNAPSHOT();
  // A 2016 bus with a digit at position 7 (corgi: 1986, its issue #35).
  const SnapshotDecode bus = MustDecode("4RKYLA208GA000001");
  EXPECT_EQ(bus.vehicle.make, "NOVABUS");
  EXPECT_EQ(bus.vehicle.model, "LFS");
  EXPECT_EQ(bus.vehicle.model_year, 2016);
  // 'W' reads 2028 (not beyond 2026 + 2), but only 1998 has UD schemas.
  const SnapshotDecode truck = MustDecode("JNELC00X6W0000001");
  EXPECT_EQ(truck.vehicle.make, "UD");
  EXPECT_EQ(truck.vehicle.model, "UD2300");
  EXPECT_EQ(truck.vehicle.model_year, 1998);
  EXPECT_THAT(Attr(truck, "AdditionalErrorText"),
              ::testing::HasSubstr("Model Year decoded for this VIN may be "
                                   "incorrect"));
  // With an older reference year 2028 is in the future: 1998 outright.
  const SnapshotDecode older = MustDecode("JNELC00X6W0000001", 0, 2020);
  EXPECT_EQ(older.vehicle.model_year, 1998);
  EXPECT_EQ(Attr(older, "AdditionalErrorText"), "<absent>");
}

TEST(SnapshotDecode, ModelYearHint) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode same = MustDecode("1FTMW1T88MFA00001", 2021);
  EXPECT_EQ(same.vehicle.model_year, 2021);
  EXPECT_THAT(same.notes, Not(HasCode("12")));
  // A hint that is neither reading: vPIC decodes that year, with code 12.
  const SnapshotDecode other = MustDecode("1FTMW1T88MFA00001", 2015);
  EXPECT_EQ(other.vehicle.model_year, 2015);
  EXPECT_THAT(other.notes, HasCode("12"));
}

TEST(SnapshotDecode, CheckDigitMismatchIsCodeOne) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode d = MustDecode("1FTMW1T87MFA00001");
  EXPECT_EQ(d.vehicle.model, "F-150");
  EXPECT_THAT(d.notes, HasCode("1"));
  EXPECT_THAT(d.notes, Not(HasCode("0")));
}

// Rule 18: a partial VIN, read as vPIC reads it ('*' for what is unknown,
// padded to 17): what its known positions give, and code 6 (Incomplete
// VIN) where a whole VIN's check digit would be judged.
TEST(SnapshotDecode, APartialVinDecodesWhatItsPositionsGive) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const char* partial : {"1FTMW1T8*MFA0000", "1FTMW1T88MFA0000*"}) {
    SCOPED_TRACE(partial);
    const SnapshotDecode d = MustDecode(partial);
    EXPECT_EQ(d.vehicle.make, "FORD");
    EXPECT_EQ(d.vehicle.model, "F-150");
    EXPECT_EQ(d.vehicle.model_year, 2021);
    EXPECT_THAT(d.notes, HasCode("6"));
    EXPECT_THAT(d.notes, Not(HasCode("1")));
  }
}

TEST(SnapshotDecode, RejectsInputThatIsNotANormalisedVin) {
  SKIP_WITHOUT_SNAPSHOT();
  auto snapshot = SharedSnapshot();
  ASSERT_NE(snapshot, nullptr);
  for (const char* bad : {"", "1F", "1F*MW1T88MFA00001", "1ftmw1t88mfa00001",
                          "1FTMW1T88MFA000#1", "1FTMW1T88MFA000011"}) {
    EXPECT_EQ(snapshot->Decode(bad, 0, kReferenceYear).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(snapshot->Decode("1FTMW1T88MFA00001", 0, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SnapshotLoad, MissingFileIsNotFound) {
  EXPECT_EQ(Snapshot::Load("/nonexistent/vpic.lite.db").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace snapshot
