// The HTTP gateway, our own API as JSON (DESIGN "The HTTP gateway",
// server/http/): POST /v1/decode in protobuf's JSON mapping, the NDJSON stream
// of /v1/decode:batch and a client that leaves it, and CORS for browser pages
// on other origins.
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/http_client.h"
#include "testing/scrape.h"
#include "testing/vin_gen.h"
#include "tests/server/http_fixture.h"

namespace server {
namespace {

using testing_http::HttpGatewayTest;
using testing_http::Json;
using testing_http::kFord;
using testing_util::HttpCall;
using testing_util::HttpGet;
using testing_util::HttpResponse;
using testing_util::ValidVin;

// Our API as JSON: a DecodeRequest in, a DecodeResponse out; errors as
// google.rpc.Status with the HTTP status of their gRPC code.
TEST_F(HttpGatewayTest, V1DecodeSpeaksTheProtobufJsonMapping) {
  ServerOptions o = Defaults();
  o.engine.max_attempts = 1;
  o.engine.breaker.failures = 0;
  StartHttp(o);
  HttpResponse r = HttpCall(port_, "POST", "/v1/decode",
                            absl::StrCat("{\"vin\": \"", kFord, "\", \"modelYear\": 2021}"),
                            {"Content-Type: application/json"});
  ASSERT_EQ(r.status, 200) << r.body;
  Json j = Body(r);
  EXPECT_EQ(j["result"]["vin"], kFord);
  EXPECT_EQ(j["result"]["vehicle"]["make"], "FORD");
  EXPECT_EQ(j["result"]["source"], "SOURCE_VPIC");
  EXPECT_TRUE(j["result"].contains("decodeTime"));
  // An invalid VIN: 400, google.rpc.Status.
  r = HttpCall(port_, "POST", "/v1/decode", "{\"vin\": \"123\"}");
  EXPECT_EQ(r.status, 400) << r.body;
  j = Body(r);
  EXPECT_EQ(j["code"], 3) << "INVALID_ARGUMENT";
  EXPECT_FALSE(j["message"].get<std::string>().empty());
  // Not a DecodeRequest: 400 saying so.
  r = HttpCall(port_, "POST", "/v1/decode", "{\"vin\": [1]}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("vin.v1.DecodeRequest"), std::string::npos) << r.body;
  // A field this server does not know is ignored, as grpc-gateway does (a
  // client built against a newer contract still works).
  r = HttpCall(port_, "POST", "/v1/decode",
               absl::StrCat("{\"vin\": \"", kFord,
                            "\", \"modelYear\": 2021, \"comingSoon\": true}"));
  EXPECT_EQ(r.status, 200) << r.body;
  // Unavailable: 503 with RetryInfo among the details.
  const std::string down = ValidVin(91);
  Script(down, "429:7");
  r = HttpCall(port_, "POST", "/v1/decode", absl::StrCat("{\"vin\": \"", down, "\"}"));
  EXPECT_EQ(r.status, 503) << r.body;
  j = Body(r);
  EXPECT_EQ(j["code"], 14) << "UNAVAILABLE";
  ASSERT_TRUE(j.contains("details")) << r.body;
  // (ErrorInfo comes first, then RetryInfo: "Errors a program can read".)
  std::vector<std::string> types;
  for (const Json& d : j["details"]) types.push_back(d.value("@type", ""));
  EXPECT_THAT(types,
              testing::Contains("type.googleapis.com/google.rpc.RetryInfo"))
      << r.body;
  EXPECT_FALSE(r.Header("Retry-After").empty());
  r = HttpCall(port_, "GET", "/v1/decode");
  EXPECT_EQ(r.status, 405);
}

// CORS (--http_cors_origins): pages on the listed origins may read the
// answers and the provenance headers; others are refused 403 before
// anything runs (rule 19), and so is their preflight, saying why.
TEST_F(HttpGatewayTest, CorsLetsListedOriginsReadAndNoOthers) {
  ServerOptions o = Defaults();
  o.http.cors_origins = {"https://dealer.example"};
  StartHttp(o);
  const std::string path = absl::StrCat("/api/vehicles/DecodeVinValues/", ValidVin(95));
  HttpResponse r = Get(path, {"Origin: https://dealer.example"});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "https://dealer.example");
  EXPECT_NE(r.Header("Access-Control-Expose-Headers").find("X-Vin-Source"),
            std::string::npos);
  r = Get(path, {"Origin: https://elsewhere.example"});
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.Count("Access-Control-Allow-Origin"), 0u);
  EXPECT_NE(r.body.find("origin https://elsewhere.example may not call"),
            std::string::npos)
      << r.body;
  r = HttpCall(port_, "OPTIONS", path, "",
               {"Origin: https://dealer.example",
                "Access-Control-Request-Method: GET",
                "Access-Control-Request-Headers: x-request-timeout"});
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "https://dealer.example");
  EXPECT_NE(r.Header("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  EXPECT_EQ(r.Header("Access-Control-Allow-Headers"), "x-request-timeout");
  r = HttpCall(port_, "OPTIONS", path, "", {"Origin: https://elsewhere.example"});
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("not among --http_cors_origins"), std::string::npos);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

// /v1/decode:batch: NDJSON in, DecodeBatchResponse events out as NDJSON;
// every line gets exactly one terminal event, and the stream ends after the
// last.
TEST_F(HttpGatewayTest, DecodeBatchStreamsEveryItemsEventsAndEndsAfterTheLast) {
  StartHttp();
  constexpr int kItems = 2000;
  std::string body;
  for (int i = 0; i < kItems; ++i) {
    absl::StrAppend(&body, "{\"requestId\":\"r", i, "\",\"vin\":\"",
                    ValidVin(1000 + i % 500), "\"}\n");
  }
  absl::StrAppend(&body, "not json\n{\"vin\":\"123\"}\n");
  Script(ValidVin(1003), "503");  // one item retries first
  const HttpResponse r = HttpCall(port_, "POST", "/v1/decode:batch", body,
                                  {"Content-Type: application/x-ndjson"});
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  EXPECT_EQ(r.Header("Content-Type"), "application/x-ndjson");
  EXPECT_EQ(r.Header("Transfer-Encoding"), "chunked");
  std::map<std::string, std::vector<std::string>> kinds;  // by request_id
  for (absl::string_view line : absl::StrSplit(r.body, '\n', absl::SkipEmpty())) {
    const Json e = Json::parse(line, nullptr, false);
    ASSERT_FALSE(e.is_discarded()) << line;
    const std::string id = e.value("requestId", "");
    for (const char* k : {"queued", "retrying", "done", "failed"}) {
      if (e.contains(k)) kinds[id].push_back(k);
    }
  }
  ASSERT_EQ(kinds.size(), static_cast<size_t>(kItems + 2));
  int done = 0, failed = 0, retried = 0;
  for (const auto& [id, ks] : kinds) {
    ASSERT_FALSE(ks.empty()) << id;
    int terminal = 0;
    for (const auto& k : ks) terminal += k == "done" || k == "failed";
    EXPECT_EQ(terminal, 1) << id;
    EXPECT_TRUE(ks.back() == "done" || ks.back() == "failed") << id;
    done += ks.back() == "done";
    failed += ks.back() == "failed";
    retried += std::count(ks.begin(), ks.end(), "retrying") > 0;
  }
  EXPECT_EQ(done, kItems);
  EXPECT_EQ(failed, 2) << "the line that is not JSON and the invalid VIN";
  EXPECT_GE(retried, 1);
  EXPECT_EQ(kinds["#2000"].back(), "failed") << "unnamed lines are #index";
  EXPECT_EQ(fake_->TotalRequests(), 500 + 1) << "one flight per distinct VIN";
}

// A client that goes away mid-stream leaves no waiter or flight behind.
TEST_F(HttpGatewayTest, AClientThatLeavesMidStreamReleasesEverything) {
  // Nothing but the client's leaving may end the items within the wait
  // below: no attempt times out (and so no retry budget or breaker ends
  // them), no deadline comes.
  ServerOptions o = Defaults();
  o.engine.attempt_timeout = absl::Minutes(5);
  o.http.deadline = absl::Minutes(5);
  StartHttp(o);
  std::string body;
  for (int i = 0; i < 100; ++i) {
    absl::StrAppend(&body, "{\"vin\":\"", ValidVin(3000 + i), "\"}\n");
  }
  fake_->HoldAnswers();
  const int fd = testing_util::RawSend(
      port_, absl::StrCat("POST /v1/decode:batch HTTP/1.1\r\nHost: "
                          "127.0.0.1\r\nContent-Length: ",
                          body.size(), "\r\n\r\n", body));
  ASSERT_GE(fd, 0);
  // Every item is in progress (the window is 256), its request held by vPIC.
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) { return s.waiters == 100 && s.flights == 100; },
      absl::Seconds(30)))
      << "waiters " << server_->engine().Stats().waiters;
  ::close(fd);  // the client goes away mid-stream
  EXPECT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) { return s.waiters == 0 && s.flights == 0; },
      absl::Seconds(60)))
      << "waiters " << server_->engine().Stats().waiters << ", flights "
      << server_->engine().Stats().flights;
  fake_->ReleaseAnswers();
}

