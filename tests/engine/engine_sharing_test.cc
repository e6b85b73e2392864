// The engine against the fake vPIC: concurrent callers sharing one flight
// (the one real-HTTP test of rule 5) and the bounded upstream slots. Rules
// 5 and 8 in full (joining, leaving, the cache), on a fake clock:
// engine_rules_test.cc.
#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine_test_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"
#include "testing/vin_gen.h"
#include "vpic/client.h"

namespace engine {
namespace {

using testing_util::RecordingListener;

TEST_F(EngineTest, ConcurrentCallersShareOneFlight) {
  MakeEngine();
  fake_->Script(kHonda, Steps("delay:300ms"));
  std::vector<std::unique_ptr<RecordingListener>> ls(50);
  for (auto& l : ls) {
    l = std::make_unique<RecordingListener>();
    Submit(kHonda, l.get());
  }
  std::shared_ptr<const DecodeResult> first;
  int coalesced = 0;
  for (auto& l : ls) {
    auto end = l->WaitTerminal();
    ASSERT_EQ(end->kind, "done");
    if (!first) first = end->result;
    EXPECT_EQ(end->result, first) << "every waiter gets the same result";
    coalesced += l->events()[0].coalesced;
  }
  EXPECT_EQ(coalesced, 49);
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, UpstreamConcurrencyIsBounded) {
  EngineOptions o;
  o.max_upstream_concurrency = 3;
  o.upstream_batch_max = 1;  // one request per flight, so that they overlap
  o.budget.rate_per_minute = 0;
  MakeEngine(o);
  const std::vector<std::string> vins = {
      "1HGCM82633A004352", "1G4AH59H45G118341", "1M8GDM9AXKP042788",
      "1FTMW1T88MFA00001", "5YJSA1E26JF000001", "1G1ZT53826F109149",
      "JTDKB20U083000001", "1FAFP40634F000001"};
  fake_->ScriptEveryVin(Steps("delay:100ms"));
  std::vector<std::unique_ptr<RecordingListener>> ls;
  for (const auto& v : vins) {
    ls.push_back(std::make_unique<RecordingListener>());
    DecodeRequest r;
    r.vin = v;
    r.check_digit_policy = vin::CheckDigitPolicy::kWarn;
    ASSERT_TRUE(engine_->Submit(r, ls.back().get()).ok());
  }
  for (auto& l : ls) ASSERT_EQ(l->WaitTerminal()->kind, "done");
  EXPECT_EQ(fake_->TotalRequests(), static_cast<int>(vins.size()));
  EXPECT_LE(fake_->MaxConcurrentRequests(), 3);
  EXPECT_GE(fake_->MaxConcurrentRequests(), 2);
}

// libcurl refusing a request (curl_multi_add_handle failing) fails that
// attempt, retryable and named, and takes no upstream slot for good.
TEST_F(EngineTest, RequestsLibcurlRefusesFailRetryableAndGiveTheirSlotBack) {
  constexpr int kSlots = 3;
  std::atomic<int> refuse{kSlots + 1};
  vpic::ClientOptions co{fake_->base_url(), absl::Seconds(5), "test"};
  co.add_handle = [&refuse](void* multi, void* easy) {
    if (refuse.fetch_sub(1) > 0) return static_cast<int>(CURLM_OUT_OF_MEMORY);
    return static_cast<int>(curl_multi_add_handle(static_cast<CURLM*>(multi),
                                                  static_cast<CURL*>(easy)));
  };
  auto client = vpic::Client::Create(std::move(co));
  ASSERT_TRUE(client.ok()) << client.status();
  EngineOptions o;
  o.vpic_base_url = fake_->base_url();
  o.retry_base = kBase;
  o.retry_cap = kCap;
  o.max_attempts = 1;  // the refused attempt's failure reaches the caller
  o.max_upstream_concurrency = kSlots;
  o.upstream_batch_max = 1;  // one request per flight
  o.budget.rate_per_minute = 0;
  auto e = Engine::Create(std::move(o), *std::move(client));
  ASSERT_TRUE(e.ok()) << e.status();
  engine_ = *std::move(e);

  // More refusals than slots: the last one starts only once a refused
  // request has given its slot back.
  std::vector<std::unique_ptr<RecordingListener>> refused;
  for (int i = 0; i < kSlots + 1; ++i) {
    refused.push_back(std::make_unique<RecordingListener>());
    Submit(testing_util::ValidVin(i), refused.back().get());
  }
  for (auto& l : refused) {
    auto end = l->WaitTerminal();
    ASSERT_TRUE(end.has_value()) << "a refused request never finished";
    ASSERT_EQ(end->kind, "failed");
    EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamUnavailable);
    EXPECT_TRUE(end->failure.retryable);
    EXPECT_EQ(end->failure.attempts, 1);
    ASSERT_TRUE(end->failure.last_error.has_value());
    EXPECT_EQ(end->failure.last_error->kind, "transport");
    EXPECT_THAT(end->failure.message,
                testing::HasSubstr("could not start the request "
                                   "(curl_multi_add_handle: Out of memory)"));
  }
  EXPECT_EQ(refuse.load(), 0) << "one refused attempt per flight, no more";
  EXPECT_EQ(fake_->TotalRequests(), 0);
  ASSERT_TRUE(Idle());

  // Every slot is there: kSlots requests in flight at once, all decoded.
  fake_->HoldAnswers();
  std::vector<std::unique_ptr<RecordingListener>> later;
  for (int i = 0; i < kSlots; ++i) {
    later.push_back(std::make_unique<RecordingListener>());
    Submit(testing_util::ValidVin(100 + i), later.back().get());
  }
  EXPECT_TRUE(fake_->WaitForRequests(kSlots, absl::Seconds(10)))
      << fake_->TotalRequests() << " of " << kSlots << " requests started";
  EXPECT_EQ(engine_->Stats().upstream_active, static_cast<size_t>(kSlots));
  fake_->ReleaseAnswers();
  for (auto& l : later) {
    auto end = l->WaitTerminal();
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->kind, "done");
  }
  EXPECT_EQ(fake_->MaxConcurrentRequests(), kSlots);
}

}  // namespace
}  // namespace engine
