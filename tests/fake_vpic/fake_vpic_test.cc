// Tests of the fake vPIC server through real HTTP on loopback (libcurl).
// Its steps as text: steps_test.cc.
#include "fake_vpic/fake_vpic.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fakevpic {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kFixtureVin[] = "1FTMW1T88MFA00001";
constexpr char kHondaVin[] = "1HGCM82633A004352";

struct HttpResult {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string headers;
  std::string body;
  long new_connections = 0;  // connections curl opened for this request
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One curl easy handle: consecutive Gets reuse its keep-alive connection.
class Client {
 public:
  Client() {
    static const bool initialized = curl_global_init(CURL_GLOBAL_ALL) == 0;
    EXPECT_TRUE(initialized);
    handle_ = curl_easy_init();
  }
  ~Client() { curl_easy_cleanup(handle_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  HttpResult Get(const std::string& url, long timeout_ms = 10000,
                 const char* header = nullptr) {
    HttpResult result;
    curl_slist* headers = header ? curl_slist_append(nullptr, header) : nullptr;
    curl_easy_setopt(handle_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle_, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(handle_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle_, CURLOPT_WRITEFUNCTION, Append);
    curl_easy_setopt(handle_, CURLOPT_WRITEDATA, &result.body);
    curl_easy_setopt(handle_, CURLOPT_HEADERFUNCTION, Append);
    curl_easy_setopt(handle_, CURLOPT_HEADERDATA, &result.headers);
    result.code = curl_easy_perform(handle_);
    curl_easy_getinfo(handle_, CURLINFO_RESPONSE_CODE, &result.status);
    curl_easy_getinfo(handle_, CURLINFO_NUM_CONNECTS, &result.new_connections);
    curl_easy_setopt(handle_, CURLOPT_HTTPHEADER, nullptr);
    curl_slist_free_all(headers);
    return result;
  }

 private:
  CURL* handle_;
};

class FakeVpicTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(Options{}); }

  void Start(Options options) {
    auto fake = FakeVpic::Start(std::move(options));
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }

  std::string Url(absl::string_view vin, int model_year = 0) const {
    std::string url = absl::StrCat(fake_->base_url(), "/DecodeVinValues/", vin,
                                   "?format=json");
    if (model_year > 0) absl::StrAppend(&url, "&modelyear=", model_year);
    return url;
  }

  HttpResult Get(absl::string_view vin, int model_year = 0) {
    return client_.Get(Url(vin, model_year));
  }

  static Json Result0(const HttpResult& r) {
    Json body = Json::parse(r.body);
    return body["Results"].at(0);
  }

  static std::vector<std::string> Served(
      const std::vector<RequestRecord>& log) {
    std::vector<std::string> out;
    for (const RequestRecord& r : log) out.push_back(r.served);
    return out;
  }

  std::unique_ptr<FakeVpic> fake_;
  Client client_;
};

TEST_F(FakeVpicTest, ServesTheFixtureForItsVin) {
  for (int model_year : {0, 2021}) {
    HttpResult r = Get(kFixtureVin, model_year);
    ASSERT_EQ(r.code, CURLE_OK);
    EXPECT_EQ(r.status, 200);
    EXPECT_THAT(r.headers, HasSubstr("application/json"));
    Json result = Result0(r);
    EXPECT_EQ(result["Make"], "FORD");
    EXPECT_EQ(result["Model"], "F-150");
    EXPECT_EQ(result["VehicleType"], "TRUCK ");
    EXPECT_EQ(result["ModelYear"], "2021");
  }
}

TEST_F(FakeVpicTest, GeneratesAVpicShapedAnswerForOtherVins) {
  const size_t fixture_variables = Result0(Get(kFixtureVin)).size();
  HttpResult r = Get(kHondaVin);
  ASSERT_EQ(r.code, CURLE_OK);
  EXPECT_EQ(r.status, 200);
  Json body = Json::parse(r.body);
  EXPECT_EQ(body["SearchCriteria"], absl::StrCat("VIN(s): ", kHondaVin));
  EXPECT_THAT(body["Message"].get<std::string>(),
              HasSubstr("Results returned successfully"));
  Json result = body["Results"].at(0);
  EXPECT_EQ(result.size(), fixture_variables);
  EXPECT_EQ(result["VIN"], kHondaVin);
  EXPECT_EQ(result["Make"], "HONDA");
  EXPECT_EQ(result["Model"], "MODEL-CM826");
  EXPECT_EQ(result["ModelYear"], "2003");
  EXPECT_EQ(result["Manufacturer"], "HONDA TEST MANUFACTURER");
  EXPECT_EQ(result["VehicleType"], "PASSENGER CAR ");
  EXPECT_EQ(result["ErrorCode"], "0");
  EXPECT_EQ(result["Trim"], "");

  EXPECT_EQ(Result0(Get(kHondaVin, 2005))["ModelYear"], "2005");
  Json generic = Result0(Get("ZZZAB12C4MF000001"));
  EXPECT_EQ(generic["Make"], "GENERIC");
  EXPECT_EQ(generic["ModelYear"], "2021");
  // Deterministic: the same request gets the same bytes.
  EXPECT_EQ(Get(kHondaVin).body, r.body);
}

TEST_F(FakeVpicTest, ScriptedStepsComeInOrderThenTheNormalAnswer) {
  auto steps = Step::ParseList("503, 503, ok");
  ASSERT_TRUE(steps.ok()) << steps.status();
  fake_->Script(kHondaVin, *steps);
  std::vector<long> statuses;
  for (int i = 0; i < 4; ++i) statuses.push_back(Get(kHondaVin).status);
  EXPECT_THAT(statuses, ElementsAre(503, 503, 200, 200));
  EXPECT_THAT(Served(fake_->RequestsFor(kHondaVin)),
              ElementsAre("503", "503", "ok", "ok"));
  EXPECT_EQ(fake_->RequestCount(kHondaVin), 4);
}

TEST_F(FakeVpicTest, ScriptEveryVinCountsPerVinAndYieldsToOwnScripts) {
  fake_->ScriptEveryVin({*Step::Parse("502")});
  fake_->Script(kFixtureVin, {});
  EXPECT_EQ(Get(kHondaVin).status, 502);
  EXPECT_EQ(Get(kHondaVin).status, 200);
  EXPECT_EQ(Get("1G4AH59H45G118341").status, 502);
  EXPECT_EQ(Get(kFixtureVin).status, 200);
}

TEST_F(FakeVpicTest, TooManyRequestsCarriesRetryAfter) {
  fake_->Script(kHondaVin, {*Step::Parse("429:7")});
  HttpResult r = Get(kHondaVin);
  ASSERT_EQ(r.code, CURLE_OK);
  EXPECT_EQ(r.status, 429);
  EXPECT_THAT(r.headers, HasSubstr("Retry-After: 7\r\n"));
}

TEST_F(FakeVpicTest, ResetIsATransportError) {
  fake_->Script(kHondaVin, {*Step::Parse("reset")});
  HttpResult r = Get(kHondaVin);
  EXPECT_NE(r.code, CURLE_OK);
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(Served(fake_->RequestsFor(kHondaVin)), ElementsAre("reset"));
}

TEST_F(FakeVpicTest, HangIsEndedByTheClientTimeoutAndRecorded) {
  fake_->Script(kHondaVin, {*Step::Parse("hang")});
  {
    Client client;
    HttpResult r = client.Get(Url(kHondaVin), /*timeout_ms=*/300);
    EXPECT_EQ(r.code, CURLE_OPERATION_TIMEDOUT);
    EXPECT_EQ(r.status, 0);
  }  // closes the connection
  EXPECT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(fake_->ActiveRequests(), 0);
  EXPECT_THAT(Served(fake_->RequestsFor(kHondaVin)), ElementsAre("hang"));
  EXPECT_EQ(Get(kHondaVin).status, 200);
}

TEST_F(FakeVpicTest, FaultBodies) {
  auto steps = Step::ParseList("html,sparse,truncated,empty");
  ASSERT_TRUE(steps.ok()) << steps.status();
  fake_->Script(kHondaVin, *steps);

  HttpResult html = Get(kHondaVin);
  EXPECT_EQ(html.status, 200);
  EXPECT_THAT(html.headers, HasSubstr("text/html"));
  EXPECT_FALSE(Json::accept(html.body));

  HttpResult sparse = Get(kHondaVin);
  EXPECT_EQ(sparse.status, 200);
  Json result = Result0(sparse);
  EXPECT_EQ(result["VIN"], kHondaVin);
  EXPECT_EQ(result["ErrorCode"], "8");
  EXPECT_EQ(result["Make"], "");
  EXPECT_EQ(result["Model"], "");

  HttpResult truncated = Get(kHondaVin);
  ASSERT_EQ(truncated.code, CURLE_OK);  // Content-Length matched the bytes
  EXPECT_EQ(truncated.status, 200);
  EXPECT_FALSE(Json::accept(truncated.body));
  EXPECT_GT(truncated.body.size(), 100u);

  HttpResult empty = Get(kHondaVin);
  Json body = Json::parse(empty.body);
  EXPECT_EQ(body["Count"], 0);
  EXPECT_TRUE(body["Results"].empty());
  EXPECT_EQ(body["SearchCriteria"], absl::StrCat("VIN(s): ", kHondaVin));

  EXPECT_THAT(Served(fake_->RequestsFor(kHondaVin)),
              ElementsAre("html", "sparse", "truncated", "empty"));
}

TEST_F(FakeVpicTest, DelayAnswersNormallyAfterWaiting) {
  fake_->Script(kHondaVin, {*Step::Parse("delay:200ms")});
  const absl::Time start = absl::Now();
  HttpResult r = Get(kHondaVin);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Result0(r)["Make"], "HONDA");
}

TEST_F(FakeVpicTest, LatencyComesBeforeEveryAnswer) {
  Options options;
  options.latency = absl::Milliseconds(100);
  Start(options);
  const absl::Time start = absl::Now();
  EXPECT_EQ(Get(kHondaVin).status, 200);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
}

TEST_F(FakeVpicTest, RequestLogRecordsTimeVinAndModelYear) {
  const absl::Time before = absl::Now();
  Get(kFixtureVin, 2021);
  const absl::Time after = absl::Now();
  client_.Get(absl::StrCat(fake_->base_url(), "/GetNothing?format=json"));
  client_.Get(absl::StrCat(fake_->base_url(), "/GetAllMakes?format=json"));

  std::vector<RequestRecord> log = fake_->Requests();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_GE(log[0].time, before);
  EXPECT_LE(log[0].time, after);
  EXPECT_EQ(log[0].vin, kFixtureVin);
  EXPECT_EQ(log[0].model_year, 2021);
  EXPECT_EQ(log[0].target,
            absl::StrCat("/api/vehicles/DecodeVinValues/", kFixtureVin,
                         "?format=json&modelyear=2021"));
  EXPECT_EQ(log[0].served, "ok");
  EXPECT_EQ(log[1].vin, "");
  EXPECT_EQ(log[1].model_year, 0);
  EXPECT_EQ(log[1].served, "404");
  EXPECT_EQ(log[1].endpoint, "");
  // A reference endpoint (rule 18) is logged by its name.
  EXPECT_EQ(log[2].vin, "");
  EXPECT_EQ(log[2].endpoint, "getallmakes");
  EXPECT_EQ(log[2].served, "ok");
  EXPECT_EQ(fake_->TotalRequests(), 3);
}

TEST_F(FakeVpicTest, WaitForRequestsWakesOnArrival) {
  EXPECT_FALSE(fake_->WaitForRequests(1, absl::Milliseconds(20)));
  std::thread caller([this] {
    Client client;
    client.Get(Url(kHondaVin));
  });
  EXPECT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  caller.join();
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(FakeVpicTest, KeepAliveReusesTheConnectionUntilConnectionClose) {
  EXPECT_EQ(Get(kHondaVin).new_connections, 1);
  EXPECT_EQ(Get(kHondaVin).new_connections, 0);
  HttpResult closing = client_.Get(Url(kHondaVin), 10000, "Connection: close");
  EXPECT_EQ(closing.status, 200);
  EXPECT_THAT(closing.headers, HasSubstr("Connection: close"));
  EXPECT_EQ(Get(kHondaVin).new_connections, 1);
}

TEST_F(FakeVpicTest, MaxConcurrentRequestsCountsParallelDelays) {
  constexpr int kCallers = 4;
  fake_->ScriptEveryVin({*Step::Parse("delay:60s")});
  std::vector<std::thread> callers;
  std::vector<HttpResult> results(kCallers);
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([this, i, &results] {
      Client client;
      results[i] = client.Get(Url(absl::StrCat("1HGCM82633A00435", i)), 30000);
    });
  }
  ASSERT_TRUE(fake_->WaitForRequests(kCallers, absl::Seconds(10)));
  EXPECT_EQ(fake_->ActiveRequests(), kCallers);
  EXPECT_EQ(fake_->MaxConcurrentRequests(), kCallers);
  // Stopping interrupts the delays: no caller waits out its 60s.
  const absl::Time start = absl::Now();
  fake_.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (std::thread& t : callers) t.join();
  for (const HttpResult& r : results) EXPECT_NE(r.code, CURLE_OK);
}

TEST_F(FakeVpicTest, DestructorReturnsPromptlyWhileAHangIsOpen) {
  fake_->Script(kHondaVin, {*Step::Parse("hang")});
  HttpResult hung;
  std::thread caller([this, &hung] {
    Client client;
    hung = client.Get(Url(kHondaVin), 30000);
  });
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  EXPECT_EQ(fake_->ActiveRequests(), 1);
  const absl::Time start = absl::Now();
  fake_.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  caller.join();
  EXPECT_NE(hung.code, CURLE_OK);
}

TEST_F(FakeVpicTest, ChaosDrawsEveryUnscriptedAnswerByWeight) {
  Options options;
  options.chaos = *WeightedStep::ParseList("3*503, 1*ok, 0*reset");
  options.chaos_seed = 7;
  Start(std::move(options));
  fake_->Script(kFixtureVin, {*Step::Parse("sparse")});
  HttpResult scripted = Get(kFixtureVin);  // its script answers, not chaos
  EXPECT_EQ(scripted.status, 200);
  int unavailable = 0, ok = 0;
  for (int i = 0; i < 400; ++i) {
    HttpResult r = Get(kHondaVin);
    ASSERT_EQ(r.code, CURLE_OK);
    (r.status == 503 ? unavailable : ok) += 1;
    if (r.status == 200) EXPECT_EQ(Result0(r)["Make"], "HONDA");
  }
  // 3:1 by weight; a weight of 0 is never drawn.
  EXPECT_GT(unavailable, 240);
  EXPECT_GT(ok, 60);
  EXPECT_EQ(unavailable + ok, 400);
  const std::vector<std::string> served = Served(fake_->Requests());
  EXPECT_EQ(served.front(), "sparse");
  EXPECT_EQ(std::count(served.begin(), served.end(), "503"), unavailable);
  EXPECT_EQ(std::count(served.begin(), served.end(), "reset"), 0);
}

}  // namespace
}  // namespace fakevpic
