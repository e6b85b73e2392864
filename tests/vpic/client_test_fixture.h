// The fixture of the libcurl multi client's tests against the fake vPIC
// over loopback HTTP (client_test.cc, client_batch_test.cc): a client on
// an event loop of the test's, driven until each request is answered.
#ifndef VIN_TESTS_VPIC_CLIENT_TEST_FIXTURE_H_
#define VIN_TESTS_VPIC_CLIENT_TEST_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>

#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "loop/event_loop.h"
#include "vpic/client.h"

namespace vpic {

constexpr char kFord[] = "1FTMW1T88MFA00001";

class ClientTest : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
    client_ = MakeClient(fake_->base_url(), absl::Milliseconds(500));
  }

  std::unique_ptr<Client> MakeClient(const std::string& base,
                                     absl::Duration timeout) {
    auto c = Client::Create({base, timeout, "test"});
    EXPECT_TRUE(c.ok()) << c.status();
    (*c)->Attach(loop_.get());
    return *std::move(c);
  }

  static std::unique_ptr<loop::EventLoop> MakeLoop() {
    auto loop = loop::EventLoop::Create();
    EXPECT_TRUE(loop.ok()) << loop.status();
    return *std::move(loop);
  }

  // Runs one request to completion by driving the loop.
  HttpResult Fetch(Client& c, const std::string& vin, int model_year = 0) {
    bool done = false;
    HttpResult out;
    c.Start(vin, model_year, [&](HttpResult r) {
      out = std::move(r);
      done = true;
    });
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (!done && absl::Now() < give_up) loop_->RunOnce(absl::Milliseconds(100));
    EXPECT_TRUE(done);
    return out;
  }

  void Script(const std::string& vin, const std::string& steps) {
    auto s = fakevpic::Step::ParseList(steps);
    ASSERT_TRUE(s.ok());
    fake_->Script(vin, *s);
  }

  std::unique_ptr<fakevpic::FakeVpic> fake_;
  // The client's sockets and timer are the loop's: it outlives the client.
  std::unique_ptr<loop::EventLoop> loop_ = MakeLoop();
  std::unique_ptr<Client> client_;
};

}  // namespace vpic

#endif  // VIN_TESTS_VPIC_CLIENT_TEST_FIXTURE_H_
