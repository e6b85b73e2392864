// Partial VINs (DESIGN rule 18): vPIC's paths decode them as vPIC does
// (decode-partial-vin.json, relayed live with the same content); gRPC and
// /v1/decode with allow_partial; characters outside the VIN alphabet, or
// an unknown WMI, refused before anything reaches vPIC.
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/http_client.h"
#include "tests/server/http_fixture.h"

namespace server {
namespace {

using testing_http::Fixture;
using testing_http::HttpGatewayTest;
using testing_http::Json;
using testing_util::HttpCall;
using testing_util::HttpResponse;

constexpr char kPartial[] = "5UXWX7C5*BA";

TEST_F(HttpGatewayTest, VpicsPathsDecodeAPartialVinAsVpicDoes) {
  StartHttp();
  const HttpResponse r =
      Get(absl::StrCat("/api/vehicles/DecodeVinValues/", kPartial,
                       "?modelyear=2011&format=json"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("X-Vin-Source"), "vpic");
  const Json want = Fixture("decode-partial-vin.json");
  const Json got = Body(r);
  EXPECT_EQ(got["SearchCriteria"], want["SearchCriteria"]);
  const Json& w = want["Results"][0];
  for (auto it = w.begin(); it != w.end(); ++it) {
    EXPECT_EQ(got["Results"][0][it.key()], it.value()) << it.key();
  }
  EXPECT_EQ(got["Results"][0]["ErrorCode"], "6") << "vPIC's note: incomplete";
  // The batch form takes partial VINs too; this one is now the cache.
  const HttpResponse batch =
      HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/",
               absl::StrCat("format=json&data=", kPartial, ",2011"));
  ASSERT_EQ(batch.status, 200) << batch.body;
  EXPECT_EQ(Body(batch)["Results"][0]["Model"], "X3");
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(HttpGatewayTest, APartialVinOutsideTheAlphabetNeverReachesVpic) {
  StartHttp();
  for (const char* vin :
       {"5UXWX7C5*IA", "5U*WX7C5*BA", "5U", "5UXWX7C5*BA%23"}) {
    SCOPED_TRACE(vin);
    const HttpResponse r = Get(
        absl::StrCat("/api/vehicles/DecodeVinValues/", vin, "?format=json"));
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(Body(r)["error"]["status"], "INVALID_VIN") << r.body;
  }
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(HttpGatewayTest, GrpcAndTheJsonApiDecodeAPartialVinWhenAsked) {
  StartHttp();
  vin::v1::DecodeRequest request;
  request.set_vin(kPartial);
  request.set_model_year(2011);
  vin::v1::DecodeResponse response;
  grpc::Status refused = Decode(request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("allow_partial"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(fake_->TotalRequests(), 0);
  request.set_allow_partial(true);
  ASSERT_TRUE(Decode(request, &response).ok());
  EXPECT_EQ(response.result().vehicle().make(), "BMW");
  EXPECT_EQ(response.result().vehicle().model(), "X3");
  EXPECT_EQ(response.result().vehicle().model_year(), 2011);
  const HttpResponse api =
      HttpCall(port_, "POST", "/v1/decode",
               absl::StrCat("{\"vin\":\"", kPartial,
                            "\",\"modelYear\":2011,\"allowPartial\":true}"));
  ASSERT_EQ(api.status, 200) << api.body;
  EXPECT_EQ(Body(api)["result"]["source"], "SOURCE_CACHE");
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

// Offline: the snapshot reads a partial VIN as vPIC does ('*' for what is
// unknown) and gives the make, model and year vPIC's live decode gives.
TEST_F(HttpGatewayTest, TheSnapshotDecodesAPartialVinAsVpicDid) {
  ServerOptions o = Defaults();
  o.snapshot_path = snapshot::testing::SnapshotPath();
  StartHttp(o);
  ASSERT_NE(server_->snapshot(), nullptr) << server_->snapshot_status();
  const HttpResponse r = HttpCall(
      port_, "POST", "/v1/decode",
      absl::StrCat(
          "{\"vin\":\"", kPartial,
          "\",\"modelYear\":2011,\"allowPartial\":true,"
          "\"sourcePreference\":\"SOURCE_PREFERENCE_SNAPSHOT_ONLY\"}"));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json got = Body(r)["result"];
  EXPECT_EQ(got["source"], "SOURCE_SNAPSHOT");
  const Json fixture = Fixture("decode-partial-vin.json");
  const Json& live = fixture["Results"][0];
  EXPECT_EQ(got["vehicle"]["make"], live["Make"]);
  EXPECT_EQ(got["vehicle"]["model"], live["Model"]);
  EXPECT_EQ(std::to_string(got["vehicle"]["modelYear"].get<int>()),
            live["ModelYear"]);
  bool incomplete = false;
  for (const Json& n : got["notes"]) incomplete |= n["code"] == "6";
  EXPECT_TRUE(incomplete) << got["notes"].dump();
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

}  // namespace
}  // namespace server
