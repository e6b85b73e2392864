// A request's head believed only as far as it has proved itself (DESIGN
// rule 19), attacked on the real binary: framing tricks that would make
// one connection carry two requests, a cross-site POST from a page of
// another site, a foreign Host (DNS rebinding), an error after a HEAD, and
// a model-year hint the VIN contradicts.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "attack/attack_fixture.h"
#include "gmock/gmock.h"
#include "testing/vin_gen.h"

namespace attack {
namespace {

using testing::HasSubstr;
using testing_util::HttpCall;
using testing_util::RawExchange;
using testing_util::RawStatus;
using testing_util::ValidVin;

// How many responses `raw` holds (status lines at the start of a line).
int Responses(const std::string& raw) {
  int n = 0;
  for (size_t at = 0; (at = raw.find("HTTP/1.1 ", at)) != std::string::npos;
       at += 9) {
    n += (at == 0 || raw[at - 1] == '\n') ? 1 : 0;
  }
  return n;
}

class AttackHeadersTest : public AttackTest {};

// Boost's parser alone takes "identity" with a Content-Length, and reads
// the body of "chunked, identity" or "xchunked" as a second request: one
// connection, two answers, the second to bytes no proxy in front saw as a
// request. Each is one 400, and the connection closed.
TEST_F(AttackHeadersTest, TransferEncodingTricksAreOne400AndAClose) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string decode = absl::StrCat("{\"vin\":\"", kFord, "\"}");
  const std::string smuggled =
      absl::StrCat("GET /api/vehicles/DecodeVinValues/", ValidVin(5),
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const struct {
    const char* name;
    std::string headers;
    std::string body;
  } cases[] = {
      {"identity with a length",
       absl::StrCat("Transfer-Encoding: identity\r\nContent-Length: ",
                    decode.size(), "\r\n"),
       decode},
      {"chunked, identity", "Transfer-Encoding: chunked, identity\r\n",
       smuggled},
      {"xchunked", "Transfer-Encoding: xchunked\r\n", smuggled},
      {"two lines",
       "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
       smuggled},
      {"length then chunked",
       absl::StrCat("Content-Length: ", smuggled.size(),
                    "\r\nTransfer-Encoding: chunked\r\n"),
       smuggled},
      {"chunked then length",
       absl::StrCat("Transfer-Encoding: chunked\r\nContent-Length: ",
                    smuggled.size(), "\r\n"),
       smuggled},
      {"two lengths",
       absl::StrCat("Content-Length: ", decode.size(),
                    "\r\nContent-Length: ", decode.size(), "\r\n"),
       decode},
  };
  for (const auto& c : cases) {
    const std::string raw =
        RawExchange(server_.http_port(),
                    Head("POST", "/v1/decode",
                         c.headers + "Content-Type: application/json\r\n") +
                        c.body,
                    absl::Seconds(10));
    EXPECT_EQ(RawStatus(raw), 400) << c.name << ": " << raw;
    EXPECT_EQ(Responses(raw), 1) << c.name << ": " << raw;
    // Named: the gateway's own check, or Boost's parser for what it
    // refuses itself (a length with chunked, two Transfer-Encoding lines).
    const std::string body = raw.substr(raw.find("\r\n\r\n") + 4);
    EXPECT_THAT(body, testing::AnyOf(HasSubstr("Transfer-Encoding"),
                                     HasSubstr("Content-Length")))
        << c.name;
    EXPECT_THAT(raw, HasSubstr("Connection: close")) << c.name;
  }
  EXPECT_EQ(fake_->TotalRequests(), 0) << "nothing reached vPIC";
  // Plain chunked is served.
  const std::string chunked = RawExchange(
      server_.http_port(), Head("POST", "/v1/decode",
                                "Transfer-Encoding: chunked\r\nContent-Type: "
                                "application/json\r\nConnection: close\r\n") +
                               absl::StrCat(absl::Hex(decode.size()), "\r\n",
                                            decode, "\r\n0\r\n\r\n"));
  EXPECT_EQ(RawStatus(chunked), 200) << chunked;
}

// After a HEAD on a keep-alive connection, an error answer to the next
// request (a malformed one, or one whose head is too large) still carries
// the body its Content-Length announces.
TEST_F(AttackHeadersTest, AnErrorAfterAHeadCarriesItsBody) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (const std::string& next :
       {std::string("GARBAGE\r\n\r\n"),
        Head("GET", "/",
             absl::StrCat("X-Pad: ", std::string(20000, 'x'), "\r\n"))}) {
    const std::string raw = RawExchange(
        server_.http_port(),
        Head("HEAD", absl::StrCat("/api/vehicles/DecodeVinValues/", kFord)) +
            next,
        absl::Seconds(10));
    ASSERT_EQ(Responses(raw), 2) << raw;
    const size_t second = raw.find("HTTP/1.1 ", 1);
    const std::string answer = raw.substr(second);
    EXPECT_TRUE(RawStatus(answer) == 400 || RawStatus(answer) == 431) << answer;
    const size_t cl = answer.find("Content-Length: ");
    const size_t end = answer.find("\r\n\r\n");
    ASSERT_NE(cl, std::string::npos);
    ASSERT_NE(end, std::string::npos);
    size_t length = 0;
    ASSERT_TRUE(absl::SimpleAtoi(
        answer.substr(cl + 16, answer.find("\r\n", cl) - cl - 16), &length));
    EXPECT_GT(length, 0u);
    EXPECT_EQ(answer.size() - end - 4, length)
        << "the body its length announces: " << answer;
  }
}

// A page of another site POSTs text/plain (no preflight) to /v1/decode:
// its browser sends Origin, and the gateway refuses it before anything
// runs. curl and server-side clients send none and are served; so is the
// gateway's own page.
TEST_F(AttackHeadersTest, ACrossSitePostIs403AndNothingRuns) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string body = absl::StrCat("{\"vin\":\"", kFord, "\"}");
  const auto refused =
      HttpCall(server_.http_port(), "POST", "/v1/decode", body,
               {"Content-Type: text/plain", "Origin: https://evil.example"});
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_THAT(refused.body,
              HasSubstr("origin https://evil.example may not call"));
  EXPECT_EQ(fake_->TotalRequests(), 0) << "no upstream request";
  const auto stream = HttpCall(server_.http_port(), "POST", "/v1/decode:batch",
                               body, {"Origin: null"});
  EXPECT_EQ(stream.status, 403) << stream.body;
  EXPECT_EQ(fake_->TotalRequests(), 0);

