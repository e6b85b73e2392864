// The HTTP gateway, vPIC's own paths (DESIGN "The HTTP gateway", server/http/):
// answered in vPIC's shape through the same engine as gRPC, errors in HTTP
// terms, caching headers, and the limits that keep bad requests from the
// engine. Our own JSON API: http_json_api_test.cc.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/http_client.h"
#include "tests/server/http_fixture.h"
#include "testing/vin_gen.h"

namespace server {
namespace {

using testing_http::Fixture;
using testing_http::HttpGatewayTest;
using testing_http::Json;
using testing_http::kFord;
using testing_util::HttpCall;
using testing_util::HttpResponse;
using testing_util::RawExchange;
using testing_util::RawStatus;
using testing_util::ValidVin;

// vPIC shape: for each single-VIN fixture, the gateway's answer to the same
// path has the same keys in the same order and the same values (also those
// vPIC padded with spaces, "TRUCK ").
TEST_F(HttpGatewayTest, DecodeVinValuesHasVpicsShapeForEveryFixture) {
  StartHttp();
  struct Case {
    const char* fixture;
    std::string path;
  };
  for (const Case& c :
       {Case{"decode-vin.json",
             absl::StrCat("/api/vehicles/DecodeVinValues/", kFord, "?format=json")},
        Case{"decode-vin-with-modelyear.json",
             absl::StrCat("/api/vehicles/DecodeVinValues/", kFord,
                          "?modelyear=2021&format=json")}}) {
    SCOPED_TRACE(c.fixture);
    const HttpResponse r = Get(c.path);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Header("Content-Type"), "application/json; charset=utf-8");
    const Json want = Fixture(c.fixture);
    const Json got = Body(r);
    std::vector<std::string> want_keys, got_keys;
    for (auto it = want.begin(); it != want.end(); ++it) want_keys.push_back(it.key());
    for (auto it = got.begin(); it != got.end(); ++it) got_keys.push_back(it.key());
    EXPECT_EQ(got_keys, want_keys);
    EXPECT_EQ(got["Count"], want["Count"]);
    EXPECT_EQ(got["Message"], want["Message"]);
    EXPECT_EQ(got["SearchCriteria"], want["SearchCriteria"]);
    ASSERT_EQ(got["Results"].size(), 1u);
    const Json& w = want["Results"][0];
    const Json& g = got["Results"][0];
    std::vector<std::string> wk, gk;
    for (auto it = w.begin(); it != w.end(); ++it) wk.push_back(it.key());
    for (auto it = g.begin(); it != g.end(); ++it) gk.push_back(it.key());
    EXPECT_EQ(gk, wk) << "every variable, in vPIC's order";
    for (auto it = w.begin(); it != w.end(); ++it) {
      EXPECT_EQ(g[it.key()], it.value()) << it.key();
    }
    EXPECT_EQ(r.Header("X-Vin-Source"), "vpic");
  }
  // The Extended path has the same shape; the second time it is the cache.
  const HttpResponse ext = Get(absl::StrCat(
      "/API/Vehicles/decodevinvaluesextended/", kFord, "/?format=json"));
  ASSERT_EQ(ext.status, 200) << ext.body;
  EXPECT_EQ(ext.Header("X-Vin-Source"), "cache");
  EXPECT_EQ(Body(ext)["Results"][0], Fixture("decode-vin.json")["Results"][0]);
  EXPECT_EQ(fake_->TotalRequests(), 2) << "one per model year asked";
}

TEST_F(HttpGatewayTest, TheBatchFormGivesEachVinWhatTheSingleEndpointGives) {
  StartHttp();
  // (a's position 10 is 'J': 1988 or 2018, the years its hint may be.)
  const std::string a = ValidVin(11), b = ValidVin(12);
  const HttpResponse batch =
      HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/",
               absl::StrCat("format=json&DATA=", a, "%2C2018%3B", b),
               {"Content-Type: application/x-www-form-urlencoded"});
  ASSERT_EQ(batch.status, 200) << batch.body;
  const Json j = Body(batch);
  EXPECT_EQ(j["Count"], 2);
  EXPECT_EQ(j["SearchCriteria"], "");
  ASSERT_EQ(j["Results"].size(), 2u);
  const Json one_a = Body(Get(absl::StrCat("/api/vehicles/DecodeVinValues/", a,
                                           "?modelyear=2018&format=json")));
  const Json one_b = Body(
      Get(absl::StrCat("/api/vehicles/DecodeVinValues/", b, "?format=json")));
  EXPECT_EQ(j["Results"][0], one_a["Results"][0]);
  EXPECT_EQ(j["Results"][1], one_b["Results"][0]);
  EXPECT_EQ(fake_->TotalRequests(), 2) << "the singles were cache answers";
}

