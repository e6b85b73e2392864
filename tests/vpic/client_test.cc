// The libcurl multi client against the fake vPIC over loopback HTTP: single
// requests (DecodeVinValues). Batches: client_batch_test.cc; the fixture is
// in client_test_fixture.h.
#include "vpic/client.h"

#include <memory>
#include <vector>

#include <curl/curl.h>

#include "absl/strings/str_cat.h"
#include "client_test_fixture.h"
#include "fake_vpic/fake_vpic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vpic {
namespace {

using fakevpic::FakeVpic;
using fakevpic::Step;

TEST(DecodeVinValuesUrl, Shape) {
  EXPECT_EQ(DecodeVinValuesUrl("https://h/api/vehicles", "1FTMW1T88MFA00001", 0),
            "https://h/api/vehicles/DecodeVinValues/1FTMW1T88MFA00001?format=json");
  EXPECT_EQ(DecodeVinValuesUrl("https://h/api/vehicles/", "1FTMW1T88MFA00001", 2021),
            "https://h/api/vehicles/DecodeVinValues/1FTMW1T88MFA00001"
            "?format=json&modelyear=2021");
}

TEST(ClientCreate, RejectsBadBaseUrl) {
  EXPECT_EQ(Client::Create({"vpic.example/api", absl::Seconds(1), "t"})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ClientTest, FetchesTheAnswerAndSendsTheModelYear) {
  HttpResult r = Fetch(*client_, kFord, 2021);
  EXPECT_EQ(r.transport, Transport::kOk);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_NE(r.body.find("F-150"), std::string::npos);
  auto log = fake_->RequestsFor(kFord);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].model_year, 2021);
}

TEST_F(ClientTest, AGzipAnswerDecodesToTheSameVehicleAsThePlainOne) {
  HttpResult gzipped = Fetch(*client_, kFord, 2021);
  ASSERT_EQ(gzipped.http_status, 200) << gzipped.transport_message;
  auto log = fake_->RequestsFor(kFord);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_THAT(log[0].accept_encoding, testing::HasSubstr("gzip"))
      << "the client offers gzip";
  EXPECT_TRUE(log[0].gzipped) << "and the fake took it up";
  // The same request to a server that never compresses.
  fakevpic::Options never;
  never.gzip = false;
  auto plain_fake = FakeVpic::Start(never);
  ASSERT_TRUE(plain_fake.ok()) << plain_fake.status();
  auto plain_client = MakeClient((*plain_fake)->base_url(), absl::Seconds(2));
  HttpResult plain = Fetch(*plain_client, kFord, 2021);
  ASSERT_EQ(plain.http_status, 200) << plain.transport_message;
  ASSERT_EQ((*plain_fake)->Requests().size(), 1u);
  EXPECT_FALSE((*plain_fake)->Requests()[0].gzipped);
  EXPECT_EQ(gzipped.body, plain.body) << "the client hands on decoded bytes";
  const Outcome a = Classify(gzipped, absl::Now());
  const Outcome b = Classify(plain, absl::Now());
  ASSERT_EQ(a.verdict, Outcome::Verdict::kDecoded) << a.error.message;
  ASSERT_EQ(b.verdict, Outcome::Verdict::kDecoded) << b.error.message;
  EXPECT_EQ(a.decoded.vehicle.make, "FORD");
  EXPECT_EQ(a.decoded.vehicle.model, "F-150");
  EXPECT_EQ(a.decoded.vehicle.model_year, 2021);
  EXPECT_EQ(a.decoded.vehicle.attributes, b.decoded.vehicle.attributes);
  EXPECT_EQ(a.decoded.notes, b.decoded.notes);
}

TEST_F(ClientTest, ACorruptGzipBodyIsARetryableFailureNotADecode) {
  // Labelled gzip, but the bytes are the plain (decodable) JSON answer.
  Script(kFord, "badgzip");
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kBadEncoding)
      << "body: " << r.body.substr(0, 80);
  EXPECT_EQ(r.http_status, 200);
  const Outcome o = Classify(r, absl::Now());
  EXPECT_EQ(o.verdict, Outcome::Verdict::kRetry);
  EXPECT_EQ(o.error.kind, "bad_response");
  EXPECT_EQ(o.error.http_status, 200);
  EXPECT_THAT(o.error.message, testing::HasSubstr("content unencoding"));
  EXPECT_EQ(fake_->RequestCount(kFord), 1) << "libcurl did not re-send it";
  EXPECT_EQ(Fetch(*client_, kFord).http_status, 200) << "the client goes on";
}

TEST_F(ClientTest, ReportsStatusAndRetryAfter) {
  Script(kFord, "429:7");
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kOk);
  EXPECT_EQ(r.http_status, 429);
  EXPECT_EQ(r.retry_after, "7");
}

