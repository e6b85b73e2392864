// Rule 18 offline: the snapshot's answers to vPIC's reference endpoints,
// each equal to an independent SQL query of the snapshot file made here
// (not the loader's queries), in vPIC's JSON shape; what the snapshot does
// not hold is NOT_FOUND naming what it answers.
#include <sqlite3.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"
#include "test_snapshot.h"

namespace snapshot {
namespace {

using Json = nlohmann::ordered_json;
using ::snapshot::testing::SharedSnapshot;
using ::snapshot::testing::SnapshotPath;

// Rows of `sql` on the snapshot file, each column as JSON (an integer
// column as a number, NULL as null, text as a string).
std::vector<std::vector<Json>> Rows(const std::string& sql) {
  std::vector<std::vector<Json>> rows;
  ::snapshot::testing::ForEachRow(sql, [&rows](sqlite3_stmt* st) {
    std::vector<Json> row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          row.emplace_back(sqlite3_column_int64(st, c));
          break;
        case SQLITE_NULL:
          row.emplace_back(nullptr);
          break;
        default:
          row.emplace_back(
              reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
      }
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

Json Answer(const std::string& key) {
  auto doc = SharedSnapshot()->Reference(key);
  EXPECT_TRUE(doc.ok()) << key << ": " << doc.status();
  if (!doc.ok()) return Json();
  Json j = Json::parse(**doc, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << key;
  EXPECT_EQ(j["Count"], j["Results"].size()) << key;
  return j;
}

// `answer`'s results, field by field in `fields`' order, are `rows`.
void ExpectResults(const Json& answer, const std::vector<std::string>& fields,
                   const std::vector<std::vector<Json>>& rows) {
  ASSERT_EQ(answer["Results"].size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Json& r = answer["Results"][i];
    ASSERT_EQ(r.size(), fields.size()) << "result " << i;
    for (size_t k = 0; k < fields.size(); ++k) {
      EXPECT_EQ(r[fields[k]], rows[i][k]) << "result " << i << " " << fields[k];
    }
  }
}

TEST(SnapshotReference, AllMakesAreTheMakeTableUpperCased) {
  SKIP_WITHOUT_SNAPSHOT();
  const Json a = Answer("GetAllMakes");
  EXPECT_TRUE(a["SearchCriteria"].is_null());
  EXPECT_EQ(a["Message"], "Response returned successfully");
  ExpectResults(a, {"Make_ID", "Make_Name"},
                Rows("SELECT Id, upper(trim(Name)) FROM Make ORDER BY Id"));
  EXPECT_GT(a["Count"], 10000);
}

TEST(SnapshotReference, ModelsForAMakeNameOrId) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string models =
      "SELECT m.Id, upper(trim(m.Name)), mo.Id, mo.Name FROM Make_Model mm "
      "JOIN Make m ON m.Id = mm.MakeId JOIN Model mo ON mo.Id = mm.ModelId ";
  const Json tesla = Answer("GetModelsForMake/tesla");
  EXPECT_EQ(tesla["SearchCriteria"], "Make:tesla");
  ExpectResults(tesla, {"Make_ID", "Make_Name", "Model_ID", "Model_Name"},
                Rows(models + "WHERE lower(m.Name) LIKE '%tesla%' "
                              "ORDER BY m.Id, mo.Id"));
  EXPECT_EQ(tesla["Results"][0]["Model_Name"], "Model S");
  const Json merc = Answer("GetModelsForMake/merc");  // LIKE: a part of it
  ExpectResults(merc, {"Make_ID", "Make_Name", "Model_ID", "Model_Name"},
                Rows(models + "WHERE lower(m.Name) LIKE '%merc%' "
                              "ORDER BY m.Id, mo.Id"));
  std::set<int> merc_makes;
  for (const Json& r : merc["Results"])
    merc_makes.insert(r["Make_ID"].get<int>());
  EXPECT_GT(merc_makes.size(), 1u) << "Mercedes-Benz, Mercury, ...";
  const Json by_id = Answer("GetModelsForMakeId/441");
  EXPECT_EQ(by_id["SearchCriteria"], "Make:441");
  ExpectResults(by_id, {"Make_ID", "Make_Name", "Model_ID", "Model_Name"},
                Rows(models + "WHERE m.Id = 441 ORDER BY mo.Id"));
  EXPECT_EQ(Answer("GetModelsForMake/nosuchmake")["Count"], 0);
}

// Models by year: the models named by the patterns of the schemas a WMI of
// the make uses in that year, the model's make one of the WMI's.
TEST(SnapshotReference, ModelsOfAMakeInAYearAndOfAVehicleType) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string models =
      "SELECT DISTINCT mm.MakeId, upper(trim(mk.Name)), mo.Id, mo.Name{cols} "
      "FROM Pattern p JOIN Wmi_VinSchema wv ON wv.VinSchemaId = p.VinSchemaId "
      "JOIN (SELECT Id AS WmiId, MakeId FROM Wmi WHERE MakeId IS NOT NULL "
      "      UNION SELECT WmiId, MakeId FROM Wmi_Make) wm ON wm.WmiId = "
      "wv.WmiId "
      "JOIN Wmi w ON w.Id = wv.WmiId "
      "JOIN Make_Model mm ON mm.ModelId = CAST(p.AttributeId AS INTEGER) "
      " AND mm.MakeId = wm.MakeId "
      "JOIN Make mk ON mk.Id = mm.MakeId JOIN Model mo ON mo.Id = mm.ModelId "
      "LEFT JOIN VehicleType vt ON vt.Id = w.VehicleTypeId "
      "WHERE p.ElementId = 28 AND {where} ORDER BY 1, 3{order}";
  auto sql = [&](const std::string& where, bool type) {
    return absl::StrReplaceAll(models,
                               {{"{cols}", type ? ", vt.Id, vt.Name" : ""},
                                {"{where}", where},
                                {"{order}", type ? ", 5" : ""}});
  };
  const Json honda = Answer("GetModelsForMakeYear/make/honda/modelyear/2015");
  EXPECT_EQ(honda["SearchCriteria"], "Make:honda | ModelYear:2015");
  ExpectResults(
      honda, {"Make_ID", "Make_Name", "Model_ID", "Model_Name"},
      Rows(sql("lower(mk.Name) LIKE '%honda%' AND wv.YearFrom <= 2015 "
               "AND ifnull(wv.YearTo, 9999) >= 2015",
               false)));
  EXPECT_GT(honda["Count"], 10);
  const Json trucks = Answer(
      "GetModelsForMakeIdYear/makeId/460/modelyear/2020/vehicletype/truck");
  EXPECT_EQ(trucks["SearchCriteria"],
            "Make ID:460 | ModelYear:2020 | VehicleType:truck");
  ExpectResults(trucks,
                {"Make_ID", "Make_Name", "Model_ID", "Model_Name",
                 "VehicleTypeId", "VehicleTypeName"},
                Rows(sql("mk.Id = 460 AND wv.YearFrom <= 2020 AND "
                         "ifnull(wv.YearTo, 9999) >= 2020 AND "
                         "lower(vt.Name) LIKE '%truck%'",
                         true)));
  EXPECT_GT(trucks["Count"], 0) << "Ford trucks of 2020";
}

TEST(SnapshotReference, MakesOfAManufacturerNameOrId) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string makes =
      "SELECT m.Id, upper(trim(m.Name)), f.Name FROM Manufacturer_Make mm "
      "JOIN Make m ON m.Id = mm.MakeId JOIN Manufacturer f "
      "ON f.Id = mm.ManufacturerId ";
  ExpectResults(Answer("GetMakeForManufacturer/988"),
                {"Make_ID", "Make_Name", "Mfr_Name"},
                Rows(makes + "WHERE f.Id = 988 ORDER BY mm.Id"));
  const Json honda = Answer("GetMakeForManufacturer/honda");
  EXPECT_EQ(honda["SearchCriteria"], "Manufacturer:honda");
  ExpectResults(
      honda, {"Make_ID", "Make_Name", "Mfr_Name"},
      Rows(makes + "WHERE lower(f.Name) LIKE '%honda%' ORDER BY mm.Id"));
}

// A page of 100 manufacturers by id: the id and name the snapshot holds,
// the rest of vPIC's fields empty (null, no vehicle types).
TEST(SnapshotReference, AllManufacturersByPageWithTheFieldsTheSnapshotHolds) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string page =
      "SELECT NULL, NULL, Id, Name, '[]' FROM Manufacturer ORDER BY Id "
      "LIMIT 100 OFFSET ";
  const std::vector<std::string> fields = {
      "Country", "Mfr_CommonName", "Mfr_ID", "Mfr_Name", "VehicleTypes"};
  auto rows = [&](int offset) {
    auto r = Rows(page + std::to_string(offset));
    for (auto& row : r) row[4] = Json::array();
    return r;
  };
  const Json first = Answer("GetAllManufacturers");
  EXPECT_TRUE(first["SearchCriteria"].is_null());
  ExpectResults(first, fields, rows(0));
  EXPECT_EQ(first["Count"], 100);
  EXPECT_EQ(first["Results"][0]["Mfr_Name"], "TESLA, INC.")
      << "vPIC's own first page starts with id 955 too";
  ExpectResults(Answer("GetAllManufacturers?page=3"), fields, rows(200));
  EXPECT_EQ(Answer("GetAllManufacturers?page=100000")["Count"], 0);
  // The snapshot holds no manufacturer types: not answered, naming it.
  auto typed = SharedSnapshot()->Reference(
      "GetAllManufacturers?ManufacturerType=Completed%20Vehicle");
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.status().message().find("ManufacturerType"),
            absl::string_view::npos)
      << typed.status().message();
}

// A manufacturer's makes in a year: the Manufacturer_Make pairs that a
// WMI of the manufacturer names, the WMI having a schema for the year.
TEST(SnapshotReference, MakesOfAManufacturerInAYearFromItsWmisSchemas) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string makes =
      "SELECT DISTINCT mm.MakeId, upper(trim(mk.Name)), mm.ManufacturerId, "
      "f.Name FROM Manufacturer_Make mm "
      "JOIN Make mk ON mk.Id = mm.MakeId "
      "JOIN Manufacturer f ON f.Id = mm.ManufacturerId "
      "JOIN Wmi w ON w.ManufacturerId = mm.ManufacturerId "
      "JOIN Wmi_VinSchema wv ON wv.WmiId = w.Id "
      "JOIN (SELECT Id AS WmiId, MakeId FROM Wmi WHERE MakeId IS NOT NULL "
      "      UNION SELECT WmiId, MakeId FROM Wmi_Make) wm "
      "  ON wm.WmiId = w.Id AND wm.MakeId = mm.MakeId "
      "WHERE {where} AND wv.YearFrom <= {year} "
      "AND ifnull(wv.YearTo, 9999) >= {year} ORDER BY 3, 1";
  auto sql = [&](const std::string& where, const std::string& year) {
    return absl::StrReplaceAll(makes, {{"{where}", where}, {"{year}", year}});
  };
  const std::vector<std::string> fields = {"MakeId", "MakeName", "MfrId",
                                           "MfrName"};
  // vPIC's own answer for 988 in 2021 (GetMakesForManufacturerAndYear.json)
  // is HONDA and ACURA.
  const Json hdma = Answer("GetMakesForManufacturerAndYear/988?year=2021");
  EXPECT_EQ(hdma["SearchCriteria"], "Manufacturer : 988, Year: 2021");
  ExpectResults(hdma, fields, Rows(sql("f.Id = 988", "2021")));
  ASSERT_EQ(hdma["Count"], 2);
  EXPECT_EQ(hdma["Results"][0]["MakeName"], "HONDA");
  EXPECT_EQ(hdma["Results"][1]["MakeName"], "ACURA");
  const Json honda = Answer("GetMakesForManufacturerAndYear/honda?year=2015");
  ExpectResults(honda, fields,
                Rows(sql("lower(f.Name) LIKE '%honda%'", "2015")));
  EXPECT_GT(honda["Count"], 2);
  EXPECT_EQ(Answer("GetMakesForManufacturerAndYear/988?year=1950")["Count"], 0);
}

