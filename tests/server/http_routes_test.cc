// The HTTP gateway's routing and forms (server/http/routes.h), alone: what a
// method and raw target ask for, and vPIC's batch form.
#include "server/http/routes.h"

#include "gtest/gtest.h"

namespace server {
namespace http {
namespace {

TEST(HttpRoutes, VpicsPathsMatchInAnyCaseWithOrWithoutASlash) {
  for (const char* target :
       {"/api/vehicles/DecodeVinValues/1FTMW1T88MFA00001",
        "/api/vehicles/decodevinvalues/1FTMW1T88MFA00001/",
        "/API/VEHICLES/DECODEVINVALUESEXTENDED/1FTMW1T88MFA00001?format=JSON",
        "/api/vehicles/DecodeVinValues/1FTMW1T88MFA00001?format=json&modelyear=2021"}) {
    const Route r = RouteOf("GET", target);
    EXPECT_EQ(r.kind, Route::Kind::kVpicValues) << target << ": " << r.message;
    EXPECT_EQ(r.vin, "1FTMW1T88MFA00001");
  }
  EXPECT_EQ(RouteOf("GET", "/api/vehicles/DecodeVinValues/X?modelyear=2021").model_year,
            2021);
  EXPECT_EQ(RouteOf("GET", "/api/vehicles/DecodeVin/X").kind,
            Route::Kind::kVpicVariables);
  EXPECT_EQ(RouteOf("POST", "/api/vehicles/DecodeVINValuesBatch/").kind,
            Route::Kind::kVpicBatch);
  EXPECT_EQ(RouteOf("POST", "/v1/decode").kind, Route::Kind::kDecode);
  EXPECT_EQ(RouteOf("POST", "/v1/decode:batch").kind, Route::Kind::kDecodeBatch);
}

// Rule 18: a reference request written in any case, order or format is one
// key (one flight, one cache entry); what vPIC ignores is left out of it.
TEST(HttpRoutes, AReferenceRequestIsNormalisedIntoOneKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"/api/vehicles/GetModelsForMake/HONDA?format=xml",
       "GetModelsForMake/honda"},
      {"/api/vehicles/getmodelsformake/honda/?FORMAT=json&x=1",
       "GetModelsForMake/honda"},
      {"/api/vehicles/GetModelsForMakeYear/MAKE/Land%20Rover/VehicleType/"
       "truck/modelyear/2015",
       "GetModelsForMakeYear/make/land%20rover/modelyear/2015/vehicletype/"
       "truck"},
      {"/api/vehicles/GetParts?page=2&type=565&toDate=5/5/2015&extra=1",
       "GetParts?type=565&toDate=5%2F5%2F2015&page=2"},
      {"/api/vehicles/GetEquipmentPlantCodes?reporttype=ALL&year=2015&"
       "EquipmentType=1",
       "GetEquipmentPlantCodes?year=2015&equipmentType=1&reportType=All"},
      {"/api/vehicles/GetCanadianVehicleSpecifications?Year=2011&Make=Acura&"
       "Model=&units=",
       "GetCanadianVehicleSpecifications?Year=2011&Make=acura&Model=&units="},
      {"/api/vehicles/GetParts/?type=565&fromDate=1%252F1%252F2015&page=1",
       "GetParts?type=565&fromDate=1%2F1%2F2015&page=1"},
      {"/api/vehicles/DecodeWMI/1ft", "DecodeWMI/1FT"},
      {"/api/vehicles/GetWMIsForManufacturer?vehicleType=MPV",
       "GetWMIsForManufacturer?vehicleType=mpv"},
      {"/api/vehicles/GetAllMakes/", "GetAllMakes"},
  };
  for (const auto& [target, key] : cases) {
    const Route r = RouteOf("GET", target);
    EXPECT_EQ(r.kind, Route::Kind::kVpicReference)
        << target << ": " << r.message;
    EXPECT_EQ(r.reference, key) << target;
  }
  EXPECT_EQ(RouteOf("HEAD", "/api/vehicles/GetAllMakes").kind,
            Route::Kind::kVpicReference);
}

TEST(HttpRoutes, WhatIsNotServedSaysWhy) {
  struct Case {
    const char* method;
    const char* target;
    int status;
    const char* says;
  };
  for (const Case& c : {
           Case{"GET", "/api/vehicles/../x", 400, "dot segment"},
           Case{"GET", "/api/vehicles/DecodeVinValues%2Fx", 400,
                "encoded slash"},
           Case{"GET", "/api/vehicles/DecodeVinValues/%2e%2e", 400,
                "encoded slash, dot"},
           Case{"GET", "/api/vehicles/DecodeVinValues/a\\b", 400, "backslash"},
           Case{"GET", "/api/vehicles/DecodeVinValues/X?format=html", 400,
                "json, xml or csv"},
           Case{"GET", "/api/vehicles/DecodeVinValues/X?modelyear=soon", 400,
                "not a year"},
           Case{"GET", "/api/vehicles/DecodeVinValues/%G1", 400,
                "percent-escape"},
           Case{"POST", "/api/vehicles/DecodeVinValues/X", 405, "takes GET"},
           Case{"GET", "/api/vehicles/DecodeVINValuesBatch/", 405,
                "takes POST"},
           Case{"GET", "/v1/decode", 405, "takes POST"},
           Case{"GET", "/api/vehicles/GetAllMakes/x", 404,
                "takes no path argument"},
           Case{"GET", "/api/vehicles/DecodeWMI/1FT/2", 404,
                "takes one path argument"},
           Case{"GET", "/api/vehicles/GetAllModels", 404,
                "that this service serves: it answers DecodeVinValues"},
           Case{"POST", "/api/vehicles/GetAllMakes", 405, "takes GET"},
           Case{"GET", "/api/vehicles/GetAllMakes?format=pdf", 400,
                "json, xml or csv"},
           Case{"GET", "/api/vehicles/DecodeVinValues/", 404, "no such path"},
           Case{"GET", "*", 400, "must be a path"},
       }) {
    const Route r = RouteOf(c.method, c.target);
    EXPECT_EQ(r.kind, Route::Kind::kError) << c.target;
    EXPECT_EQ(r.status, c.status) << c.target;
    EXPECT_NE(r.message.find(c.says), std::string::npos)
        << c.target << ": " << r.message;
  }
}

// A 405 says which methods the path takes (its Allow header); every GET
// path takes HEAD too.
TEST(HttpRoutes, AWrongMethodIsToldTheAllowedOnes) {
  EXPECT_EQ(RouteOf("POST", "/api/vehicles/DecodeVinValues/X").allow,
            "GET, HEAD");
  EXPECT_EQ(RouteOf("DELETE", "/").allow, "GET, HEAD");
  EXPECT_EQ(RouteOf("GET", "/v1/decode").allow, "POST");
  EXPECT_EQ(RouteOf("PUT", "/api/vehicles/DecodeVINValuesBatch/").allow,
            "POST");
  EXPECT_EQ(MetricsRouteOf("POST", "/metrics").allow, "GET, HEAD");
  for (const char* path : {"/", "/openapi.json", "/api/vehicles/DecodeVin/X",
                           "/api/vehicles/DecodeVinValuesExtended/X"}) {
    EXPECT_EQ(RouteOf("HEAD", path).status, 200) << path;
    EXPECT_EQ(RouteOf("HEAD", path).kind, RouteOf("GET", path).kind) << path;
  }
}

TEST(HttpRoutes, TheBatchFormAsVpicTakesIt) {
  auto form =
      ParseBatchForm("format=json&DATA=AAA%2C2011%3BBBB;+CCC+,2020", 50);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_TRUE(form->has_format);
  EXPECT_EQ(form->format, VpicFormat::kJson);
  const std::vector<BatchEntry>& e = form->entries;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].vin, "AAA");
  EXPECT_EQ(e[0].model_year, 2011);
  EXPECT_EQ(e[1].vin, "BBB");
  EXPECT_EQ(e[1].model_year, 0);
  EXPECT_EQ(e[2].vin, "CCC");
  EXPECT_EQ(e[2].model_year, 2020);
  EXPECT_FALSE(ParseBatchForm("data=AAA", 50)->has_format);
  EXPECT_EQ(ParseBatchForm("Format=CSV&data=AAA", 50)->format,
            VpicFormat::kCsv);
  EXPECT_NE(
      ParseBatchForm("format=json", 50).status().message().find("no data"),
      absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("data=;;", 50).status().message().find("no VIN"),
            absl::string_view::npos);
  EXPECT_NE(
      ParseBatchForm("data=A;B;C", 2).status().message().find("more than 2"),
      absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("data=A,x", 50).status().message().find("item 1"),
            absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("format=yaml&data=A", 50)
                .status()
                .message()
                .find("json, xml or csv"),
            absl::string_view::npos);
  EXPECT_FALSE(ParseBatchForm("data=%Z1", 50).ok());
}

TEST(HttpRoutes, VpicsFormatsWithXmlWhenNoneIsGiven) {
  const std::string vin = "/api/vehicles/DecodeVinValues/1FTMW1T88MFA00001";
  EXPECT_EQ(RouteOf("GET", vin).format, VpicFormat::kXml);
  EXPECT_EQ(RouteOf("GET", vin + "?format=json").format, VpicFormat::kJson);
  EXPECT_EQ(RouteOf("GET", vin + "?FORMAT=Xml").format, VpicFormat::kXml);
  EXPECT_EQ(RouteOf("GET", vin + "?modelyear=2021&format=csv").format,
            VpicFormat::kCsv);
  const Route bad = RouteOf("GET", vin + "?format=yaml");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.message.find("json, xml or csv"), std::string::npos)
      << bad.message;
  EXPECT_EQ(RouteOf("GET", "/api/vehicles/DecodeVinExtended/X").kind,
            Route::Kind::kVpicVariables);
  // A partial VIN is the engine's to check (rule 18).
  EXPECT_EQ(RouteOf("GET", "/api/vehicles/DecodeVinValues/5UXWX7C5*BA").vin,
            "5UXWX7C5*BA");
}

}  // namespace
}  // namespace http
}  // namespace server