TEST_F(ClientTest, AMaintenancePageWithRetryAfterIsARetryThatWaits) {
  Script(kFord, "html:3,html");
  HttpResult r = Fetch(*client_, kFord);
  ASSERT_EQ(r.transport, Transport::kOk) << r.transport_message;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.retry_after, "3");
  Outcome o = Classify(r, absl::Now());
  EXPECT_EQ(o.verdict, Outcome::Verdict::kRetry);
  EXPECT_EQ(o.error.kind, "bad_response");
  EXPECT_EQ(o.retry_after, absl::Seconds(3));
  // Plain "html" still sends no Retry-After.
  o = Classify(Fetch(*client_, kFord), absl::Now());
  EXPECT_EQ(o.verdict, Outcome::Verdict::kRetry);
  EXPECT_EQ(o.retry_after, absl::nullopt);
}

TEST_F(ClientTest, ResetIsATransportReset) {
  Script(kFord, "reset");
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kReset) << r.transport_message;
  EXPECT_EQ(r.http_status, 0);
}

TEST_F(ClientTest, ARequestLibcurlSendsAgainByItselfIsCounted) {
  // A first transfer leaves its connection open; the next one goes on it,
  // and the fake resets it without an answer byte. libcurl then sends the
  // request again on a fresh connection by itself, and reports one success:
  // vPIC was asked twice for one transfer.
  HttpResult first = Fetch(*client_, kFord);
  ASSERT_EQ(first.transport, Transport::kOk) << first.transport_message;
  EXPECT_EQ(first.requests_sent, 1);
  const std::string vin = "1HGCM82633A004352";
  Script(vin, "reset");
  HttpResult r = Fetch(*client_, vin);
  EXPECT_EQ(r.transport, Transport::kOk) << r.transport_message;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(fake_->RequestCount(vin), 2) << "the reset one and the re-sent one";
  EXPECT_EQ(r.requests_sent, 2) << "both are counted";
}

TEST_F(ClientTest, HangEndsAtTheAttemptTimeout) {
  Script(kFord, "hang");
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kTimeout) << r.transport_message;
  EXPECT_EQ(r.http_status, 0);
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(ClientTest, RefusedConnectionIsAConnectFailure) {
  const std::string base = fake_->base_url();
  fake_.reset();  // nothing listens there any more
  auto c = MakeClient(base, absl::Seconds(2));
  HttpResult r = Fetch(*c, kFord);
  EXPECT_EQ(r.transport, Transport::kConnect) << r.transport_message;
}

TEST_F(ClientTest, CancelledTransferNeverCallsBack) {
  Script(kFord, "hang");
  bool called = false;
  const auto id = client_->Start(kFord, 0, [&](HttpResult) { called = true; });
  while (fake_->TotalRequests() == 0) loop_->RunOnce(absl::Milliseconds(50));
  client_->Cancel(id);
  EXPECT_EQ(client_->active(), 0u);
  EXPECT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)));
  loop_->RunOnce(absl::ZeroDuration());
  EXPECT_FALSE(called);
}

TEST_F(ClientTest, ManyConcurrentTransfers) {
  // Forty at once take ~450 ms in a TSan build alone, more beside another
  // test: time enough (the fixture's client gives up after 500 ms).
  client_ = MakeClient(fake_->base_url(), absl::Seconds(20));
  int done = 0;
  for (int i = 0; i < 40; ++i) {
    client_->Start(kFord, 2000 + i, [&](HttpResult r) {
      EXPECT_EQ(r.http_status, 200);
      ++done;
    });
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (done < 40 && absl::Now() < give_up) loop_->RunOnce(absl::Milliseconds(100));
  EXPECT_EQ(done, 40);
  EXPECT_EQ(fake_->TotalRequests(), 40);
}

TEST_F(ClientTest, ABodyOverTheLimitIsAbandonedAsABadResponse) {
  Script(kFord, "huge,ok");
  // Time enough for the fake to send 2 MiB also in a sanitizer build (the
  // fixture's client gives up after 500 ms: a timeout, not this test).
  client_ = MakeClient(fake_->base_url(), absl::Seconds(20));
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kTooLarge);
  EXPECT_THAT(r.transport_message, testing::HasSubstr("1048576 bytes"));
  const Outcome o = Classify(r, absl::Now());
  EXPECT_EQ(o.verdict, Outcome::Verdict::kRetry);
  EXPECT_EQ(o.error.kind, "bad_response");
  EXPECT_EQ(Fetch(*client_, kFord).http_status, 200) << "the client goes on";
}

TEST_F(ClientTest, RedirectsAreFollowedOnlyToHttp) {
  Script(kFord, absl::StrCat("redirect:", fake_->base_url(),
                             "/DecodeVinValues/1HGCM82633A004352?format=json"));
  HttpResult r = Fetch(*client_, kFord);
  ASSERT_EQ(r.http_status, 200) << r.transport_message;
  EXPECT_EQ(fake_->RequestCount("1HGCM82633A004352"), 1) << "followed";
  Script(kFord, "redirect:file:///etc/passwd");
  r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kFatal) << r.transport_message;
  EXPECT_EQ(Classify(r, absl::Now()).verdict, Outcome::Verdict::kReject);
  Script(kFord, "redirect:ftp://127.0.0.1/x");
  EXPECT_EQ(Fetch(*client_, kFord).transport, Transport::kFatal);
}