// One flight per VIN across gRPC and HTTP.
TEST_F(HttpGatewayTest, HundredHttpAndHundredGrpcCallsMakeOneUpstreamRequest) {
  ServerOptions o = Defaults();
  o.max_streams_per_connection = 200;
  // vPIC holds its answer until all 200 callers are in: the attempt must
  // not time out meanwhile (the callers' threads take seconds to start in
  // a sanitizer build), or a retry would be a second request.
  o.engine.attempt_timeout = absl::Seconds(60);
  StartHttp(o);
  const std::string vin = ValidVin(21);
  fake_->HoldAnswers();
  std::vector<std::thread> threads;
  std::vector<int> http_status(100);
  std::vector<grpc::Status> grpc_status(100);
  for (int i = 0; i < 100; ++i) {
    threads.emplace_back([&, i] {
      http_status[i] =
          Get(absl::StrCat("/api/vehicles/DecodeVinValues/", vin)).status;
    });
    threads.emplace_back([&, i] {
      vin::v1::DecodeResponse out;
      grpc_status[i] = Decode(vin, &out);
    });
  }
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) { return s.waiters == 200; },
      absl::Seconds(60)))
      << "waiting: " << server_->engine().Stats().waiters;
  fake_->ReleaseAnswers();
  for (auto& t : threads) t.join();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(http_status[i], 200);
    EXPECT_TRUE(grpc_status[i].ok()) << grpc_status[i].error_message();
  }
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(HttpGatewayTest, AnInvalidVinIsRefusedNamingTheRuleAndNeverForwarded) {
  StartHttp();
  std::string bad(kFord);
  bad[8] = '9';  // a wrong check digit
  const HttpResponse r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", bad));
  EXPECT_EQ(r.status, 400);
  const Json j = Body(r);
  EXPECT_EQ(j["error"]["status"], "INVALID_VIN");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("check digit"),
            std::string::npos)
      << r.body;
  // One bad VIN refuses the whole batch.
  const HttpResponse batch =
      HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/",
               absl::StrCat("data=", ValidVin(31), ";", bad));
  EXPECT_EQ(batch.status, 400);
  EXPECT_NE(batch.body.find("VIN 2"), std::string::npos) << batch.body;
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(HttpGatewayTest, UpstreamFailuresInHttpTerms) {
  ServerOptions o = Defaults();
  o.engine.max_attempts = 2;
  o.engine.breaker.failures = 0;
  StartHttp(o);
  // vPIC keeps failing: 503 with Retry-After.
  const std::string down = ValidVin(41);
  Script(down, "503,503");
  HttpResponse r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", down));
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_FALSE(r.Header("Retry-After").empty());
  EXPECT_EQ(Body(r)["error"]["status"], "UPSTREAM_UNAVAILABLE");
  EXPECT_EQ(Body(r)["error"]["retryable"], true);
  EXPECT_EQ(r.Header("Cache-Control"), "no-store");
  // vPIC rejects it: 502.
  const std::string rejected = ValidVin(42);
  Script(rejected, "404");
  r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", rejected));
  EXPECT_EQ(r.status, 502) << r.body;
  EXPECT_EQ(Body(r)["error"]["status"], "UPSTREAM_REJECTED");
  // The deadline (the client's shorter X-Request-Timeout) comes first: 504.
  const std::string slow = ValidVin(43);
  Script(slow, "delay:3s");
  r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", slow),
          {"X-Request-Timeout: 300ms"});
  EXPECT_EQ(r.status, 504) << r.body;
  r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", slow),
          {"X-Request-Timeout: soon"});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("X-Request-Timeout"), std::string::npos);
}

