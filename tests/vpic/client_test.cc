// The libcurl multi client against the fake vPIC over loopback HTTP.
#include "vpic/client.h"

#include <memory>
#include <vector>

#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"

namespace vpic {
namespace {

using fakevpic::FakeVpic;
using fakevpic::Step;

constexpr char kFord[] = "1FTMW1T88MFA00001";

class ClientTest : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
    client_ = MakeClient(fake_->base_url(), absl::Milliseconds(500));
  }

  static std::unique_ptr<Client> MakeClient(const std::string& base,
                                            absl::Duration timeout) {
    auto c = Client::Create({base, timeout, "test"});
    EXPECT_TRUE(c.ok()) << c.status();
    return *std::move(c);
  }

  // Runs one request to completion by driving Poll.
  HttpResult Fetch(Client& c, const std::string& vin, int model_year = 0) {
    bool done = false;
    HttpResult out;
    c.Start(vin, model_year, [&](HttpResult r) {
      out = std::move(r);
      done = true;
    });
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (!done && absl::Now() < give_up) c.Poll(absl::Milliseconds(100));
    EXPECT_TRUE(done);
    return out;
  }

  void Script(const std::string& vin, const std::string& steps) {
    auto s = Step::ParseList(steps);
    ASSERT_TRUE(s.ok());
    fake_->Script(vin, *s);
  }

  std::unique_ptr<FakeVpic> fake_;
  std::unique_ptr<Client> client_;
};

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

TEST_F(ClientTest, ReportsStatusAndRetryAfter) {
  Script(kFord, "429:7");
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kOk);
  EXPECT_EQ(r.http_status, 429);
  EXPECT_EQ(r.retry_after, "7");
}

TEST_F(ClientTest, ResetIsATransportReset) {
  Script(kFord, "reset");
  HttpResult r = Fetch(*client_, kFord);
  EXPECT_EQ(r.transport, Transport::kReset) << r.transport_message;
  EXPECT_EQ(r.http_status, 0);
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
  while (fake_->TotalRequests() == 0) client_->Poll(absl::Milliseconds(50));
  client_->Cancel(id);
  EXPECT_EQ(client_->active(), 0u);
  EXPECT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)));
  client_->Poll(absl::ZeroDuration());
  EXPECT_FALSE(called);
}

TEST_F(ClientTest, ManyConcurrentTransfers) {
  int done = 0;
  for (int i = 0; i < 40; ++i) {
    client_->Start(kFord, 2000 + i, [&](HttpResult r) {
      EXPECT_EQ(r.http_status, 200);
      ++done;
    });
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (done < 40 && absl::Now() < give_up) client_->Poll(absl::Milliseconds(100));
  EXPECT_EQ(done, 40);
  EXPECT_EQ(fake_->TotalRequests(), 40);
}

}  // namespace
}  // namespace vpic