  const auto curl = HttpCall(server_.http_port(), "POST", "/v1/decode", body,
                             {"Content-Type: text/plain"});
  EXPECT_EQ(curl.status, 200) << curl.body;
  EXPECT_EQ(fake_->TotalRequests(), 1);
  const auto own = HttpCall(
      server_.http_port(), "POST", "/v1/decode", body,
      {"Content-Type: application/json",
       absl::StrCat("Origin: http://127.0.0.1:", server_.http_port())});
  EXPECT_EQ(own.status, 200) << own.body;
}

// DNS rebinding: a name of the attacker's, pointed at 127.0.0.1 after the
// page loaded, reaches the loopback listener with that name in Host.
TEST_F(AttackHeadersTest, AForeignHostOnALoopbackListenerIs421) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string path =
      absl::StrCat("/api/vehicles/DecodeVinValues/", kFord);
  const std::string rebound = RawExchange(
      server_.http_port(),
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: rebind.evil.example:",
                   server_.http_port(), "\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(RawStatus(rebound), 421) << rebound;
  EXPECT_THAT(rebound,
              HasSubstr("host rebind.evil.example is not served here"));
  EXPECT_EQ(fake_->TotalRequests(), 0);
  for (const std::string host :
       {absl::StrCat("localhost:", server_.http_port()),
        std::string("127.0.0.1"), absl::StrCat("[::1]:", server_.http_port()),
        std::string("app.localhost")}) {
    const std::string ok =
        RawExchange(server_.http_port(),
                    absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", host,
                                 "\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(RawStatus(ok), 200) << host << ": " << ok;
  }
  // Two Hosts, an allowed one first: a proxy routing on the second would
  // see another site than the one checked. 400, closed, nothing sent.
  const int sent_before = fake_->TotalRequests();
  const std::string twice = RawExchange(
      server_.http_port(),
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                   "Host: rebind.evil.example\r\n\r\n"));
  EXPECT_EQ(RawStatus(twice), 400) << twice;
  EXPECT_THAT(twice, HasSubstr("this has several"));
  EXPECT_EQ(fake_->TotalRequests(), sent_before);
}

TEST_F(AttackHeadersTest, TheAllowedHostsAreTheOperatorsWhenNamed) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer({"--http_allowed_hosts=vin.example.com,*.corp.example"}));
  const std::string path =
      absl::StrCat("/api/vehicles/DecodeVinValues/", kFord);
  auto status_for = [&](const std::string& host) {
    return RawStatus(
        RawExchange(server_.http_port(),
                    absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", host,
                                 "\r\nConnection: close\r\n\r\n")));
  };
  EXPECT_EQ(status_for("vin.example.com"), 200);
  EXPECT_EQ(status_for("VIN.example.com:443"), 200);
  EXPECT_EQ(status_for("a.corp.example"), 200);
  EXPECT_EQ(status_for("127.0.0.1"), 421);
  EXPECT_EQ(status_for("evil.example"), 421);
}

// One VIN asked with 121 model years, over HTTP and gRPC alike: position 10
// allows at most two of them between 1980 and next year + 1, and only those
// reach vPIC; the others are refused naming the years the VIN allows.
TEST_F(AttackHeadersTest, AHundredAndTwentyOneModelYearsCostAtMostTwoRequests) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string vin = kFord;  // position 10 'M': 1991 or 2021
  int http_ok = 0, grpc_ok = 0;
  for (int year = 1980; year <= 2100; ++year) {
    const auto r = HttpCall(server_.http_port(), "GET",
                            absl::StrCat("/api/vehicles/DecodeVinValues/", vin,
                                         "?format=json&modelyear=", year));
    if (r.status == 200) {
      ++http_ok;
    } else {
      EXPECT_EQ(r.status, 400) << year;
      EXPECT_THAT(r.body, HasSubstr("stands for 1991 or 2021")) << year;
    }
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    req.set_model_year(year);
    vin::v1::DecodeResponse resp;
    const grpc::Status s = server_.Decode(req, &resp);
    if (s.ok()) {
      ++grpc_ok;
    } else {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << year;
      EXPECT_THAT(s.error_message(), HasSubstr("1991 or 2021")) << year;
    }
  }
  EXPECT_EQ(http_ok, 2);
  EXPECT_EQ(grpc_ok, 2);
  EXPECT_LE(fake_->RequestCount(vin), 2)
      << "one upstream request per year the VIN allows";
}

}  // namespace
}  // namespace attack