// The stream's window is the server's --batch_window, as a DecodeBatch
// stream's: with vPIC holding its answers, three of ten items are in
// progress, and the next enters as an item ends.
TEST_F(HttpGatewayTest, DecodeBatchKeepsToTheServersBatchWindow) {
  ServerOptions o = Defaults();
  o.batch_window = 3;
  StartHttp(o);
  fake_->HoldAnswers();
  std::string body;
  for (int i = 0; i < 10; ++i) {
    absl::StrAppend(&body, "{\"vin\":\"", ValidVin(2000 + i), "\"}\n");
  }
  HttpResponse r;
  std::thread client([&] {
    r = HttpCall(port_, "POST", "/v1/decode:batch", body,
                 {"Content-Type: application/x-ndjson"});
  });
  EXPECT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) { return s.waiters == 3; },
      absl::Seconds(30)))
      << "waiting: " << server_->engine().Stats().waiters;
  // The three are at vPIC, which holds them: nothing else may enter.
  testing_util::Eventually([&] { return fake_->TotalRequests() >= 3; });
  EXPECT_EQ(fake_->TotalRequests(), 3);
  EXPECT_EQ(server_->engine().Stats().waiters, 3u) << "the window is full";
  fake_->ReleaseAnswers();
  client.join();
  ASSERT_EQ(r.status, 200);
  int done = 0;
  for (absl::string_view line : absl::StrSplit(r.body, '\n', absl::SkipEmpty())) {
    done += absl::StrContains(line, "\"done\"");
  }
  EXPECT_EQ(done, 10);
  EXPECT_EQ(fake_->TotalRequests(), 10);
}

