// The engine against the fake vPIC over loopback HTTP.
#include "engine/engine.h"

#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <set>
#include <vector>

#include "fake_vpic/fake_vpic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/recording_listener.h"
#include "testing/vin_gen.h"
#include "vpic/client.h"

namespace engine {
namespace {

using fakevpic::FakeVpic;
using fakevpic::Step;
using testing::ElementsAre;
using testing_util::RecordingListener;

constexpr char kFord[] = "1FTMW1T88MFA00001";
constexpr char kHonda[] = "1HGCM82633A004352";
constexpr absl::Duration kBase = absl::Milliseconds(40);
constexpr absl::Duration kCap = absl::Milliseconds(400);

std::vector<Step> Steps(const std::string& text) {
  auto steps = Step::ParseList(text);
  EXPECT_TRUE(steps.ok()) << steps.status();
  return *steps;
}

class EngineTest : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }

  void MakeEngine(EngineOptions o = {}) {
    o.vpic_base_url = fake_->base_url();
    if (o.retry_base == EngineOptions().retry_base) o.retry_base = kBase;
    if (o.retry_cap == EngineOptions().retry_cap) o.retry_cap = kCap;
    if (o.attempt_timeout == EngineOptions().attempt_timeout) {
      o.attempt_timeout = absl::Seconds(2);
    }
    auto e = Engine::Create(std::move(o));
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *std::move(e);
  }

  Engine::WaiterId Submit(const std::string& vin, RecordingListener* l,
                          absl::Time deadline = absl::InfiniteFuture()) {
    DecodeRequest r;
    r.vin = vin;
    if (deadline != absl::InfiniteFuture()) r.timeout = deadline - absl::Now();
    const Admission admitted = engine_->Submit(r, l);
    EXPECT_TRUE(admitted.ok()) << admitted.failure().message;
    return admitted.id();
  }

  // No flight, waiter, wake-up or upstream request is left.
  bool Idle() {
    return engine_->WaitForStats(
        [](const EngineStats& s) {
          return s.flights == 0 && s.waiters == 0 && s.pending_wakeups == 0 &&
                 s.upstream_active == 0;
        },
        absl::Seconds(10));
  }

  std::unique_ptr<FakeVpic> fake_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, CleanDecode) {
  MakeEngine();
  RecordingListener l;
  Submit(kFord, &l);
  auto end = l.WaitTerminal();
  ASSERT_TRUE(end.has_value());
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->vehicle.make, "FORD");
  EXPECT_EQ(end->result->vehicle.model, "F-150");
  EXPECT_EQ(end->result->vehicle.model_year, 2021);
  EXPECT_EQ(end->result->source, Source::kVpic);
  EXPECT_EQ(end->result->attempts, 1);
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "done"));
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(EngineTest, InvalidVinNeverReachesUpstream) {
  MakeEngine();
  RecordingListener l;
  DecodeRequest r;
  r.vin = "1HGCM82643A004352";  // wrong check digit
  auto id = engine_->Submit(r, &l);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.failure().reason, FailureReason::kInvalidVin);
  EXPECT_FALSE(id.failure().retryable);
  EXPECT_THAT(id.failure().message, testing::HasSubstr("check digit"));
  EXPECT_TRUE(l.events().empty());
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(EngineTest, WarnPolicyDecodesWithANote) {
  MakeEngine();
  RecordingListener l;
  DecodeRequest r;
  r.vin = "WVGZZZ5NZEW069297";
  r.check_digit_policy = vin::CheckDigitPolicy::kWarn;
  ASSERT_TRUE(engine_->Submit(r, &l).ok());
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  ASSERT_FALSE(end->result->notes.empty());
  EXPECT_EQ(end->result->notes[0].code, "check_digit");
  EXPECT_EQ(fake_->RequestCount("WVGZZZ5NZEW069297"), 1);
}