TEST(SnapshotReference, AWmiWithWhatTheSnapshotHoldsAndEmptyFieldsForTheRest) {
  SKIP_WITHOUT_SNAPSHOT();
  const Json a = Answer("DecodeWMI/1FT");
  EXPECT_EQ(a["SearchCriteria"], "WMI:1FT");
  const auto rows = Rows(
      "SELECT '', substr(w.CreatedOn, 1, 10), "
      "substr(w.PublicAvailabilityDate, 1, 10), upper(trim(m.Name)), f.Name, "
      "'', '', substr(w.UpdatedOn, 1, 10), t.Name FROM Wmi w "
      "JOIN Make m ON m.Id = w.MakeId JOIN Manufacturer f "
      "ON f.Id = w.ManufacturerId JOIN VehicleType t ON t.Id = w.VehicleTypeId "
      "WHERE w.Wmi = '1FT'");
  ExpectResults(a,
                {"CommonName", "CreatedOn", "DateAvailableToPublic", "Make",
                 "ManufacturerName", "ParentCompanyName", "URL", "UpdatedOn",
                 "VehicleType"},
                rows);
  EXPECT_EQ(a["Results"][0]["Make"], "FORD");
}

// Vehicle types of a make and makes of a vehicle type: the pairs of the
// WMIs' make (its own, or one linked) and vehicle type.
TEST(SnapshotReference, VehicleTypesAndMakesFromTheWmis) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string pairs =
      "SELECT DISTINCT x.MakeId AS make_id, upper(trim(m.Name)) AS make_name, "
      "vt.Id AS type_id, vt.Name AS type_name FROM "
      "(SELECT MakeId, VehicleTypeId FROM Wmi WHERE MakeId IS NOT NULL "
      " UNION SELECT wm.MakeId, w.VehicleTypeId FROM Wmi_Make wm "
      " JOIN Wmi w ON w.Id = wm.WmiId) x JOIN Make m ON m.Id = x.MakeId "
      "JOIN VehicleType vt ON vt.Id = x.VehicleTypeId ";
  const Json kia = Answer("GetVehicleTypesForMake/kia");
  EXPECT_EQ(kia["SearchCriteria"], "Make: kia");
  ExpectResults(kia, {"MakeId", "MakeName", "VehicleTypeId", "VehicleTypeName"},
                Rows(pairs + "WHERE lower(m.Name) LIKE '%kia%' "
                             "ORDER BY x.MakeId, vt.Id"));
  EXPECT_GT(kia["Count"], 0);
  const Json cars = Answer("GetMakesForVehicleType/car");
  EXPECT_EQ(cars["SearchCriteria"], "Vehicle Type: car");
  ExpectResults(cars,
                {"MakeId", "MakeName", "VehicleTypeId", "VehicleTypeName"},
                Rows(pairs + "WHERE lower(vt.Name) LIKE '%car%' "
                             "ORDER BY x.MakeId, vt.Id"));
  EXPECT_GT(cars["Count"], 100);
  const Json honda = Answer("GetVehicleTypesForMakeId/474");
  EXPECT_EQ(honda["SearchCriteria"], "Make ID: 474");
  ExpectResults(honda, {"VehicleTypeId", "VehicleTypeName"},
                Rows("SELECT type_id, type_name FROM (" + pairs +
                     "WHERE x.MakeId = 474) ORDER BY type_id"));
  EXPECT_GE(honda["Count"], 2) << "motorcycles and cars at least";
}

