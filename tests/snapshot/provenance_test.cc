// Rule 21: which fields of a snapshot answer to trust. With explain, every
// variable of the answer names its source, and each pattern it names is in
// the snapshot file with that value (read back here by SQL, independently
// of the decoder); position 10's open model years are listed with the rule
// that chose one.
#include <sqlite3.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "snapshot/snapshot.h"
#include "test_snapshot.h"

namespace snapshot {
namespace {

using ::snapshot::testing::SharedSnapshot;
using ::snapshot::testing::SnapshotPath;

// The fixture VINs the decode tests use: a light truck, a bus, a heavy
// truck, a six-character WMI's trike, two F-150s.
const char* const kFixtureVins[] = {
    "1FTMW1T88MFA00001", "4RKYLA208GA000001", "JNELC00X6W0000001",
    "1F9T00009EA434001", "1FTFW5L86RFB45612", "1FTFW4L86RFA86622",
};

using Row = std::vector<std::string>;

std::vector<Row> Rows(const std::string& sql) {
  std::vector<Row> rows;
  ::snapshot::testing::ForEachRow(sql, [&rows](sqlite3_stmt* st) {
    Row row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const unsigned char* text = sqlite3_column_text(st, c);
      row.emplace_back(text == nullptr ? ""
                                       : reinterpret_cast<const char*>(text));
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

std::string Folded(absl::string_view s) {
  return absl::AsciiStrToUpper(absl::StripAsciiWhitespace(s));
}

// The text a Pattern/EngineModelPattern row's AttributeId stands for: the
// element's lookup table's name, or the id itself.
std::string ValueOf(const std::string& element_id,
                    const std::string& attribute_id) {
  const std::vector<Row> lookup = Rows(absl::StrCat(
      "SELECT coalesce(LookupTable, '') FROM Element WHERE Id = ", element_id));
  if (lookup.empty() || lookup[0][0].empty()) return attribute_id;
  const std::vector<Row> name =
      Rows(absl::StrCat("SELECT Name FROM \"", lookup[0][0], "\" WHERE Id = '",
                        attribute_id, "'"));
  return name.empty() ? attribute_id : name[0][0];
}

std::string CodeOf(const std::string& element_id) {
  const std::vector<Row> code =
      Rows(absl::StrCat("SELECT Code FROM Element WHERE Id = ", element_id));
  return code.empty() ? "" : code[0][0];
}

SnapshotDecode Explain(const std::string& vin, int hint = 0) {
  absl::StatusOr<SnapshotDecode> d =
      SharedSnapshot()->Decode(vin, hint, 2026, /*explain=*/true);
  EXPECT_TRUE(d.ok()) << vin << ": " << d.status();
  return d.ok() ? *std::move(d) : SnapshotDecode();
}

TEST(SnapshotProvenance, EveryVariableNamesASourceAndEveryPatternIsInTheFile) {
  SKIP_WITHOUT_SNAPSHOT();
  int patterns_checked = 0;
  std::set<std::string> sources_seen;
  for (const char* vin : kFixtureVins) {
    SCOPED_TRACE(vin);
    const SnapshotDecode d = Explain(vin);
    const auto& attrs = d.vehicle.attributes;
    ASSERT_FALSE(attrs.empty());
    std::set<std::string> explained;
    for (const domain::FieldSource& f : d.provenance) {
      SCOPED_TRACE(absl::StrCat(f.variable, " <- ", f.source, " ", f.key));
      ASSERT_TRUE(attrs.count(f.variable)) << "a source for no variable";
      explained.insert(f.variable);
      sources_seen.insert(f.source);
      const std::string& value = attrs.at(f.variable);
      if (f.source == "pattern" || f.source == "formula" ||
          f.source == "model") {
        const std::vector<Row> rows = Rows(absl::StrCat(
            "SELECT VinSchemaId, upper(Keys), ElementId, AttributeId FROM "
            "Pattern WHERE Id = ",
            f.pattern_id));
        ASSERT_EQ(rows.size(), 1u) << "pattern " << f.pattern_id;
        const Row& p = rows[0];
        EXPECT_EQ(p[0], absl::StrCat(f.schema_id));
        EXPECT_EQ(p[1], f.key);
        const std::string element = CodeOf(p[2]);
        if (f.source == "model") {
          // The make (and its id) of the model this pattern decodes.
          EXPECT_EQ(element, "Model");
          const std::vector<Row> make = Rows(absl::StrCat(
              "SELECT Make.Id, upper(Make.Name) FROM Make_Model JOIN Make ON "
              "Make.Id = Make_Model.MakeId WHERE Make_Model.ModelId = ",
              p[3]));
          ASSERT_FALSE(make.empty());
          EXPECT_EQ(value, f.variable == "MakeID" ? make[0][0] : make[0][1]);
        } else if (f.variable == "ModelID") {
          EXPECT_EQ(element, "Model");
          EXPECT_EQ(value, p[3]);
        } else if (f.source == "formula") {
          EXPECT_EQ(element, f.variable);
          EXPECT_TRUE(absl::StrContains(f.key, "#"));
        } else {
          EXPECT_EQ(element, f.variable);
          EXPECT_TRUE(
              absl::StrContains(Folded(value), Folded(ValueOf(p[2], p[3]))))
              << value << " vs the pattern's " << ValueOf(p[2], p[3]);
        }
        ++patterns_checked;
      } else if (f.source == "engine_model") {
        const std::vector<Row> rows = Rows(absl::StrCat(
            "SELECT ElementId, AttributeId FROM EngineModelPattern WHERE Id = ",
            f.pattern_id));
        ASSERT_EQ(rows.size(), 1u) << "engine model pattern " << f.pattern_id;
        EXPECT_EQ(CodeOf(rows[0][0]), f.variable);
        EXPECT_TRUE(absl::StrContains(Folded(value),
                                      Folded(ValueOf(rows[0][0], rows[0][1]))));
        ++patterns_checked;
      } else if (f.source == "wmi") {
        EXPECT_FALSE(
            Rows(absl::StrCat("SELECT 1 FROM Wmi WHERE Wmi = '", f.key, "'"))
                .empty())
            << "WMI " << f.key;
        EXPECT_TRUE(absl::StartsWith(vin, f.key.substr(0, 3)));
      } else if (f.source == "model_year_rule") {
        EXPECT_EQ(f.variable, "ModelYear");
        EXPECT_EQ(f.key, std::string(1, vin[9]));
      } else if (f.source == "conversion") {
        EXPECT_TRUE(attrs.count(f.key)) << "converted from " << f.key;
      } else if (f.source == "decoder") {
        EXPECT_EQ(f.variable, "AdditionalErrorText");
      } else {
        ADD_FAILURE() << "unknown source " << f.source;
      }
    }
    for (const auto& [name, value] : attrs) {
      EXPECT_TRUE(explained.count(name))
          << name << " = " << value << " names no source";
    }
  }
  EXPECT_GT(patterns_checked, 40);
  for (const char* source : {"pattern", "model", "wmi", "model_year_rule"}) {
    EXPECT_TRUE(sources_seen.count(source)) << source;
  }
}

TEST(SnapshotProvenance, NotFilledWithoutExplain) {
  SKIP_WITHOUT_SNAPSHOT();
  absl::StatusOr<SnapshotDecode> d =
      SharedSnapshot()->Decode(kFixtureVins[0], 0, 2026);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->provenance.empty());
  EXPECT_FALSE(d->vehicle.attributes.empty());
}

std::string Describe(const std::vector<domain::ModelYearCandidate>& c) {
  std::vector<std::string> parts;
  for (const auto& x : c) {
    parts.push_back(
        absl::StrCat(x.model_year, ":", x.rule, x.chosen ? "*" : ""));
  }
  return absl::StrJoin(parts, ", ");
}

// A 2016 bus: a digit at position 7 says nothing for a bus, so 'G' is 2016
// or 1986; the 2016 schemas decode it (corgi took 1986).
TEST(SnapshotModelYear, AnAmbiguousPositionTenGivesBothYearsAndTheRule) {
  SKIP_WITHOUT_SNAPSHOT();
  const SnapshotDecode bus = Explain("4RKYLA208GA000001");
  EXPECT_EQ(bus.vehicle.model_year, 2016);
  ASSERT_EQ(bus.model_year_candidates.size(), 2u)
      << Describe(bus.model_year_candidates);
  EXPECT_EQ(bus.model_year_candidates[0],
            (domain::ModelYearCandidate{2016, "schemas", true}))
      << Describe(bus.model_year_candidates);
  EXPECT_EQ(bus.model_year_candidates[1],
            (domain::ModelYearCandidate{1986, "30_year_cycle", false}));
  // 'W': 2028 or 1998; only 1998 has the WMI's schemas.
  const SnapshotDecode truck = Explain("JNELC00X6W0000001");
  EXPECT_EQ(Describe(truck.model_year_candidates),
            "1998:schemas*, 2028:30_year_cycle");
  // The caller's year picks one of the two.
  const SnapshotDecode hinted = Explain("JNELC00X6W0000001", 1998);
  EXPECT_EQ(Describe(hinted.model_year_candidates),
            "1998:hint*, 2028:30_year_cycle");
}

TEST(SnapshotModelYear, ACertainYearGivesNoCandidates) {
  SKIP_WITHOUT_SNAPSHOT();
  // Passenger cars: position 7 settles the cycle (a letter: 2010 on; a
  // digit: before 2010).
  EXPECT_EQ(Describe(Explain("1G1BEGGJ4PE996538").model_year_candidates), "");
  EXPECT_EQ(Explain("1G1BEGGJ4PE996538").vehicle.model_year, 2023);
  EXPECT_EQ(Describe(Explain("1G1WKK79160655435").model_year_candidates), "");
  EXPECT_EQ(Explain("1G1WKK79160655435").vehicle.model_year, 2006);
  // The snapshot lacks 1FT's truck type, so position 7 settles nothing for
  // an F-150 offline: its answer says the year may be incorrect, and lists
  // both (vPIC's live answer, which knows the type, lists none).
  const SnapshotDecode f150 = Explain("1FTMW1T88MFA00001");
  EXPECT_EQ(Describe(f150.model_year_candidates),
            "2021:schemas*, 1991:30_year_cycle");
  EXPECT_TRUE(absl::StrContains(
      f150.vehicle.attributes.at("AdditionalErrorText"), "may be incorrect"));
  // Past the reference year + 2 the newer reading is impossible.
  absl::StatusOr<SnapshotDecode> older =
      SharedSnapshot()->Decode("JNELC00X6W0000001", 0, 2020);
  ASSERT_TRUE(older.ok());
  EXPECT_EQ(Describe(older->model_year_candidates), "");
}

}  // namespace
}  // namespace snapshot
