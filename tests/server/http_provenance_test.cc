// The HTTP gateway's answers that are not fresh vPIC answers, and its limits
// on connections and bodies (DESIGN "The HTTP gateway", server/http/):
//  - a snapshot answer on vPIC's path has vPIC's shape, and says where it
//    came from in headers only (X-Vin-Source, the live failure as a note,
//    no-cache);
//  - a stale cache entry answers when vPIC fails (rule 15, its real-HTTP
//    test): the decode went live first, the answer is the entry as vPIC
//    gave it, marked stale in headers;
//  - connections over a client's share are refused 429 and never reach the
//    engine; a body that does not arrive in time is a 408.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/eventually.h"
#include "testing/vin_gen.h"
#include "tests/server/http_fixture.h"

namespace server {
namespace {

using ::testing::HasSubstr;
using testing_http::Fixture;
using testing_http::HttpGatewayTest;
using testing_http::Json;
using testing_http::kFord;
using testing_util::HttpResponse;
using testing_util::RawExchange;
using testing_util::RawStatus;
using testing_util::ValidVin;

std::vector<std::string> KeysOf(const Json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

// Every X-Vin-Note of `r`, joined.
std::string Notes(const HttpResponse& r) {
  std::string all;
  auto [from, to] = r.headers.equal_range("x-vin-note");
  for (auto it = from; it != to; ++it) absl::StrAppend(&all, it->second, "\n");
  return all;
}

TEST_F(HttpGatewayTest, ASnapshotAnswerHasVpicsShapeAndSaysWhereItCameFrom) {
  SKIP_WITHOUT_SNAPSHOT();
  StartHttp(SnapshotFallback());
  ASSERT_NE(server_->snapshot(), nullptr) << server_->snapshot_status();
  Script(kFord, "503");  // vPIC fails: LIVE_THEN_SNAPSHOT answers offline
  const HttpResponse r = Get(absl::StrCat("/api/vehicles/DecodeVinValues/", kFord,
                                          "?format=json"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(fake_->TotalRequests(), 1) << "live first";
  EXPECT_EQ(r.Header("X-Vin-Source"), "snapshot");
  EXPECT_EQ(r.Header("Cache-Control"), "no-cache") << "a guess is not kept";
  EXPECT_TRUE(r.Header("X-Vin-Stale").empty());
  EXPECT_TRUE(absl::StrContains(Notes(r), "live_failure: ")) << Notes(r);
  EXPECT_TRUE(absl::StrContains(Notes(r), "snapshot: ")) << Notes(r);
  // vPIC's shape, filled from the snapshot; nothing of the provenance in it.
  const Json want = Fixture("decode-vin.json");
  const Json got = Body(r);
  EXPECT_EQ(KeysOf(got), KeysOf(want));
  ASSERT_EQ(got["Results"].size(), 1u);
  EXPECT_EQ(KeysOf(got["Results"][0]), KeysOf(want["Results"][0]))
      << "every variable, in vPIC's order";
  EXPECT_EQ(got["Results"][0]["Make"], "FORD");
  EXPECT_EQ(got["Results"][0]["VIN"], kFord);
  EXPECT_FALSE(absl::StrContains(r.body, "snapshot")) << r.body;
}

TEST_F(HttpGatewayTest, AStaleEntryAnswersWhenVpicFailsAndSaysSo) {
  ServerOptions o = Defaults();
  // Every entry is past its freshness at once (any later look is older
  // than a nanosecond), and kept as stale for the default 30 days.
  o.engine.cache_ttl = absl::Nanoseconds(1);
  o.engine.max_attempts = 1;
  o.engine.breaker.failures = 0;
  StartHttp(o);
  const std::string path =
      absl::StrCat("/api/vehicles/DecodeVinValues/", kFord, "?format=json");
  const HttpResponse fresh = Get(path);
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  EXPECT_EQ(fresh.Header("X-Vin-Source"), "vpic");

  // vPIC healthy: a stale entry does not answer; the decode goes live.
  const HttpResponse again = Get(path);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Header("X-Vin-Source"), "vpic");
  EXPECT_EQ(fake_->TotalRequests(), 2);

  // vPIC fails: the live attempt is made, then the stale entry answers.
  Script(kFord, "503");
  const HttpResponse stale = Get(path);
  ASSERT_EQ(stale.status, 200) << stale.body;
  EXPECT_EQ(fake_->TotalRequests(), 3) << "live first";
  EXPECT_EQ(stale.Header("X-Vin-Source"), "cache");
  EXPECT_EQ(stale.Header("X-Vin-Stale"), "true");
  EXPECT_EQ(stale.Header("Cache-Control"), "no-cache");
  EXPECT_TRUE(absl::StrContains(Notes(stale), "stale: ")) << Notes(stale);
  EXPECT_EQ(Body(stale)["Results"][0], Body(again)["Results"][0])
      << "the real answer vPIC gave, in its shape";
  EXPECT_EQ(Body(stale)["Results"][0]["Make"], "FORD");
}

TEST_F(HttpGatewayTest, ConnectionsOverAClientsShareAre429AndNeverReachTheEngine) {
  ServerOptions o = Defaults();
  o.http.max_connections_per_client = 2;
  StartHttp(o, /*head_timeout=*/absl::Seconds(30));
  // Two idle connections take this client's share (accepted in order,
  // before the third).
  const int a = testing_util::RawSend(port_, "");
  const int b = testing_util::RawSend(port_, "");
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  const std::string get =
      absl::StrCat("GET /api/vehicles/DecodeVinValues/", ValidVin(61),
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string refused = RawExchange(port_, get, absl::Seconds(10));
  EXPECT_EQ(RawStatus(refused), 429) << refused;
  EXPECT_TRUE(absl::StrContains(refused, "too many connections from 127.0.0.1 "
                                         "(at most 2)"))
      << refused;
  EXPECT_TRUE(absl::StrContains(refused, "Retry-After: 1")) << refused;
  EXPECT_EQ(fake_->TotalRequests(), 0);
  EXPECT_EQ(server_->engine().Stats().waiters, 0u);
  // One of them leaves: its place is given back (when the server has seen
  // it go), and a request is served again.
  ::close(a);
  int status = 0;
  testing_util::Eventually(
      [&] {
        status = RawStatus(RawExchange(
            port_,
            absl::StrCat(
                "GET /api/vehicles/DecodeVinValues/", ValidVin(61),
                " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")));
        return status != 429;  // 429: the closed connection not seen yet
      },
      absl::Seconds(20));
  ASSERT_TRUE(status == 200 || status == 429) << status;
  EXPECT_EQ(status, 200);
  ::close(b);
}

TEST_F(HttpGatewayTest, ABodyThatDoesNotArriveInTimeIs408) {
  ServerOptions o = Defaults();
  o.http.body_timeout = absl::Milliseconds(300);
  StartHttp(o);
  // The head promises 100 bytes; 8 come, then nothing.
  const std::string answer =
      RawExchange(port_,
                  "POST /v1/decode HTTP/1.1\r\nHost: "
                  "127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Content-Length: 100\r\n\r\n{\"vin\": ",
                  absl::Seconds(10));
  EXPECT_EQ(RawStatus(answer), 408) << answer;
  EXPECT_TRUE(absl::StrContains(answer, "the request body did not arrive within 300ms"))
      << answer;
  EXPECT_EQ(server_->engine().Stats().waiters, 0u);
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

// /v1/decode:batch whose body stops arriving, or stops being valid HTTP:
// the lines read are answered, and the stream's last line says that the
// rest was not read (a stream that just ended would look whole).
TEST_F(HttpGatewayTest, AStreamWhoseBodyIsCutShortEndsWithAnErrorLine) {
  ServerOptions o = Defaults();
  o.http.body_timeout = absl::Milliseconds(300);
  StartHttp(o);
  const std::string head =
      "POST /v1/decode:batch HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  const std::string lines = "{\"vin\":\"BAD1\"}\n{\"vin\":\"BAD2\"}\n";
  const std::string chunk =
      absl::StrCat(absl::Hex(lines.size()), "\r\n", lines, "\r\n");
  struct Case {
    std::string name, after, says;
  };
  for (const Case& c : std::vector<Case>{
           {"stalled", "", "\"reason\":\"REQUEST_TIMEOUT\""},
           {"a bad chunk", "zz\r\nnot hex\r\n",
            "\"reason\":\"MALFORMED_REQUEST\""},
       }) {
    const std::string answer =
        RawExchange(port_, head + chunk + c.after, absl::Seconds(10));
    EXPECT_EQ(RawStatus(answer), 200) << c.name << ": " << answer;
    std::vector<std::string> events;
    for (absl::string_view l : absl::StrSplit(answer, '\n')) {
      if (absl::StartsWith(l, "{")) events.emplace_back(l);
    }
    ASSERT_FALSE(events.empty()) << c.name << ": " << answer;
    int failed = 0;
    for (const std::string& e : events) {
      failed += absl::StrContains(e, "INVALID_VIN") ? 1 : 0;
    }
    EXPECT_EQ(failed, 2) << c.name << ": both lines read are answered";
    // The last line: {"error": a google.rpc.Status with its ErrorInfo}.
    EXPECT_THAT(events.back(), testing::StartsWith("{\"error\":{\"code\":"))
        << c.name;
    EXPECT_THAT(events.back(), HasSubstr(c.says)) << c.name;
    EXPECT_THAT(events.back(),
                HasSubstr("the 2 items read before are answered above, the "
                          "rest of the body was not read"))
        << c.name;
    EXPECT_TRUE(absl::EndsWith(answer, "0\r\n\r\n")) << c.name << ": " << answer;
  }
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

}  // namespace
}  // namespace server