// Rule 17 through the gateway: the tenant is the X-Vin-Tenant header (no
// TLS here), vPIC's single-VIN paths are interactive, its batch form is
// bulk, and /v1/decode takes the priority the request names.
TEST_F(HttpGatewayTest, TheTenantHeaderAndEachPathsPriorityReachTheBudget) {
  ServerOptions o = Defaults();
  o.metrics_listen = "127.0.0.1:0";
  StartHttp(o);
  EXPECT_EQ(Get(absl::StrCat("/api/vehicles/DecodeVinValues/", ValidVin(71)),
                {"X-Vin-Tenant: web-shop"})
                .status,
            200);
  EXPECT_EQ(HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/",
                     absl::StrCat("format=json&data=", ValidVin(72), ";", ValidVin(73)),
                     {"X-Vin-Tenant: web-shop"})
                .status,
            200);
  EXPECT_EQ(HttpCall(port_, "POST", "/v1/decode",
                     absl::StrCat("{\"vin\": \"", ValidVin(74),
                                  "\", \"priority\": \"PRIORITY_BULK\"}"),
                     {"Content-Type: application/json"})
                .status,
            200);
  std::string body;
  ASSERT_EQ(testing_util::HttpGet(server_->metrics_port(), "/metrics", &body), 200);
  const testing_util::Samples m = testing_util::ParseSamples(body);
  const auto vins = [&m](const std::string& tenant, const std::string& priority) {
    const std::string key = absl::StrCat("vin_upstream_tenant_vins_total{tenant=\"",
                                         tenant, "\",priority=\"", priority, "\"}");
    return m.count(key) != 0 ? m.at(key) : 0.0;
  };
  EXPECT_EQ(vins("web-shop", "interactive"), 1);
  EXPECT_EQ(vins("web-shop", "bulk"), 2);
  EXPECT_EQ(vins("default", "bulk"), 1);
  EXPECT_EQ(vins("default", "interactive"), 0);
}

}  // namespace
}  // namespace server
