// DecodeBatch streams and time, through real gRPC on loopback against the
// fake vPIC: a stream without a deadline still finishes every item while
// vPIC fails (the retry policy gives up; nothing waits forever), and a
// stream's deadline, which applies to each of its items, fails an item
// whose decode outlives it, with an event the client receives before the
// stream ends.
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/call_deadline.h"
#include "testing/batch_checks.h"
#include "testing/batch_session.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"

namespace {

using testing::AnyOf;
using testing::HasSubstr;
using testing::IsEmpty;
using testing_util::BatchEvents;
using testing_util::ByRequestId;
using testing_util::Item;
using testing_util::OrderViolations;
using testing_util::ValidVin;
using testing_util::WaitUntilNothingInProgress;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

constexpr char kFord[] = "1FTMW1T88MFA00001";

struct Outcome {
  grpc::Status status;
  BatchEvents events;
  std::vector<absl::Time> received;  // when each event was read
  bool gave_up = false;  // the test's bound passed and it cancelled
};

// Runs one stream: writes `requests`, then half-closes (when `half_close`)
// and runs `after_writes`, while reading every event. The stream has the
// given deadline, or none (InfiniteFuture). The test does not wait forever
// either: past `bound` it cancels the stream and says so.
Outcome RunStream(vin::v1::VinDecoderService::Stub* stub,
                  const std::vector<DecodeBatchRequest>& requests,
                  absl::Time deadline, bool half_close = true,
                  std::function<void()> after_writes = {},
                  absl::Duration bound = absl::Seconds(60)) {
  grpc::ClientContext ctx;
  if (deadline != absl::InfiniteFuture()) {
    ctx.set_deadline(absl::ToChronoTime(deadline));
  }
  auto stream = stub->DecodeBatch(&ctx);
  Outcome out;
  absl::Notification ended;
  std::atomic<bool> gave_up{false};
  std::thread watchdog([&] {
    if (!ended.WaitForNotificationWithTimeout(bound)) {
      gave_up.store(true);
      ctx.TryCancel();
    }
  });
  std::thread writer([&] {
    for (const auto& r : requests) {
      if (!stream->Write(r)) break;
    }
    if (half_close) stream->WritesDone();
    if (after_writes) after_writes();
  });
  DecodeBatchResponse e;
  while (stream->Read(&e)) {
    out.events.push_back(e);
    out.received.push_back(absl::Now());
  }
  writer.join();
  out.status = stream->Finish();
  ended.Notify();
  watchdog.join();
  out.gave_up = gave_up.load();
  return out;
}

DecodeBatchRequest LiveOnly(const std::string& vin, const std::string& id) {
  DecodeBatchRequest r = Item(vin, id);
  r.set_source_preference(vin::v1::SOURCE_PREFERENCE_LIVE_ONLY);
  return r;
}

int Count(const BatchEvents& events, bool (DecodeBatchResponse::*has)() const) {
  int n = 0;
  for (const auto& e : events) n += (e.*has)();
  return n;
}

class BatchDeadlineTest : public testing_util::ServerFixture {
 protected:
  static server::ServerOptions WithMetrics(server::ServerOptions o) {
    o.metrics_listen = "127.0.0.1:0";
    return o;
  }
};

// No deadline on the stream, and vPIC fails in every way the retry policy
// handles: each item still ends, DONE when vPIC recovers, FAILED once the
// attempts run out (a hanging vPIC included: each attempt times out) or at
// once for a rejection; then the stream ends OK.
TEST_F(BatchDeadlineTest, AStreamWithoutADeadlineFinishesEveryItemWhileVpicFails) {
  server::ServerOptions o = WithMetrics(OneRequestPerAttempt());
  o.engine.max_attempts = 4;
  o.engine.retry_base = absl::Milliseconds(20);
  o.engine.retry_cap = absl::Milliseconds(200);
  o.engine.attempt_timeout = absl::Milliseconds(300);
  // This rule alone: the circuit breaker (rule 13, its own tests) would
  // open after five failures in a row and answer the rest at once.
  o.engine.breaker.failures = 0;
  StartServer(o);
  std::vector<DecodeBatchRequest> feed;
  for (int i = 0; i < 5; ++i) {
    feed.push_back(Item(ValidVin(i), absl::StrCat("down", i)));
    Script(ValidVin(i), "503,503,503,503,503,503");
  }
  feed.push_back(Item(ValidVin(10), "hangs"));
  Script(ValidVin(10), "hang,hang,hang,hang,hang,hang");
  feed.push_back(Item(ValidVin(20), "recovers"));
  Script(ValidVin(20), "503,502,ok");
  feed.push_back(Item(ValidVin(30), "rejected"));
  Script(ValidVin(30), "404");
  feed.push_back(Item(kFord, "fine"));

  Outcome out = RunStream(stub_.get(), feed, absl::InfiniteFuture());
  ASSERT_FALSE(out.gave_up) << "an item was still waiting after 60 s";
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_THAT(OrderViolations(out.events, true), IsEmpty());
  auto by_id = ByRequestId(out.events);
  ASSERT_EQ(by_id.size(), feed.size());
  for (int i = 0; i < 5; ++i) {
    const auto& events = by_id[absl::StrCat("down", i)];
    ASSERT_TRUE(events.back().has_failed()) << events.back().ShortDebugString();
    const auto& f = events.back().failed();
    EXPECT_EQ(f.reason(), vin::v1::FAILURE_REASON_UPSTREAM_UNAVAILABLE);
    EXPECT_TRUE(f.retryable());
    EXPECT_EQ(f.attempts(), 4);
    EXPECT_EQ(f.last_error().http_status(), 503);
    EXPECT_EQ(Count(events, &DecodeBatchResponse::has_retrying), 3);
    EXPECT_EQ(fake_->RequestCount(ValidVin(i)), 4);
  }
  const auto& hangs = by_id["hangs"].back();
  ASSERT_TRUE(hangs.has_failed()) << hangs.ShortDebugString();
  EXPECT_EQ(hangs.failed().reason(), vin::v1::FAILURE_REASON_UPSTREAM_UNAVAILABLE);
  EXPECT_EQ(hangs.failed().attempts(), 4);
  EXPECT_EQ(hangs.failed().last_error().kind(), "timeout");
  EXPECT_EQ(fake_->RequestCount(ValidVin(10)), 4);
  const auto& recovers = by_id["recovers"].back();
  ASSERT_TRUE(recovers.has_done()) << recovers.ShortDebugString();
  EXPECT_EQ(recovers.done().result().attempts(), 3);
  const auto& rejected = by_id["rejected"].back();
  ASSERT_TRUE(rejected.has_failed());
  EXPECT_EQ(rejected.failed().reason(), vin::v1::FAILURE_REASON_UPSTREAM_REJECTED);
  EXPECT_FALSE(rejected.failed().retryable());
  EXPECT_TRUE(by_id["fine"].back().has_done());
  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
}

// No deadline, and the client half-closes while every item is still in
// progress (vPIC's answers are held until after the half-close): it gets
// each item's terminal event, then OK.
TEST_F(BatchDeadlineTest, AHalfClosedStreamWithoutADeadlineGetsEveryTerminalThenOk) {
  StartServer(WithMetrics(Defaults()));
  vin::v1::DecodeResponse warm;
  ASSERT_TRUE(Decode(kFord, &warm).ok());  // a cache hit below
  const int before = fake_->TotalRequests();
  Script(ValidVin(3), "503,ok");
  const std::vector<DecodeBatchRequest> feed = {
      Item(ValidVin(1), "a"), Item(ValidVin(2), "b"), Item(ValidVin(3), "retried"),
      Item(ValidVin(1), "a-again"), Item("1HGCM82643A004352", "bad-check-digit"),
      Item(kFord, "cached")};
  fake_->HoldAnswers();
  Outcome out = RunStream(stub_.get(), feed, absl::InfiniteFuture(), true, [&] {
    // Runs after WritesDone: the three distinct live VINs are at the fake,
    // unanswered, when they are released.
    EXPECT_TRUE(fake_->WaitForRequests(before + 3, absl::Seconds(10)));
    fake_->ReleaseAnswers();
  });
  ASSERT_FALSE(out.gave_up) << "the stream did not end within 60 s";
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_THAT(OrderViolations(out.events, true), IsEmpty());
  auto by_id = ByRequestId(out.events);
  ASSERT_EQ(by_id.size(), feed.size());
  for (const char* id : {"a", "b", "retried", "a-again", "cached"}) {
    EXPECT_TRUE(by_id[id].back().has_done()) << id;
  }
  EXPECT_TRUE(by_id["a-again"].front().queued().coalesced());
  EXPECT_EQ(by_id["retried"].back().done().result().attempts(), 2);
  EXPECT_EQ(by_id["bad-check-digit"].back().failed().reason(),
            vin::v1::FAILURE_REASON_INVALID_VIN);
  EXPECT_EQ(by_id["cached"].back().done().result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
}

// The stream's deadline applies to each item. An item whose vPIC request
// hangs past it fails with DEADLINE_EXCEEDED, and the client receives that
// before the stream ends (with DEADLINE_EXCEEDED when it never half-closed,
// OK when it did); items decoded before are untouched; vPIC is not asked
// again for it, and its hanging request is aborted.
TEST_F(BatchDeadlineTest, AnItemHangingPastTheStreamDeadlineFailsBeforeTheStreamEnds) {
  server::ServerOptions o = WithMetrics(Defaults());
  o.engine.attempt_timeout = absl::Seconds(60);  // the hang outlives the test
  StartServer(o);
  for (const bool half_close : {false, true}) {
    SCOPED_TRACE(half_close ? "half-closed" : "left open");
    const int base = half_close ? 100 : 0;
    const std::string quick = ValidVin(base + 1), slow = ValidVin(base + 2),
                      hung = ValidVin(base + 3);
    Script(slow, "delay:300ms");
    Script(hung, "hang");
    // 3 s: a loaded TSan run (the whole suite, two tests at a time) once
    // took more than the 1.9 s that 2 s left the 300 ms decode.
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    Outcome out = RunStream(
        stub_.get(),
        {LiveOnly(quick, "quick"), LiveOnly(slow, "slow"), LiveOnly(hung, "hung")},
        deadline, half_close);
    ASSERT_FALSE(out.gave_up);
    if (half_close) {
      EXPECT_TRUE(out.status.ok()) << out.status.error_message();
    } else {
      EXPECT_EQ(out.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
          << out.status.error_message();
    }
    ASSERT_THAT(OrderViolations(out.events, true), IsEmpty());
    auto by_id = ByRequestId(out.events);
    ASSERT_EQ(by_id.size(), 3u);
    for (const char* id : {"quick", "slow"}) {
      ASSERT_EQ(by_id[id].size(), 2u) << id;  // QUEUED, DONE
      EXPECT_TRUE(by_id[id].back().has_done())
          << id << ": " << by_id[id].back().ShortDebugString();
      EXPECT_EQ(by_id[id].back().done().result().attempts(), 1) << id;
    }
    const auto& events = by_id["hung"];
    ASSERT_EQ(events.size(), 2u);  // QUEUED, FAILED
    const auto& f = events.back().failed();
    EXPECT_EQ(f.reason(), vin::v1::FAILURE_REASON_DEADLINE_EXCEEDED)
        << events.back().ShortDebugString();
    EXPECT_TRUE(f.retryable());
    EXPECT_EQ(f.attempts(), 1);
    EXPECT_THAT(f.message(), HasSubstr("deadline"));
    EXPECT_EQ(fake_->RequestCount(hung), 1);
    EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
    EXPECT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)))
        << "the hanging request is aborted, not left to its 60 s timeout";
    EXPECT_EQ(fake_->RequestCount(hung), 1) << "and never sent again";
  }
}

