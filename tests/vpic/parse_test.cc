#include "vpic/parse.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "gtest/gtest.h"

namespace vpic {
namespace {

using Json = nlohmann::json;

// The vPIC body of a captured fixture, re-serialised as vPIC sent it.
std::string FixtureBody(const std::string& name) {
  const std::string path = std::string(VIN_FIXTURE_DIR) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const Json fixture = Json::parse(buffer.str(), nullptr, false);
  EXPECT_FALSE(fixture.is_discarded()) << path << " is not JSON";
  if (fixture.is_discarded() || !fixture.contains("body")) return "";
  return fixture["body"].dump();
}

// A DecodeVinValues body with one result holding `result`.
std::string Body(const Json& result) {
  Json body = {{"Count", result.size()},
               {"Message", "Results returned successfully."},
               {"SearchCriteria", "VIN(s): 1HGCM82643A004352"},
               {"Results", Json::array({result})}};
  return body.dump();
}

TEST(ParseDecodeVinValues, CleanDecodeFixture) {
  absl::StatusOr<Decoded> got =
      ParseDecodeVinValues(FixtureBody("decode-vin.json"));
  ASSERT_TRUE(got.ok()) << got.status();
  const Vehicle& v = got->vehicle;
  EXPECT_EQ(v.make, "FORD");
  EXPECT_EQ(v.model, "F-150");
  EXPECT_EQ(v.model_year, 2021);
  EXPECT_EQ(v.trim, "SuperCrew-SSV");
  EXPECT_EQ(v.series, "F-Series");
  EXPECT_EQ(v.manufacturer, "FORD MOTOR COMPANY, USA");
  EXPECT_EQ(v.vehicle_type, "TRUCK");  // vPIC sends "TRUCK "
  EXPECT_EQ(v.body_class, "Pickup");
  EXPECT_EQ(v.drive_type, "4WD/4-Wheel Drive/4x4");
  EXPECT_EQ(v.fuel_type_primary, "Gasoline");
  EXPECT_EQ(v.engine_model, "GTDI");
  EXPECT_EQ(v.engine_cylinders, 6);
  EXPECT_DOUBLE_EQ(v.displacement_l, 3.5);
  EXPECT_EQ(v.plant_country, "UNITED STATES (USA)");

  EXPECT_EQ(v.attributes.at("DisplacementL"), "3.5");
  EXPECT_EQ(v.attributes.at("PlantCity"), "DEARBORN");
  EXPECT_EQ(v.attributes.at("VehicleType"), "TRUCK");
  EXPECT_EQ(v.attributes.at("VIN"), "1FTMW1T88MFA00001");
  EXPECT_EQ(v.attributes.count("ErrorCode"), 0u);
  EXPECT_EQ(v.attributes.count("ErrorText"), 0u);
  EXPECT_EQ(v.attributes.count("ABS"), 0u);  // "" in the answer
  for (const auto& [name, value] : v.attributes) {
    EXPECT_FALSE(value.empty()) << name;
    EXPECT_EQ(value, std::string(absl::StripAsciiWhitespace(value))) << name;
  }

  const std::vector<Note> want = {
      {"0", "VIN decoded clean. Check Digit (9th position) is correct"}};
  EXPECT_EQ(got->notes, want);
}

TEST(ParseDecodeVinValues, ModelYearHintFixture) {
  absl::StatusOr<Decoded> got =
      ParseDecodeVinValues(FixtureBody("decode-vin-with-modelyear.json"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->vehicle.make, "FORD");
  EXPECT_EQ(got->vehicle.model_year, 2021);
}

TEST(ParseDecodeVinValues, PartialVinFixture) {
  absl::StatusOr<Decoded> got =
      ParseDecodeVinValues(FixtureBody("decode-partial-vin.json"));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->notes.size(), 1u);
  EXPECT_EQ(got->notes[0].code, "6");
  EXPECT_EQ(got->notes[0].message, "Incomplete VIN");
}

TEST(ParseDecodeVinValues, BatchFixtureTakesFirstResult) {
  absl::StatusOr<Decoded> got =
      ParseDecodeVinValues(FixtureBody("decode-vin-batch.json"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->vehicle.attributes.at("VIN"), "5UXWX7C5*BA");
}

TEST(ParseDecodeVinValues, Notes) {
  struct Case {
    std::string name;
    std::string error_code;
    std::string error_text;
    std::vector<Note> want;
  };
  const std::vector<Case> cases = {
      {"comma list",
       "1,8",
       "1 - Check Digit (9th position) does not calculate properly; 8 - No "
       "detailed data available currently",
       {{"1", "Check Digit (9th position) does not calculate properly"},
        {"8", "No detailed data available currently"}}},
      {"four codes, spaces around them",
       " 6, 7 ,11,400 ",
       "6 - Incomplete VIN; 7 - Manufacturer is not registered with NHTSA; "
       "11 - Incorrect Model Year, decoded data may not be accurate; 400 - "
       "Invalid Characters Present",
       {{"6", "Incomplete VIN"},
        {"7", "Manufacturer is not registered with NHTSA"},
        {"11", "Incorrect Model Year, decoded data may not be accurate"},
        {"400", "Invalid Characters Present"}}},
      {"code without text",
       "1,14",
       "1 - Check digit wrong",
       {{"1", "Check digit wrong"}, {"14", ""}}},
      {"text order differs from code order",
       "8,1",
       "1 - one; 8 - eight",
       {{"8", "eight"}, {"1", "one"}}},
      {"a ';' inside a message",
       "5",
       "5 - has; a semicolon",
       {{"5", "has; a semicolon"}}},
      {"no text at all", "0", "", {{"0", ""}}},
      {"empty code yields no notes", "", "0 - text without a code", {}},
      {"blank code yields no notes", "  ", "", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Decoded> got =
        ParseDecodeVinValues(Body({{"ErrorCode", c.error_code},
                                   {"ErrorText", c.error_text},
                                   {"Make", ""}}));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->notes, c.want);
  }
}

TEST(ParseDecodeVinValues, SparseResultIsAFinishedDecode) {
  const Json result = {
      {"Make", ""},
      {"Model", ""},
      {"ModelYear", ""},
      {"EngineCylinders", ""},
      {"DisplacementL", ""},
      {"VehicleType", "  "},
      {"Trim", nullptr},
      {"VIN", "1HGCM82643A004352"},
      {"ErrorCode", "8"},
      {"ErrorText", "8 - No detailed data available currently"}};
  absl::StatusOr<Decoded> got = ParseDecodeVinValues(Body(result));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->vehicle.make, "");
  EXPECT_EQ(got->vehicle.model, "");
  EXPECT_EQ(got->vehicle.model_year, 0);
  EXPECT_EQ(got->vehicle.vehicle_type, "");
  EXPECT_EQ(got->vehicle.trim, "");
  const std::map<std::string, std::string> want_attributes = {
      {"VIN", "1HGCM82643A004352"}};
  EXPECT_EQ(got->vehicle.attributes, want_attributes);
  const std::vector<Note> want_notes = {
      {"8", "No detailed data available currently"}};
  EXPECT_EQ(got->notes, want_notes);
}

TEST(ParseDecodeVinValues, ScalarValues) {
  const Json result = {{"ModelYear", 2021},
                       {"EngineCylinders", "six"},
                       {"DisplacementL", 2.5},
                       {"Turbo", true},
                       {"ErrorCode", 0}};
  absl::StatusOr<Decoded> got = ParseDecodeVinValues(Body(result));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->vehicle.model_year, 2021);
  EXPECT_EQ(got->vehicle.engine_cylinders, 0);  // does not parse
  EXPECT_DOUBLE_EQ(got->vehicle.displacement_l, 2.5);
  EXPECT_EQ(got->vehicle.attributes.at("ModelYear"), "2021");
  EXPECT_EQ(got->vehicle.attributes.at("EngineCylinders"), "six");
  EXPECT_EQ(got->vehicle.attributes.at("DisplacementL"), "2.5");
  EXPECT_EQ(got->vehicle.attributes.at("Turbo"), "true");
  const std::vector<Note> want_notes = {{"0", ""}};
  EXPECT_EQ(got->notes, want_notes);
}

TEST(ParseDecodeVinValues, NumericFieldsThatDoNotParseStayZero) {
  struct Case {
    std::string model_year, cylinders, displacement;
  };
  const std::vector<Case> cases = {
      {"20x1", "6.5", "abc"},
      {"-2021", "-6", "-3.5"},
      {"99999999999999999999", "", "nan"},
      {"", "", "inf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model_year + " " + c.cylinders + " " + c.displacement);
    absl::StatusOr<Decoded> got =
        ParseDecodeVinValues(Body({{"ModelYear", c.model_year},
                                   {"EngineCylinders", c.cylinders},
                                   {"DisplacementL", c.displacement}}));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->vehicle.model_year, 0);
    EXPECT_EQ(got->vehicle.engine_cylinders, 0);
    EXPECT_EQ(got->vehicle.displacement_l, 0);
  }
}

TEST(ParseDecodeVinValues, NotVpicJsonIsInvalidArgument) {
  const std::string clean = FixtureBody("decode-vin.json");
  ASSERT_FALSE(clean.empty());
  struct Case {
    std::string name;
    std::string body;
    std::string want_in_message;
  };
  const std::vector<Case> cases = {
      {"empty body", "", "the body is empty"},
      {"blank body", " \r\n", "the body is empty"},
      {"html maintenance page",
       "<!DOCTYPE html>\n<html><head><title>Site Maintenance</title></head>"
       "<body>vPIC is down for maintenance</body></html>",
       "not valid JSON (it starts with \"<!DOCTYPE html>?<html><head>"},
      {"truncated json", clean.substr(0, clean.size() / 2), "not valid JSON"},
      {"truncated after the last brace", clean.substr(0, clean.size() - 1),
       "not valid JSON"},
      {"invalid utf-8", "{\"Results\":[{\"Make\":\"\xFF\"}]}",
       "not valid JSON"},
      {"top-level array", "[" + clean + "]", "top level is a JSON array"},
      {"top-level string", "\"Results\"", "top level is a JSON string"},
      {"top-level null", "null", "top level is a JSON null"},
      {"missing Results", R"({"Count":0,"Message":"x"})", "no \"Results\""},
      {"Results not an array", R"({"Results":{"Make":"FORD"}})",
       "\"Results\" is a JSON object, not an array"},
      {"Results null", R"({"Results":null})",
       "\"Results\" is a JSON null, not an array"},
      {"empty Results", R"({"Count":0,"Results":[]})", "\"Results\" is empty"},
      {"first result not an object", R"({"Results":["FORD"]})",
       "first result is a JSON string"},
      {"nested value", R"({"Results":[{"Make":{"Name":"FORD"}}]})",
       "variable \"Make\" is a JSON object"},
      {"array value", R"({"Results":[{"ErrorCode":["1","8"]}]})",
       "variable \"ErrorCode\" is a JSON array"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Decoded> got = ParseDecodeVinValues(c.body);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(got.status().message());
    EXPECT_EQ(message.rfind("vPIC answer is not DecodeVinValues JSON: ", 0), 0u)
        << message;
    EXPECT_NE(message.find(c.want_in_message), std::string::npos) << message;
  }
}

// Every prefix of a real answer is either parsed or rejected, never thrown
// out of the parser (the non-empty prefixes short of the whole are all
// rejected, since the body is one JSON object).
TEST(ParseDecodeVinValues, EveryTruncationIsRejected) {
  const std::string clean = FixtureBody("decode-partial-vin.json");
  ASSERT_FALSE(clean.empty());
  for (size_t n = 0; n < clean.size(); n += 7) {
    absl::StatusOr<Decoded> got =
        ParseDecodeVinValues(absl::string_view(clean.data(), n));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << n;
  }
  EXPECT_TRUE(ParseDecodeVinValues(clean).ok());
}

TEST(ParseDecodeVinValues, DeepNestingIsRejectedWithoutCrashing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(ParseDecodeVinValues(deep).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string deep_value = R"({"Results":[{"Make":)" +
                                 std::string(100000, '[') +
                                 std::string(100000, ']') + "}]}";
  EXPECT_EQ(ParseDecodeVinValues(deep_value).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vpic