TEST_F(EngineTest, RetriesWithJitterThenSucceeds) {
  MakeEngine();
  fake_->Script(kHonda, Steps("503,503,ok"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->attempts, 3);
  EXPECT_THAT(l.kinds(), ElementsAre("queued", "retrying", "retrying", "done"));
  auto events = l.events();
  auto requests = fake_->RequestsFor(kHonda);
  ASSERT_EQ(requests.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const Retrying& r = events[1 + i].retrying;
    EXPECT_EQ(r.attempt, i + 1);
    EXPECT_EQ(r.error.http_status, 503);
    EXPECT_EQ(r.error.kind, "http");
    EXPECT_GE(r.next_delay, kBase);
    EXPECT_LE(r.next_delay, kCap);
    // The next request never comes before the announced delay.
    EXPECT_GE(requests[i + 1].time - requests[i].time, r.next_delay);
  }
  EXPECT_LT(events[1].retrying.next_delay, 3 * kBase)
      << "the first retry waits within [base, 3*base)";
}

TEST_F(EngineTest, SparseAnswerIsFinishedAndNeverRetried) {
  MakeEngine();
  fake_->Script(kHonda, Steps("sparse"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->vehicle.make, "");
  EXPECT_EQ(end->result->attempts, 1);
  ASSERT_TRUE(Idle());
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, NonRetryableAnswersFailAtOnce) {
  MakeEngine();
  for (const char* status : {"404", "400", "500"}) {
    fake_->Script(kHonda, Steps(status));
    const int before = fake_->RequestCount(kHonda);
    RecordingListener l;
    Submit(kHonda, &l);
    auto end = l.WaitTerminal();
    ASSERT_EQ(end->kind, "failed") << status;
    EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamRejected);
    EXPECT_FALSE(end->failure.retryable);
    EXPECT_EQ(end->failure.attempts, 1);
    EXPECT_EQ(end->failure.last_error->http_status, std::stoi(status));
    EXPECT_EQ(fake_->RequestCount(kHonda), before + 1);
  }
}

TEST_F(EngineTest, EveryRetryableFaultIsRetried) {
  for (const char* fault :
       {"502", "504", "html", "truncated", "empty", "reset", "hang", "429:0",
        "badgzip"}) {
    // A fresh engine per fault: its first attempt uses a new connection.
    // (libcurl itself re-sends once when a *reused* keep-alive connection
    // dies before answering, as HTTP clients do for idempotent requests.)
    EngineOptions o;
    o.attempt_timeout = absl::Milliseconds(300);
    MakeEngine(o);
    fake_->Script(kHonda, Steps(fault));
    const int before = fake_->RequestCount(kHonda);
    RecordingListener l;
    Submit(kHonda, &l);
    auto end = l.WaitTerminal();
    ASSERT_EQ(end->kind, "done") << fault;
    EXPECT_EQ(end->result->attempts, 2) << fault;
    EXPECT_THAT(l.kinds(), ElementsAre("queued", "retrying", "done")) << fault;
    EXPECT_EQ(fake_->RequestCount(kHonda), before + 2) << fault;
    engine_.reset();
  }
}

TEST_F(EngineTest, RetriesExhaustedFailRetryableWithSuggestedDelay) {
  EngineOptions o;
  o.max_attempts = 3;
  MakeEngine(o);
  fake_->Script(kHonda, Steps("503,503,503,503"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(end->failure.retryable);
  EXPECT_EQ(end->failure.attempts, 3);
  EXPECT_GE(end->failure.retry_delay, kBase);
  EXPECT_EQ(end->failure.last_error->http_status, 503);
  ASSERT_TRUE(Idle());
  EXPECT_EQ(fake_->RequestCount(kHonda), 3);
}

TEST_F(EngineTest, RetryAfterIsAFloor) {
  MakeEngine();
  fake_->Script(kHonda, Steps("429:1"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  auto requests = fake_->RequestsFor(kHonda);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_GE(requests[1].time - requests[0].time, absl::Seconds(1));
  EXPECT_GE(l.events()[1].retrying.next_delay, absl::Seconds(1));
}

// A 200 maintenance page that says when to come back is not tried again
// sooner (kCap is far below its second).
TEST_F(EngineTest, RetryAfterOnAMaintenancePageIsAFloor) {
  MakeEngine();
  fake_->Script(kHonda, Steps("html:1"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->attempts, 2);
  auto requests = fake_->RequestsFor(kHonda);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].served, "html");
  EXPECT_GE(requests[1].time - requests[0].time, absl::Seconds(1));
  ASSERT_THAT(l.kinds(), ElementsAre("queued", "retrying", "done"));
  // A copy: events() returns a temporary.
  const Retrying retrying = l.events()[1].retrying;
  EXPECT_EQ(retrying.error.kind, "bad_response");
  EXPECT_GE(retrying.next_delay, absl::Seconds(1));
}

TEST_F(EngineTest, RetryAfterBeyondTheMaximumFailsRetryable) {
  MakeEngine();
  fake_->Script(kHonda, Steps("429:120"));
  RecordingListener l;
  Submit(kHonda, &l);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(end->failure.retryable);
  EXPECT_EQ(end->failure.retry_delay, absl::Seconds(120));
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

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

TEST_F(EngineTest, LaterCallerIsAnsweredFromTheCache) {
  MakeEngine();
  RecordingListener a, b;
  Submit(kFord, &a);
  ASSERT_EQ(a.WaitTerminal()->kind, "done");
  Submit(kFord, &b);
  auto end = b.WaitTerminal();
  ASSERT_EQ(end->kind, "done");
  EXPECT_EQ(end->result->source, Source::kCache);
  EXPECT_EQ(end->result->attempts, 0);
  EXPECT_EQ(end->result->vehicle.model, "F-150");
  EXPECT_EQ(end->result->decode_time, a.events().back().result->decode_time);
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
}

TEST_F(EngineTest, FailuresAreNotCached) {
  MakeEngine();
  fake_->Script(kHonda, Steps("404"));
  RecordingListener a, b;
  Submit(kHonda, &a);
  ASSERT_EQ(a.WaitTerminal()->kind, "failed");
  Submit(kHonda, &b);
  ASSERT_EQ(b.WaitTerminal()->kind, "done");
  EXPECT_EQ(fake_->RequestCount(kHonda), 2);
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

TEST_F(EngineTest, CancelledLastWaiterStopsTheFlight) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang,ok"));
  RecordingListener l;
  const auto id = Submit(kHonda, &l);
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  engine_->Cancel(id);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kCancelled);
  ASSERT_TRUE(Idle());
  ASSERT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)))
      << "the abandoned request's connection is closed";
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, CancelledWaiterDuringRetryWaitCancelsTheWakeup) {
  EngineOptions o;
  o.retry_base = absl::Seconds(2);
  o.retry_cap = absl::Seconds(10);
  MakeEngine(o);
  fake_->Script(kHonda, Steps("503"));
  RecordingListener l;
  const auto id = Submit(kHonda, &l);
  ASSERT_TRUE(engine_->WaitForStats(
      [](const EngineStats& s) {
        return s.upstream_requests == 1 && s.upstream_active == 0 &&
               s.pending_wakeups == 1;
      },
      absl::Seconds(10)));
  engine_->Cancel(id);
  ASSERT_EQ(l.WaitTerminal()->kind, "failed");
  ASSERT_TRUE(Idle()) << "the pending wake-up was cancelled";
  EXPECT_EQ(engine_->Stats().upstream_requests, 1u);
}

TEST_F(EngineTest, OtherWaitersKeepTheFlightWhenOneLeaves) {
  MakeEngine();
  fake_->Script(kHonda, Steps("delay:300ms"));
  RecordingListener leaving, staying;
  const auto id = Submit(kHonda, &leaving);
  Submit(kHonda, &staying);
  engine_->Cancel(id);
  EXPECT_EQ(leaving.WaitTerminal()->kind, "failed");
  EXPECT_EQ(staying.WaitTerminal()->kind, "done");
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, RetryWakingAfterTheDeadlineFailsAtOnce) {
  EngineOptions o;
  o.retry_base = absl::Seconds(5);
  o.retry_cap = absl::Seconds(20);
  MakeEngine(o);
  fake_->Script(kHonda, Steps("503"));
  RecordingListener l;
  const absl::Time deadline = absl::Now() + absl::Seconds(3);
  Submit(kHonda, &l, deadline);
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kUpstreamUnavailable);
  EXPECT_TRUE(end->failure.retryable);
  EXPECT_GE(end->failure.retry_delay, absl::Seconds(4));  // ~5s minus elapsed
  EXPECT_LT(end->at, deadline) << "it did not sleep into the deadline";
  ASSERT_TRUE(Idle()) << "no waiter left, so no retry is scheduled";
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, DeadlineDuringAnAttemptEndsTheWaiter) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang"));
  RecordingListener l;
  Submit(kHonda, &l, absl::Now() + absl::Milliseconds(200));
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kDeadlineExceeded);
  ASSERT_TRUE(Idle());
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(EngineTest, ShutdownFailsWaitersRetryable) {
  MakeEngine();
  fake_->Script(kHonda, Steps("hang"));
  RecordingListener l;
  Submit(kHonda, &l);
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
  engine_->Shutdown();
  auto end = l.WaitTerminal();
  ASSERT_EQ(end->kind, "failed");
  EXPECT_EQ(end->failure.reason, FailureReason::kShuttingDown);
  EXPECT_TRUE(end->failure.retryable);
  RecordingListener late;
  DecodeRequest r;
  r.vin = kFord;
  const Admission late_admission = engine_->Submit(r, &late);
  ASSERT_FALSE(late_admission.ok());
  EXPECT_EQ(late_admission.failure().reason, FailureReason::kShuttingDown);
  EXPECT_TRUE(late_admission.failure().retryable);
}

TEST_F(EngineTest, OverloadIsRefusedUpFront) {
  EngineOptions o;
  o.max_waiters = 1;
  MakeEngine(o);
  fake_->Script(kHonda, Steps("delay:200ms"));
  RecordingListener a, b;
  Submit(kHonda, &a);
  DecodeRequest r;
  r.vin = kFord;
  const Admission refused = engine_->Submit(r, &b);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().reason, FailureReason::kOverloaded);
  EXPECT_TRUE(refused.failure().retryable);
  EXPECT_EQ(a.WaitTerminal()->kind, "done");
  ASSERT_TRUE(Idle());
  EXPECT_TRUE(engine_->Submit(r, &b).ok()) << "capacity is given back";
  EXPECT_EQ(b.WaitTerminal()->kind, "done");
}

}  // namespace
}  // namespace engine
