// Rule 18 on the gateway, against the real server and the fake vPIC over
// HTTP: every reference endpoint (GetAllMakes, GetModelsForMake, ...) in
// JSON (vPIC's bytes, relayed), XML and CSV (the same content, read back
// here with readers of their own); one upstream request among concurrent
// callers whatever format each asked; the cache; and bad input refused
// before anything is sent.
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "http_fixture.h"
#include "snapshot/test_snapshot.h"
#include "testing/eventually.h"
#include "vpic_reference_readers.h"

namespace server {
namespace testing_http {
namespace {

using testing_util::HttpResponse;

struct Endpoint {
  const char* path;     // below /api/vehicles/
  const char* fixture;  // under tests/fixtures/vpic/json/ ("" : decode-wmi)
  const char* element;  // the XML element of a result
};

const Endpoint kEndpoints[] = {
    {"DecodeWMI/1FT", "", "DecodedWMI"},
    {"GetWMIsForManufacturer/honda", "GetWMIsForManufacturer",
     "WMIsForManufacturer"},
    {"GetAllMakes", "GetAllMakes", "AllVehicleMakes"},
    {"GetParts?type=565&fromDate=1/1/2015&toDate=5/5/2015", "GetParts",
     "Parts"},
    {"GetAllManufacturers?page=2", "GetAllManufacturers", "Manufacturers"},
    {"GetManufacturerDetails/honda", "GetManufacturerDetails",
     "ManufacturerDetails"},
    {"GetMakeForManufacturer/honda", "GetMakeForManufacturer", "MakesForMfg"},
    {"GetMakesForManufacturerAndYear/mer?year=2013",
     "GetMakesForManufacturerAndYear", "MakesForMfrYear"},
    {"GetMakesForVehicleType/car", "GetMakesForVehicleType",
     "MakesForVehicleType"},
    {"GetVehicleTypesForMake/merc", "GetVehicleTypesForMake",
     "VehicleTypesForMake"},
    {"GetVehicleTypesForMakeId/450", "GetVehicleTypesForMakeId",
     "VehicleTypesForMakeIds"},
    {"GetEquipmentPlantCodes?year=2015&equipmentType=1&reportType=all",
     "GetEquipmentPlantCodes", "EquipmentPlant"},
    {"GetModelsForMake/honda", "GetModelsForMake", "ModelsForMake"},
    {"GetModelsForMakeId/440", "GetModelsForMakeId", "ModelsForMake"},
    {"GetModelsForMakeYear/make/honda/modelyear/2015", "GetModelsForMakeYear",
     "MakeModels"},
    {"GetModelsForMakeIdYear/makeId/474/modelyear/2015",
     "GetModelsForMakeIdYear", "MakeModels"},
    {"GetVehicleVariableList", "GetVehicleVariableList", "VehicleVariable"},
    {"GetVehicleVariableValuesList/battery%20type",
     "GetVehicleVariableValuesList", "VehicleVariableValue"},
    {"GetCanadianVehicleSpecifications?Year=2011&Make=Acura&Model=&units=",
     "GetCanadianVehicleSpecifications", "CanadianVehicleSpecification"},
};

Json Captured(const Endpoint& e) {
  if (e.fixture[0] == '\0') return Fixture("decode-wmi.json");
  std::ifstream in(absl::StrCat(VIN_FIXTURE_DIR, "/json/", e.fixture, ".json"));
  return Json::parse(in);
}

std::string With(const std::string& path, const char* format) {
  return absl::StrCat("/api/vehicles/", path,
                      absl::StrContains(path, '?') ? "&" : "?",
                      "format=", format);
}

// The fake's requests for `endpoint` (lower case).
int Asked(const fakevpic::FakeVpic& fake, const std::string& endpoint) {
  int n = 0;
  for (const auto& r : fake.Requests()) n += r.endpoint == endpoint;
  return n;
}

TEST_F(HttpGatewayTest, EveryReferenceEndpointInJsonXmlAndCsvWithVpicsContent) {
  StartHttp();
  for (const Endpoint& e : kEndpoints) {
    SCOPED_TRACE(e.path);
    const Json want = Captured(e);
    const HttpResponse json = Get(With(e.path, "json"));
    ASSERT_EQ(json.status, 200) << json.body;
    EXPECT_EQ(Body(json), want) << "vPIC's JSON, relayed";
    EXPECT_EQ(json.Header("X-Vin-Source"), "vpic");
    EXPECT_EQ(json.Header("Content-Type"), "application/json; charset=utf-8");

    const HttpResponse xml = Get(With(e.path, "xml"));
    ASSERT_EQ(xml.status, 200) << xml.body;
    EXPECT_EQ(xml.Header("X-Vin-Source"), "cache") << "one request for all";
    EXPECT_EQ(xml.Header("Content-Type"), "application/xml; charset=utf-8");
    ExpectXmlHolds(want, xml.body, e.element);
    // vPIC's default is XML.
    const HttpResponse plain = Get(absl::StrCat("/api/vehicles/", e.path));
    EXPECT_EQ(plain.body, xml.body);

    const HttpResponse csv = Get(With(e.path, "csv"));
    ASSERT_EQ(csv.status, 200) << csv.body;
    EXPECT_EQ(csv.Header("Content-Type"), "text/csv; charset=utf-8");
    ExpectCsvHolds(want, csv.body);
  }
  EXPECT_EQ(fake_->TotalRequests(), static_cast<int>(std::size(kEndpoints)));
}

// Where SHAPES.md has vPIC's XML order, it is kept (not JSON's sorted one).
TEST_F(HttpGatewayTest, ReferenceXmlKeepsVpicsFieldOrderAndLeavesNullsOut) {
  StartHttp();
  const HttpResponse makes = Get("/api/vehicles/GetMakeForManufacturer/honda");
  ASSERT_EQ(makes.status, 200) << makes.body;
  EXPECT_TRUE(absl::StrContains(
      makes.body,
      "<MakesForMfg><Mfr_Name>HONDA DEVELOPMENT &amp; MANUFACTURING OF "
      "AMERICA, LLC</Mfr_Name><Make_ID>474</Make_ID><Make_Name>HONDA"))
      << makes.body.substr(0, 600);
  const HttpResponse all = Get("/api/vehicles/GetAllMakes/");
  ASSERT_EQ(all.status, 200);
  EXPECT_FALSE(absl::StrContains(all.body, "SearchCriteria"))
      << "null: left out";
  const HttpResponse mfrs = Get("/api/vehicles/GetAllManufacturers");
  ASSERT_EQ(mfrs.status, 200);
  EXPECT_TRUE(absl::StrContains(
      mfrs.body,
      "<VehicleTypes><VehicleType><Name>Passenger Car</Name><IsPrimary>"))
      << mfrs.body.substr(0, 800);
  EXPECT_TRUE(absl::StrContains(mfrs.body, "<VehicleTypes />"));
}

TEST_F(HttpGatewayTest, FiftyCallersOfOneReferenceInAnyFormatMakeOneRequest) {
  StartHttp();
  fake_->HoldAnswers();
  const char* formats[] = {"json", "xml", "csv"};
  std::vector<HttpResponse> got(50);
  std::vector<std::thread> callers;
  for (int i = 0; i < 50; ++i) {
    callers.emplace_back([&, i] {
      got[i] = Get(With("GetModelsForMake/HONDA", formats[i % 3]));
    });
  }
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(20)));
  testing_util::Eventually(
      [&] { return server_->engine().Stats().waiters == 50; });
  fake_->ReleaseAnswers();
  for (auto& t : callers) t.join();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(got[i].status, 200) << got[i].body;
  }
  EXPECT_EQ(Asked(*fake_, "getmodelsformake"), 1);
  EXPECT_EQ(Body(got[0]), Captured(kEndpoints[12]));
  // The same request written otherwise is the cache's answer.
  const HttpResponse again =
      Get("/api/vehicles/getmodelsformake/honda/?FORMAT=JSON");
  EXPECT_EQ(again.Header("X-Vin-Source"), "cache");
  EXPECT_EQ(again.body, got[0].body);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(HttpGatewayTest, BadReferenceArgumentsAre400NamingThemAndNothingIsSent) {
  StartHttp();
  const std::string make(10 * 1024, 'a');
  const std::pair<std::string, std::string> cases[] = {
      {"GetAllManufacturers?page=-1", "\"page\""},
      {"GetParts?page=1000000000000", "\"page\""},
      {"GetMakesForManufacturerAndYear/honda?year=0", "\"year\""},
      {"GetMakesForManufacturerAndYear/honda?year=99999", "\"year\""},
      {"GetMakesForManufacturerAndYear/honda", "\"year\""},
      {absl::StrCat("GetModelsForMake/", make), "\"make\""},
      {"GetModelsForMakeYear/make/honda/modelyear/0", "\"modelyear\""},
      {"GetModelsForMakeYear/make/honda", "modelyear"},
      {"GetVehicleTypesForMakeId/abc", "\"make id\""},
      {"DecodeWMI/1F", "\"WMI\""},
      {"GetParts?type=999", "\"type\""},
      {"GetEquipmentPlantCodes?year=2015&equipmentType=1", "\"reportType\""},
      {"GetCanadianVehicleSpecifications?Year=2011&Make=Acura", "\"Model\""},
      {"GetWMIsForManufacturer", "vehicleType"},
  };
  for (const auto& [path, names] : cases) {
    const HttpResponse r = Get(absl::StrCat("/api/vehicles/", path));
    EXPECT_EQ(r.status, 400) << path << ": " << r.body;
    const std::string message = Body(r)["error"]["message"].get<std::string>();
    EXPECT_TRUE(absl::StrContains(message, names)) << path << ": " << message;
    EXPECT_LT(r.body.size(), 600u) << "the make is not echoed whole";
  }
  const HttpResponse unknown = Get("/api/vehicles/GetModelsForFoo/x");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_TRUE(absl::StrContains(unknown.body, "GetModelsForMakeYear"))
      << "names what is served: " << unknown.body;
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(HttpGatewayTest, AReferenceFailingLiveIs503AndAStaleAnswerStandsIn) {
  ServerOptions o = Defaults();
  o.engine.reference_ttl = absl::Nanoseconds(1);  // stale at once
  o.engine.max_attempts = 1;
  o.engine.breaker.failures = 0;
  StartHttp(o);
  Script("getallmakes", "503");
  const HttpResponse failed = Get("/api/vehicles/GetAllMakes?format=json");
  EXPECT_EQ(failed.status, 503) << failed.body;
  EXPECT_FALSE(failed.Header("Retry-After").empty());
  EXPECT_TRUE(absl::StrContains(failed.body, "UPSTREAM_UNAVAILABLE"))
      << failed.body;

  const HttpResponse fresh =
      Get("/api/vehicles/GetModelsForMake/honda?format=json");
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  Script("getmodelsformake", "503");
  const HttpResponse stale =
      Get("/api/vehicles/GetModelsForMake/honda?format=xml");
  ASSERT_EQ(stale.status, 200) << stale.body;
  EXPECT_EQ(stale.Header("X-Vin-Source"), "cache");
  EXPECT_EQ(stale.Header("X-Vin-Stale"), "true");
  EXPECT_EQ(stale.Header("Cache-Control"), "no-cache");
  ExpectXmlHolds(Body(fresh), stale.body, "ModelsForMake");
  EXPECT_EQ(Asked(*fake_, "getmodelsformake"), 2) << "live first";
}

// The rate cap (rule 9) counts reference requests: with one token a
// minute, a second endpoint's caller whose deadline comes before its turn
// is told at once, and nothing more is sent.
TEST_F(HttpGatewayTest, ReferenceRequestsAreCountedByTheRateCap) {
  ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 1;
  o.engine.budget.burst = 1;
  StartHttp(o);
  ASSERT_EQ(Get("/api/vehicles/GetAllMakes?format=json").status, 200);
  const HttpResponse late =
      Get("/api/vehicles/GetModelsForMake/honda", {"X-Request-Timeout: 2"});
  EXPECT_EQ(late.status, 503) << late.body;
  EXPECT_TRUE(absl::StrContains(late.body, "--upstream_rate")) << late.body;
  EXPECT_FALSE(late.Header("Retry-After").empty());
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

// The breaker (rule 13) hears reference answers and refuses them: after
// two broken answers it is open, and the next request is 503 BREAKER_OPEN
// without a request.
TEST_F(HttpGatewayTest, ReferenceRequestsOpenAndAreRefusedByTheBreaker) {
  ServerOptions o = Defaults();
  o.engine.max_attempts = 1;
  o.engine.breaker.failures = 2;
  o.engine.breaker.cooldown = absl::Minutes(5);
  o.engine.breaker.cooldown_max = absl::Minutes(10);
  StartHttp(o);
  Script("getallmakes", "503,503");
  EXPECT_EQ(Get("/api/vehicles/GetAllMakes").status, 503);
  EXPECT_EQ(Get("/api/vehicles/GetAllMakes").status, 503);
  ASSERT_EQ(fake_->TotalRequests(), 2);
  const HttpResponse refused = Get("/api/vehicles/GetModelsForMake/honda");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_TRUE(absl::StrContains(refused.body, "BREAKER_OPEN")) << refused.body;
  EXPECT_FALSE(refused.Header("Retry-After").empty());
  EXPECT_EQ(fake_->TotalRequests(), 2) << "nothing sent while it is open";
}

// Offline (vPIC failing, a snapshot loaded): the endpoints whose data the
// snapshot holds answer from it, labelled, in every format; the others are
// 503 naming why. (Their content against the file: reference_data_test.cc.)
TEST_F(HttpGatewayTest, OfflineTheSnapshotAnswersWhatItHoldsAndNamesTheRest) {
  SKIP_WITHOUT_SNAPSHOT();
  StartHttp(SnapshotFallback());
  ASSERT_NE(server_->snapshot(), nullptr) << server_->snapshot_status();
  Script("getmodelsformake", "503");
  const HttpResponse json =
      Get("/api/vehicles/GetModelsForMake/tesla?format=json");
  ASSERT_EQ(json.status, 200) << json.body;
  EXPECT_EQ(json.Header("X-Vin-Source"), "snapshot");
  EXPECT_EQ(json.Header("Cache-Control"), "no-cache");
  const Json models = Body(json);
  EXPECT_EQ(models["SearchCriteria"], "Make:tesla");
  EXPECT_EQ(models["Results"][0]["Model_Name"], "Model S");
  EXPECT_EQ(Asked(*fake_, "getmodelsformake"), 1) << "live first";
  // SNAPSHOT_ONLY never asks vPIC; the XML is the same content.
  const HttpResponse xml = Get("/api/vehicles/GetModelsForMake/tesla",
                               {"X-Vin-Source-Preference: snapshot_only"});
  ASSERT_EQ(xml.status, 200) << xml.body;
  ExpectXmlHolds(models, xml.body, "ModelsForMake");
  EXPECT_EQ(Asked(*fake_, "getmodelsformake"), 1);
  // The picker's call, written as a client writes it.
  const HttpResponse picker =
      Get("/api/vehicles/GetModelsForMakeYear/make/HONDA/modelyear/2015/"
          "?format=json",
          {"X-Vin-Source-Preference: snapshot_only"});
  ASSERT_EQ(picker.status, 200) << picker.body;
  EXPECT_EQ(Body(picker)["SearchCriteria"], "Make:honda | ModelYear:2015");
  EXPECT_GT(Body(picker)["Count"], 10);
  const HttpResponse parts = Get("/api/vehicles/GetParts?type=565",
                                 {"X-Vin-Source-Preference: snapshot_only"});
  EXPECT_EQ(parts.status, 503) << parts.body;
  EXPECT_FALSE(parts.Header("Retry-After").empty());
  EXPECT_TRUE(
      absl::StrContains(parts.body, "does not hold the data of GetParts"))
      << parts.body;
  EXPECT_TRUE(absl::StrContains(parts.body, "GetModelsForMake")) << parts.body;
  EXPECT_EQ(Asked(*fake_, "getparts"), 0);
}

TEST_F(HttpGatewayTest, TheSourcePreferenceHeaderIsReadOnVpicPaths) {
  StartHttp();
  const HttpResponse bad = Get("/api/vehicles/GetAllMakes",
                               {"X-Vin-Source-Preference: offline_please"});
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(absl::StrContains(bad.body, "X-Vin-Source-Preference"))
      << bad.body;
  // SNAPSHOT_ONLY never asks vPIC (and no snapshot is loaded here).
  const HttpResponse offline = Get("/api/vehicles/GetAllMakes",
                                   {"X-Vin-Source-Preference: SNAPSHOT_ONLY"});
  EXPECT_EQ(offline.status, 503) << offline.body;
  EXPECT_FALSE(offline.Header("Retry-After").empty());
  const HttpResponse decode =
      Get(absl::StrCat("/api/vehicles/DecodeVinValues/", kFord),
          {"X-Vin-Source-Preference: snapshot_only"});
  EXPECT_EQ(decode.status, 503) << decode.body;
  EXPECT_EQ(fake_->TotalRequests(), 0);
  const HttpResponse live = Get("/api/vehicles/GetAllMakes?format=json",
                                {"X-Vin-Source-Preference: live_only"});
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

}  // namespace
}  // namespace testing_http
}  // namespace server