TEST_F(ClientTest, ARefusedAddFailsRetryableInTheNextTurnAndFreesItsPlace) {
  int refuse = 2;  // the loop thread is this thread: no atomics needed
  auto c = Client::Create(
      {fake_->base_url(), absl::Seconds(2), "test", 1 << 20,
       [&refuse](void* multi, void* easy) {
         if (refuse-- > 0) return static_cast<int>(CURLM_OUT_OF_MEMORY);
         return static_cast<int>(curl_multi_add_handle(
             static_cast<CURLM*>(multi), static_cast<CURL*>(easy)));
       }});
  ASSERT_TRUE(c.ok()) << c.status();
  (*c)->Attach(loop_.get());
  std::vector<HttpResult> results;
  (*c)->Start(kFord, 0, [&](HttpResult r) { results.push_back(std::move(r)); });
  (*c)->Start(kFord, 0, [&](HttpResult r) { results.push_back(std::move(r)); });
  EXPECT_EQ((*c)->active(), 2u) << "counted until their callbacks run";
  EXPECT_TRUE(results.empty()) << "callbacks run in a later turn of the loop, never inside Start()";
  // One turn with a long timeout delivers both without waiting it out.
  const absl::Time before = absl::Now();
  loop_->RunOnce(absl::Seconds(60));
  EXPECT_LT(absl::Now() - before, absl::Seconds(30));
  ASSERT_EQ(results.size(), 2u);
  for (const HttpResult& r : results) {
    EXPECT_EQ(r.transport, Transport::kOther);
    EXPECT_EQ(r.http_status, 0);
    EXPECT_THAT(r.transport_message,
                testing::HasSubstr("could not start the request "
                                   "(curl_multi_add_handle: Out of memory)"));
    const Outcome o = Classify(r, absl::Now());
    EXPECT_EQ(o.verdict, Outcome::Verdict::kRetry);
    EXPECT_EQ(o.error.kind, "transport");
  }
  EXPECT_EQ((*c)->active(), 0u) << "no place is kept by a refused request";
  EXPECT_EQ(fake_->TotalRequests(), 0);
  // A refused request that is cancelled never calls back.
  refuse = 1;
  bool called = false;
  const auto id = (*c)->Start(kFord, 0, [&](HttpResult) { called = true; });
  (*c)->Cancel(id);
  EXPECT_EQ((*c)->active(), 0u);
  loop_->RunOnce(absl::ZeroDuration());
  EXPECT_FALSE(called);
  EXPECT_EQ(Fetch(**c, kFord).http_status, 200) << "the client goes on";
}

TEST(TransportOf, EveryCurlCodeIsClassifiedOnPurpose) {
  struct Case {
    int code;
    Transport want;
  } cases[] = {
      {CURLE_OK, Transport::kOk},
      {CURLE_COULDNT_CONNECT, Transport::kConnect},
      {CURLE_COULDNT_RESOLVE_HOST, Transport::kConnect},
      {CURLE_PROXY, Transport::kConnect},
      {CURLE_OPERATION_TIMEDOUT, Transport::kTimeout},
      {CURLE_RECV_ERROR, Transport::kReset},
      {CURLE_GOT_NOTHING, Transport::kReset},
      {CURLE_WEIRD_SERVER_REPLY, Transport::kReset},
      {CURLE_BAD_CONTENT_ENCODING, Transport::kBadEncoding},
      {CURLE_HTTP2_STREAM, Transport::kReset},
      {CURLE_FILESIZE_EXCEEDED, Transport::kTooLarge},
      {CURLE_UNSUPPORTED_PROTOCOL, Transport::kFatal},
      {CURLE_URL_MALFORMAT, Transport::kFatal},
      {CURLE_TOO_MANY_REDIRECTS, Transport::kFatal},
      {CURLE_PEER_FAILED_VERIFICATION, Transport::kFatal},
      {CURLE_SSL_CACERT_BADFILE, Transport::kFatal},
      {CURLE_OUT_OF_MEMORY, Transport::kOther},
      {CURLE_WRITE_ERROR, Transport::kOther},
      {CURLE_TFTP_NOTFOUND, Transport::kOther},
      {9999, Transport::kOther},  // newer than this libcurl
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TransportOf(c.code), c.want) << "CURLcode " << c.code;
  }
  // kOther is retried; only kFatal is final.
  HttpResult other;
  other.transport = Transport::kOther;
  EXPECT_EQ(Classify(other, absl::Now()).verdict, Outcome::Verdict::kRetry);
  EXPECT_EQ(Classify(other, absl::Now()).error.kind, "transport");
}

}  // namespace
}  // namespace vpic