// An item whose vPIC keeps failing (503), with attempts to spare, retries
// until its next attempt would come after the stream's deadline; then it
// fails at once, retryable, naming the deadline (UPSTREAM_UNAVAILABLE with
// the delay it would have waited, as DESIGN.md's deadline rule says; or
// DEADLINE_EXCEEDED, should the deadline pass during an attempt), before
// the deadline. vPIC is asked nothing more for it.
TEST_F(BatchDeadlineTest, AnItemRetryingPastTheStreamDeadlineFailsBeforeIt) {
  server::ServerOptions o = WithMetrics(OneRequestPerAttempt());
  o.engine.max_attempts = 100;
  o.engine.retry_base = absl::Milliseconds(50);
  o.engine.retry_cap = absl::Milliseconds(400);
  // This rule alone: the circuit breaker (rule 13, its own tests) would
  // open after five failures in a row and answer the rest at once.
  o.engine.breaker.failures = 0;
  StartServer(o);
  const std::string quick = ValidVin(1), flapping = ValidVin(2);
  std::string steps = "503";
  for (int i = 1; i < 100; ++i) steps += ",503";
  Script(flapping, steps);
  const absl::Time deadline = absl::Now() + absl::Milliseconds(1500);
  Outcome out = RunStream(stub_.get(),
                          {LiveOnly(quick, "quick"), LiveOnly(flapping, "flapping")},
                          deadline, /*half_close=*/true);
  ASSERT_FALSE(out.gave_up);
  EXPECT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_THAT(OrderViolations(out.events, true), IsEmpty());
  auto by_id = ByRequestId(out.events);
  ASSERT_EQ(by_id.size(), 2u);
  EXPECT_TRUE(by_id["quick"].back().has_done());
  const auto& events = by_id["flapping"];
  ASSERT_TRUE(events.back().has_failed()) << events.back().ShortDebugString();
  const int retrying = Count(events, &DecodeBatchResponse::has_retrying);
  EXPECT_GE(retrying, 2) << "1.5 s is room for several retries";
  const auto& f = events.back().failed();
  EXPECT_THAT(f.reason(), AnyOf(vin::v1::FAILURE_REASON_UPSTREAM_UNAVAILABLE,
                                vin::v1::FAILURE_REASON_DEADLINE_EXCEEDED));
  EXPECT_TRUE(f.retryable());
  EXPECT_THAT(f.message(), HasSubstr("deadline"));
  EXPECT_EQ(f.last_error().http_status(), 503);
  if (f.reason() == vin::v1::FAILURE_REASON_UPSTREAM_UNAVAILABLE) {
    EXPECT_GT(f.retry_delay().seconds() * 1000 + f.retry_delay().nanos() / 1000000,
              0);
    EXPECT_EQ(f.attempts(), retrying + 1) << "it failed instead of a retry";
  }
  // Received before the deadline.
  size_t at = 0;
  while (!(out.events[at].request_id() == "flapping" && out.events[at].has_failed())) ++at;
  EXPECT_LT(out.received[at], deadline);
  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
  // Every attempt it counted, and no request after the failure (the one
  // in flight when the deadline passed may not have reached the fake).
  EXPECT_LE(fake_->RequestCount(flapping), f.attempts());
  EXPECT_GE(fake_->RequestCount(flapping), f.attempts() - 1);
}

// The margin an item keeps before its stream's deadline: 100 ms, or a
// tenth of the time left when that is less; none without a deadline.
TEST(ItemTimeoutOf, LeavesAMarginBeforeTheStreamDeadline) {
  EXPECT_EQ(server::ItemTimeoutOf(absl::InfiniteFuture()),
            absl::InfiniteDuration());
  struct Case {
    absl::Duration left, want;
  };
  for (const Case& c : {Case{absl::Seconds(10), absl::Milliseconds(9900)},
                        Case{absl::Seconds(1), absl::Milliseconds(900)},
                        Case{absl::Milliseconds(500), absl::Milliseconds(450)},
                        Case{absl::Milliseconds(50), absl::Milliseconds(45)}}) {
    const absl::Duration got = server::ItemTimeoutOf(absl::Now() + c.left);
    EXPECT_LE(got, c.want) << c.left;
    EXPECT_GT(got, c.want - absl::Milliseconds(20)) << c.left;
  }
  EXPECT_LE(server::ItemTimeoutOf(absl::Now() - absl::Seconds(1)),
            absl::ZeroDuration())
      << "a deadline already passed stays passed";
}

}  // namespace