TEST(SnapshotReference, WmisOfAManufacturerOrAVehicleType) {
  SKIP_WITHOUT_SNAPSHOT();
  const std::string wmis =
      "SELECT co.Name, substr(w.CreatedOn, 1, 10), "
      "substr(w.PublicAvailabilityDate, 1, 10), w.ManufacturerId, f.Name, "
      "substr(w.UpdatedOn, 1, 10), ifnull(vt.Name, ''), upper(trim(w.Wmi)) "
      "FROM Wmi w JOIN Manufacturer f ON f.Id = w.ManufacturerId "
      "LEFT JOIN Country co ON co.Id = w.CountryId "
      "LEFT JOIN VehicleType vt ON vt.Id = w.VehicleTypeId ";
  const std::vector<std::string> fields = {
      "Country", "CreatedOn", "DateAvailableToPublic", "Id",
      "Name",    "UpdatedOn", "VehicleType",           "WMI"};
  const Json by_id = Answer("GetWMIsForManufacturer/988");
  EXPECT_EQ(by_id["SearchCriteria"], "Manufacturer: 988");
  ExpectResults(by_id, fields,
                Rows(wmis + "WHERE w.ManufacturerId = 988 ORDER BY w.Id"));
  EXPECT_GT(by_id["Count"], 0);
  const Json cars =
      Answer("GetWMIsForManufacturer/honda?vehicleType=passenger%20car");
  ExpectResults(cars, fields,
                Rows(wmis + "WHERE lower(f.Name) LIKE '%honda%' AND "
                            "lower(vt.Name) LIKE '%passenger car%' "
                            "ORDER BY w.Id"));
}

