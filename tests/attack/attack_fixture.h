// The fixture of the attack tests (DESIGN rule 19, README "Security"): the
// real vin-server binary in front of the fake vPIC, attacked over loopback
// as a careless or hostile caller would, asserting what a hardened server
// does.
#ifndef VIN_TESTS_ATTACK_ATTACK_FIXTURE_H_
#define VIN_TESTS_ATTACK_ATTACK_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "testing/http_client.h"
#include "testing/real_server.h"
#include "testing/scrape.h"
#include "testing/test_certs.h"

namespace attack {

inline constexpr char kFord[] = "1FTMW1T88MFA00001";

class AttackTest : public testing::Test {
 protected:
  // Starts the fake vPIC and the server with `flags` (behind `prefix`).
  void StartServer(const std::vector<std::string>& flags = {},
                   const std::vector<std::string>& prefix = {}) {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
    std::vector<std::string> all = {"--vpic_base_url=" + fake_->base_url()};
    all.insert(all.end(), flags.begin(), flags.end());
    ASSERT_TRUE(server_.Start(all, prefix)) << "vin-server did not start";
  }

  // The request head of `method` `path` to the gateway, with `extra`
  // header lines ("Name: value\r\n" each).
  std::string Head(const std::string& method, const std::string& path,
                   const std::string& extra = "") const {
    return absl::StrCat(method, " ", path,
                        " HTTP/1.1\r\nHost: 127.0.0.1:", server_.http_port(),
                        "\r\n", extra, "\r\n");
  }

  // One /metrics scrape's samples.
  testing_util::Samples Scrape(std::string* text = nullptr) {
    std::string body;
    EXPECT_EQ(testing_util::HttpGet(server_.metrics_port(), "/metrics", &body),
              200);
    if (text != nullptr) *text = body;
    return testing_util::ParseSamples(body);
  }

  std::unique_ptr<fakevpic::FakeVpic> fake_;
  testing_util::RealServer server_;
};

// With certificates made for the test (testing/test_certs.h).
class AttackWithCertsTest : public AttackTest {
 protected:
  void SetUp() override {
    certs_ = testing_util::MakeTestCerts();
    ASSERT_FALSE(certs_.ca.empty());
  }
  void TearDown() override { testing_util::RemoveTestCerts(certs_); }

  testing_util::TestCerts certs_;
};

}  // namespace attack

#endif  // VIN_TESTS_ATTACK_ATTACK_FIXTURE_H_