TEST_F(HttpGatewayTest, OverloadedIs429WithRetryAfter) {
  ServerOptions o = Defaults();
  o.engine.max_waiters = 1;
  StartHttp(o);
  const std::string held = ValidVin(51);
  fake_->HoldAnswers();
  std::thread first([&] { Get(absl::StrCat("/api/vehicles/DecodeVinValues/", held)); });
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) { return s.waiters == 1; }, absl::Seconds(30)));
  const HttpResponse r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", ValidVin(52)));
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_FALSE(r.Header("Retry-After").empty());
  fake_->ReleaseAnswers();
  first.join();
}

TEST_F(HttpGatewayTest, CacheControlAndETagLetBrowsersAndProxiesHelp) {
  ServerOptions o = Defaults();
  o.engine.cache_ttl = absl::Hours(24);
  StartHttp(o);
  const std::string path = absl::StrCat("/api/vehicles/DecodeVinValues/", ValidVin(61));
  const HttpResponse first = Get(path);
  ASSERT_EQ(first.status, 200);
  const std::string cc = first.Header("Cache-Control");
  ASSERT_TRUE(absl::StartsWith(cc, "max-age=")) << cc;
  const int max_age = std::stoi(cc.substr(8));
  EXPECT_GT(max_age, 24 * 3600 - 60);
  EXPECT_LE(max_age, 24 * 3600);
  const std::string etag = first.Header("ETag");
  ASSERT_FALSE(etag.empty());
  const HttpResponse again = Get(path, {absl::StrCat("If-None-Match: ", etag)});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.Header("ETag"), etag);
  const HttpResponse other = Get(path, {"If-None-Match: \"something else\""});
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.body, first.body);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(HttpGatewayTest, PathTricksFormsAndLimitsAre4xxAndNothingIsForwarded) {
  ServerOptions o = Defaults();
  o.http.body_limit = 4096;
  StartHttp(o);
  const std::string vin = ValidVin(71);
  struct Case {
    std::string path;
    int status;
  };
  for (const Case& c : {
           Case{absl::StrCat("/api/vehicles/../vehicles/DecodeVinValues/", vin),
                400},
           Case{absl::StrCat("/api/vehicles/DecodeVinValues%2F", vin), 400},
           Case{absl::StrCat("/api/vehicles/DecodeVinValues/", vin, "%2fx"),
                400},
           Case{absl::StrCat("/api/vehicles/DecodeVinValues/",
                             std::string(10000, 'A')),
                400},
           Case{absl::StrCat("/api/vehicles/DecodeVinValues/", vin,
                             "?format=yaml"),
                400},
           Case{absl::StrCat("/api/vehicles/DecodeVinValues/", vin,
                             "?modelyear=abc"),
                400},
           Case{absl::StrCat("/api/vehicles/DecodeWMI/1FT/x"), 404},
           Case{absl::StrCat("/api/vehicles/GetModelsForMake/",
                             std::string(10000, 'a')),
                400},
           Case{"/api/vehicles/GetAllManufacturers?page=-1", 400},
           Case{"/api/vehicles/GetNothing", 404},
           Case{"/nothing/here", 404},
       }) {
    SCOPED_TRACE(c.path.substr(0, 80));
    const HttpResponse r = Get(c.path);
    EXPECT_EQ(r.status, c.status) << r.body.substr(0, 300);
    EXPECT_TRUE(Body(r).contains("error"));
  }
  EXPECT_NE(
      Get(absl::StrCat("/api/vehicles/DecodeVinValues/", vin, "?format=yaml"))
          .body.find("json, xml or csv"),
      std::string::npos);
  // Malformed and oversized form bodies.
  for (const std::string& body :
       {std::string("format=json"), std::string("data=%ZZ"), std::string("data="),
        absl::StrCat("data=", vin, ",nineteen")}) {
    const HttpResponse r =
        HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/", body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
  }
  std::string many = "data=";
  for (int i = 0; i < 51; ++i) absl::StrAppend(&many, ValidVin(100 + i), ";");
  HttpResponse r = HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/", many);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("more than 50"), std::string::npos) << r.body;
  r = HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/",
               absl::StrCat("data=", std::string(5000, 'A')));
  EXPECT_EQ(r.status, 413) << r.body;
  r = HttpCall(port_, "GET", "/api/vehicles/DecodeVINValuesBatch/");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.Header("Allow"), "POST");
  r = HttpCall(port_, "DELETE",
               absl::StrCat("/api/vehicles/DecodeVinValues/", vin));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.Header("Allow"), "GET, HEAD");
  // A head larger than the limit.
  r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", vin),
          {absl::StrCat("X-Padding: ", std::string(20000, 'x'))});
  EXPECT_EQ(r.status, 431);
  // A client that sends its head slowly (a part of it, then nothing) is
  // answered 408 when the head timeout passes, and the connection closed.
  const std::string raw = RawExchange(
      port_, absl::StrCat("GET /api/vehicles/DecodeVinValues/", vin, " HTTP/1.1\r\nHo"));
  EXPECT_EQ(RawStatus(raw), 408) << raw;
  EXPECT_NE(raw.find("did not arrive within"), std::string::npos);
  // Not HTTP at all.
  EXPECT_EQ(RawStatus(RawExchange(port_, "\x16\x03\x01 hello\r\n\r\n")), 400);
  EXPECT_EQ(fake_->TotalRequests(), 0) << "nothing reached vPIC";
}