TEST(SnapshotReference, VariablesAndTheValuesOfALookupVariable) {
  SKIP_WITHOUT_SNAPSHOT();
  ExpectResults(
      Answer("GetVehicleVariableList"),
      {"DataType", "Description", "GroupName", "ID", "Name"},
      Rows("SELECT DataType, Description, GroupName, Id, Name "
           "FROM Element WHERE ifnull(IsPrivate, 0) = 0 ORDER BY Id"));
  const Json types = Answer("GetVehicleVariableValuesList/vehicle%20type");
  EXPECT_EQ(types["SearchCriteria"], "Variable:Vehicle Type");
  ExpectResults(types, {"ElementName", "Id", "Name"},
                Rows("SELECT 'Vehicle Type', Id, Name FROM VehicleType "
                     "ORDER BY Id"));
  // By the variable's id too.
  EXPECT_EQ(Answer("GetVehicleVariableValuesList/39")["Results"],
            types["Results"]);
}

TEST(SnapshotReference, WhatTheSnapshotDoesNotHoldIsNotFoundAndAnswersAreKept) {
  SKIP_WITHOUT_SNAPSHOT();
  for (const char* key : {"GetParts?type=565", "GetManufacturerDetails/honda",
                          "GetEquipmentPlantCodes?year=2015",
                          "GetCanadianVehicleSpecifications?Year=2011"}) {
    auto doc = SharedSnapshot()->Reference(key);
    ASSERT_FALSE(doc.ok()) << key;
    EXPECT_EQ(doc.status().code(), absl::StatusCode::kNotFound);
    EXPECT_NE(doc.status().message().find("GetModelsForMake"),
              absl::string_view::npos)
        << "names what it answers: " << doc.status().message();
  }
  auto a = SharedSnapshot()->Reference("GetModelsForMake/honda");
  auto b = SharedSnapshot()->Reference("GetModelsForMake/honda");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get()) << "built once, then the same document";
}

}  // namespace
}  // namespace snapshot
