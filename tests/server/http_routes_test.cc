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

TEST(HttpRoutes, WhatIsNotServedSaysWhy) {
  struct Case {
    const char* method;
    const char* target;
    int status;
    const char* says;
  };
  for (const Case& c : {
           Case{"GET", "/api/vehicles/../x", 400, "dot segment"},
           Case{"GET", "/api/vehicles/DecodeVinValues%2Fx", 400, "encoded slash"},
           Case{"GET", "/api/vehicles/DecodeVinValues/%2e%2e", 400, "encoded slash, dot"},
           Case{"GET", "/api/vehicles/DecodeVinValues/a\\b", 400, "backslash"},
           Case{"GET", "/api/vehicles/DecodeVinValues/5UXWX7C5*BA", 400, "partial VIN"},
           Case{"GET", "/api/vehicles/DecodeVinValues/X?format=xml", 400, "format=json only"},
           Case{"GET", "/api/vehicles/DecodeVinValues/X?modelyear=soon", 400, "not a year"},
           Case{"GET", "/api/vehicles/DecodeVinValues/%G1", 400, "percent-escape"},
           Case{"POST", "/api/vehicles/DecodeVinValues/X", 405, "takes GET"},
           Case{"GET", "/api/vehicles/DecodeVINValuesBatch/", 405, "takes POST"},
           Case{"GET", "/v1/decode", 405, "takes POST"},
           Case{"GET", "/api/vehicles/GetAllMakes", 404, "no such path"},
           Case{"GET", "/api/vehicles/DecodeWMI/1FT", 404, "is not served"},
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
  auto e = ParseBatchForm("format=json&DATA=AAA%2C2011%3BBBB;+CCC+,2020", "", 50);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->size(), 3u);
  EXPECT_EQ((*e)[0].vin, "AAA");
  EXPECT_EQ((*e)[0].model_year, 2011);
  EXPECT_EQ((*e)[1].vin, "BBB");
  EXPECT_EQ((*e)[1].model_year, 0);
  EXPECT_EQ((*e)[2].vin, "CCC");
  EXPECT_EQ((*e)[2].model_year, 2020);
  EXPECT_NE(ParseBatchForm("format=json", "", 50).status().message().find("no data"),
            absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("data=;;", "", 50).status().message().find("no VIN"),
            absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("data=A;B;C", "", 2).status().message().find("more than 2"),
            absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("data=A,x", "", 50).status().message().find("item 1"),
            absl::string_view::npos);
  EXPECT_NE(ParseBatchForm("format=csv&data=A", "", 50).status().message().find("csv"),
            absl::string_view::npos);
  EXPECT_FALSE(ParseBatchForm("data=%Z1", "", 50).ok());
}

}  // namespace
}  // namespace http
}  // namespace server