TEST_F(HttpGatewayTest, KeepAliveAnswersPipelinedRequestsInOrder) {
  StartHttp();
  const std::string a = ValidVin(81), b = ValidVin(82);
  const std::string raw = RawExchange(
      port_,
      absl::StrCat(
          "GET /api/vehicles/DecodeVinValues/", a,
          " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
          "GET /api/vehicles/DecodeVinValues/",
          b, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  const size_t first = raw.find(absl::StrCat("VIN(s): ", a));
  const size_t second = raw.find(absl::StrCat("VIN(s): ", b));
  ASSERT_NE(first, std::string::npos) << raw.substr(0, 500);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
}

// The connection's one deadline timer (connection.cc StartTimer): on a
// kept-alive connection the second request's head still times out (408),
// and an answer the engine takes longer than the head timeout to give is
// still sent (the head arrived: no deadline runs meanwhile).
TEST_F(HttpGatewayTest, TheHeadTimeoutHoldsOnEveryRequestOfAConnection) {
  StartHttp();  // a head timeout of 500 ms
  const std::string slow = ValidVin(83), fast = ValidVin(84);
  fake_->Script(slow, *fakevpic::Step::ParseList("delay:1500ms"));
  const std::string raw = RawExchange(
      port_, absl::StrCat("GET /api/vehicles/DecodeVinValues/", slow,
                          "?format=json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                          "GET /api/vehicles/DecodeVinValues/",
                          fast, "?format=json HTTP/1.1\r\nHo"));
  ASSERT_EQ(RawStatus(raw), 200) << raw.substr(0, 300);
  EXPECT_NE(raw.find(absl::StrCat("VIN(s): ", slow)), std::string::npos)
      << "the slow answer, sent";
  const size_t second = raw.find("HTTP/1.1 408");
  ASSERT_NE(second, std::string::npos) << "the half head timed out: " << raw;
  EXPECT_NE(raw.find("did not arrive within", second), std::string::npos);
  EXPECT_EQ(fake_->TotalRequests(), 1) << "the second never reached vPIC";
}

// DecodeVin: the same decode as vPIC's Variable/Value list: vPIC's 134
// variables in its order with its names and ids, empty values null (as vPIC
// writes them), the values those of DecodeVinValues' answer.
TEST_F(HttpGatewayTest, DecodeVinListsTheSameDecodeAsVariablesAndValues) {
  StartHttp();
  const HttpResponse r = Get(
      absl::StrCat("/api/vehicles/DecodeVin/", kFord, "?format=json&modelyear=2021"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("X-Vin-Source"), "vpic");
  const Json got = Body(r);
  const Json flat = Fixture("decode-vin-with-modelyear.json");
  std::vector<std::string> keys;
  for (auto it = got.begin(); it != got.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"Count", "Message", "SearchCriteria",
                                            "Results"}));
  EXPECT_EQ(got["Count"], 134);
  EXPECT_EQ(got["Message"], flat["Message"]);
  EXPECT_EQ(got["SearchCriteria"], absl::StrCat("VIN:", kFord));
  const Json& list = got["Results"];
  ASSERT_EQ(list.size(), 134u);
  std::map<int, Json> by_id;
  std::vector<int> order;
  for (const Json& e : list) {
    std::vector<std::string> k;
    for (auto it = e.begin(); it != e.end(); ++it) k.push_back(it.key());
    ASSERT_EQ(k, (std::vector<std::string>{"Value", "ValueId", "Variable", "VariableId"}))
        << e.dump();
    order.push_back(e["VariableId"].get<int>());
    EXPECT_TRUE(by_id.emplace(order.back(), e).second) << "twice: " << e.dump();
  }
  EXPECT_EQ(std::vector<int>(order.begin(), order.begin() + 7),
            (std::vector<int>{142, 143, 144, 156, 191, 10, 26}));
  EXPECT_EQ(std::vector<int>(order.end() - 3, order.end()),
            (std::vector<int>{192, 193, 194}));
  const auto entry = [&](int id) {
    auto it = by_id.find(id);
    return it == by_id.end() ? Json() : it->second;
  };
  // As vPIC lists this VIN (ValueId where the decode carries it).
  EXPECT_EQ(entry(142), Json::parse(R"({"Value":"","ValueId":"","Variable":"Suggested VIN","VariableId":142})"));
  EXPECT_EQ(entry(143), Json::parse(R"({"Value":"0","ValueId":"0","Variable":"Error Code","VariableId":143})"));
  EXPECT_EQ(entry(156), Json::parse(R"({"Value":null,"ValueId":"","Variable":"Additional Error Text","VariableId":156})"));
  EXPECT_EQ(entry(191)["Value"], "0 - VIN decoded clean. Check Digit (9th position) is correct");
  EXPECT_EQ(entry(10), Json::parse(R"({"Value":null,"ValueId":null,"Variable":"Destination Market","VariableId":10})"));
  EXPECT_EQ(entry(26), Json::parse(R"({"Value":"FORD","ValueId":"460","Variable":"Make","VariableId":26})"));
  EXPECT_EQ(entry(27), Json::parse(R"({"Value":"FORD MOTOR COMPANY, USA","ValueId":"976","Variable":"Manufacturer Name","VariableId":27})"));
  EXPECT_EQ(entry(28), Json::parse(R"({"Value":"F-150","ValueId":"1801","Variable":"Model","VariableId":28})"));
  EXPECT_EQ(entry(29), Json::parse(R"({"Value":"2021","ValueId":"","Variable":"Model Year","VariableId":29})"));
  EXPECT_EQ(entry(39)["Value"], "TRUCK ") << "as vPIC wrote it";
  EXPECT_EQ(entry(71), Json::parse(R"({"Value":"375","ValueId":"","Variable":"Engine Brake (hp) From","VariableId":71})"));
  EXPECT_EQ(entry(13)["Value"], "3.5");
  EXPECT_EQ(entry(194), Json::parse(R"({"Value":null,"ValueId":null,"Variable":"Lane Centering Assistance","VariableId":194})"));
  // Every value of the decode is there, once: DecodeVinValues' non-empty
  // values but those the list form does not carry (the VIN, the ids, NCSA's
  // mapping and three variables vPIC lists elsewhere).
  const std::set<std::string> unlisted = {
      "VIN", "MakeID", "ManufacturerId", "ModelID", "NCSABodyType", "NCSAMake",
      "NCSAMapExcApprovedBy", "NCSAMapExcApprovedOn", "NCSAMappingException",
      "NCSAModel", "NCSANote", "AdaptiveHeadlights", "CashForClunkers",
      "DriverAssist"};
  std::multiset<std::string> want, have;
  for (auto it = flat["Results"][0].begin(); it != flat["Results"][0].end(); ++it) {
    if (!unlisted.count(it.key()) && it.value() != "") want.insert(it.value().get<std::string>());
  }
  for (const Json& e : list) {
    if (e["Value"].is_string() && e["Value"] != "") have.insert(e["Value"].get<std::string>());
  }
  EXPECT_EQ(have, want);
  // The same flight's result: DecodeVinValues is now a cache answer.
  EXPECT_EQ(Get(absl::StrCat("/api/vehicles/DecodeVinValues/", kFord, "?modelyear=2021"))
                .Header("X-Vin-Source"),
            "cache");
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

}  // namespace
}  // namespace server
