// DecodeBatch clients that go away mid-stream, through real gRPC on
// loopback against the fake vPIC: a connection that dies with the server's
// writes backed up, and a cancel racing a cache hit and an arriving answer.
// Whatever the timing, the server leaves nothing in progress behind (no
// flight, waiter, wake-up, window slot or open stream), asks vPIC nothing
// more for VINs nobody waits for, and serves the next client.
#include <grpcpp/create_channel.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/batch_checks.h"
#include "testing/batch_session.h"
#include "testing/scrape.h"
#include "testing/server_fixture.h"
#include "testing/tcp_proxy.h"
#include "testing/vin_gen.h"

namespace {

using testing::IsEmpty;
using testing_util::BatchEvents;
using testing_util::ByRequestId;
using testing_util::Item;
using testing_util::OrderViolations;
using testing_util::RunBatch;
using testing_util::ValidVin;
using testing_util::WaitUntilNothingInProgress;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

constexpr char kHonda[] = "1HGCM82633A004352";

class BatchClientGoneTest : public testing_util::ServerFixture {
 protected:
  static server::ServerOptions WithMetrics(server::ServerOptions o) {
    o.metrics_listen = "127.0.0.1:0";
    return o;
  }
  double Metric(const std::string& series) {
    std::string body;
    EXPECT_EQ(testing_util::HttpGet(server_->metrics_port(), "/metrics", &body),
              200);
    return testing_util::Sum(testing_util::ParseSamples(body), series);
  }
};

// The client's connection dies while the server has answers to write to it:
// 60 items were decoded (their DONE events backed up behind the client's
// HTTP/2 flow-control window, since the client's host stopped taking
// bytes) and 5 still wait on vPIC requests that hang. The server's pending
// write fails; the items leave; the hanging requests are aborted, not
// retried; the 60 answers are cached; a second client is served normally.
TEST_F(BatchClientGoneTest, AConnectionThatDiesWithWritesPendingLeavesNothingBehind) {
  server::ServerOptions o = WithMetrics(Defaults());
  // A hanging attempt would outlive the test: only its cancellation ends it.
  o.engine.attempt_timeout = absl::Seconds(60);
  o.engine.max_upstream_concurrency = 100;  // every item's request at once
  StartServer(o);
  auto proxy = testing_util::TcpProxy::Start(server_->port());
  ASSERT_NE(proxy, nullptr);
  grpc::ChannelArguments args;
  // The client's flow-control window stays small: once the proxy freezes,
  // the server can write hardly anything more.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 1024);
  auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("127.0.0.1:", proxy->port()),
      grpc::InsecureChannelCredentials(), args));

  constexpr int kAnswered = 60, kHanging = 5;
  std::vector<std::string> answered, hanging;
  for (int i = 0; i < kAnswered; ++i) answered.push_back(ValidVin(100 + i));
  for (int i = 0; i < kHanging; ++i) {
    hanging.push_back(ValidVin(900 + i));
    Script(hanging.back(), "hang");
  }
  fake_->HoldAnswers();
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = stub->DecodeBatch(&ctx);
  for (int i = 0; i < kAnswered; ++i) {
    ASSERT_TRUE(stream->Write(Item(answered[i], absl::StrCat("a", i))));
  }
  for (int i = 0; i < kHanging; ++i) {
    ASSERT_TRUE(stream->Write(Item(hanging[i], absl::StrCat("h", i))));
  }
  DecodeBatchResponse e;
  for (int queued = 0; queued < kAnswered + kHanging;) {
    ASSERT_TRUE(stream->Read(&e));
    ASSERT_TRUE(e.has_queued()) << e.ShortDebugString();
    ++queued;
  }
  ASSERT_TRUE(fake_->WaitForRequests(kAnswered + kHanging, absl::Seconds(10)));

  proxy->Freeze();  // the client's host takes no more bytes
  fake_->ReleaseAnswers();
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) { return s.flights == kHanging; },
      absl::Seconds(20)))
      << "the 60 answered VINs are decoded";
  // Their DONE events cannot all have been written: the window is full.
  ASSERT_GT(server_->batch_counters().items_outstanding.load(), kHanging + 10);
  EXPECT_EQ(server_->batch_counters().streams.load(), 1);

  proxy->Sever();  // and the connection is gone, without a goodbye
  while (stream->Read(&e)) {
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();

  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
  EXPECT_EQ(server_->batch_counters().items_outstanding.load(), 0);
  // The hanging requests were aborted (their connections to the fake closed)
  // long before their 60 s attempt timeout, and none was sent again.
  EXPECT_TRUE(fake_->WaitUntilIdle(absl::Seconds(10)));
  EXPECT_EQ(fake_->TotalRequests(), kAnswered + kHanging);
  EXPECT_EQ(Metric("vin_upstream_requests_total{endpoint=\"single\",result="
                   "\"cancelled\"}"),
            kHanging);

  // A second client on the same server: the decodes the first one paid for
  // are in the cache; a VIN whose flight was abandoned is decoded afresh.
  auto out = RunBatch(stub_.get(), {Item(answered[0], "again-a"),
                                    Item(hanging[0], "again-h"),
                                    Item(ValidVin(5000), "new")});
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  EXPECT_THAT(OrderViolations(out.events, true), IsEmpty());
  auto by_id = ByRequestId(out.events);
  ASSERT_EQ(by_id.size(), 3u);
  ASSERT_TRUE(by_id["again-a"].back().has_done());
  EXPECT_EQ(by_id["again-a"].back().done().result().source(),
            vin::v1::SOURCE_CACHE);
  ASSERT_TRUE(by_id["again-h"].back().has_done());
  EXPECT_EQ(by_id["again-h"].back().done().result().source(),
            vin::v1::SOURCE_VPIC);
  EXPECT_EQ(by_id["again-h"].back().done().result().attempts(), 1);
  EXPECT_TRUE(by_id["new"].back().has_done());
  EXPECT_EQ(fake_->RequestCount(hanging[0]), 2);
  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
}

// Busy-waits for `d`: shifts a racer by a varying lag without sleeping (the
// test's outcome does not depend on it; it moves the race's meeting point).
void Spin(absl::Duration d) {
  const absl::Time until = absl::Now() + d;
  while (absl::Now() < until) {
  }
}

// Many times over: a stream has an item whose vPIC answer is held; then at
// about the same moment the client sends a VIN that is in the cache (and
// half-closes, half of the time), the held answer is released, and the
// client cancels. The three happen on three threads released together, or
// one after the other, in an order that changes with the iteration. Either
// way the client sees a valid event order (QUEUED first, at most one
// terminal event, nothing after it), and the stream ends CANCELLED, or OK
// with both items DONE.
TEST_F(BatchClientGoneTest, ACancelRacingACacheHitAndAnArrivingAnswerKeepsTheContract) {
  server::ServerOptions o = WithMetrics(Defaults());
  o.engine.retry_base = absl::Milliseconds(2);  // the stagger: up to 2 ms
  StartServer(o);
  vin::v1::DecodeResponse warm;
  ASSERT_TRUE(Decode(kHonda, &warm).ok());  // kHonda is in the cache now
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr int kIterations = 100;
#else
  constexpr int kIterations = 300;
#endif
  int ended_ok = 0, ended_cancelled = 0, live_done = 0, cached_done = 0;
  for (int i = 0; i < kIterations; ++i) {
    SCOPED_TRACE(absl::StrCat("iteration ", i));
    const std::string live = ValidVin(20000 + i);
    fake_->HoldAnswers();
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    auto stream = stub_->DecodeBatch(&ctx);
    ASSERT_TRUE(stream->Write(Item(live, "live")));
    BatchEvents events(1);
    ASSERT_TRUE(stream->Read(&events[0]));
    ASSERT_TRUE(events[0].has_queued());
    // The warm-up made one request, each iteration one more: this one's is
    // at the fake, held.
    ASSERT_TRUE(fake_->WaitForRequests(i + 2, absl::Seconds(10)));

    const bool half_close = (i / 4) % 2 == 0;  // apart from i % 4 below
    // The cancel comes 0 to 2.5 ms after the others, so that it is
    // sometimes too late to cut the stream short.
    const absl::Duration cancel_lag = absl::Microseconds(500) * ((i / 6) % 6);
    struct Act {
      absl::Duration lag;
      std::function<void()> run;
    };
    absl::Notification writes_over;  // Finish() may come after it only
    std::vector<Act> acts = {
        {absl::ZeroDuration(),
         [&] {
           if (stream->Write(Item(kHonda, "cached")) && half_close) {
             stream->WritesDone();
           }
           writes_over.Notify();
         }},
        {absl::ZeroDuration(), [&] { fake_->ReleaseAnswers(); }},
        {cancel_lag, [&] { ctx.TryCancel(); }},
    };
    // Order: the i-th permutation of the three (by rotation and swap).
    std::rotate(acts.begin(), acts.begin() + (i % 3), acts.end());
    if ((i / 3) % 2 == 1) std::swap(acts[1], acts[2]);
    std::atomic<bool> go{false};  // releases the racers together
    std::vector<std::thread> racers;
    if (i % 4 == 3) {
      racers.emplace_back([&acts] {
        for (auto& act : acts) {  // in sequence, in that order
          Spin(act.lag);
          act.run();
        }
      });
    } else {
      for (size_t k = 0; k < acts.size(); ++k) {
        // Starts up to 70 us apart, varying with the iteration.
        const absl::Duration lag =
            acts[k].lag + absl::Microseconds(10) * ((i * 7 + k * 5) % 8);
        racers.emplace_back([&go, &acts, k, lag] {
          while (!go.load()) {
          }
          Spin(lag);
          acts[k].run();
        });
      }
      go.store(true);
    }
    DecodeBatchResponse e;
    while (stream->Read(&e)) events.push_back(e);
    // The status as the client gets it, while a late cancel may still come
    // (a call cancelled before its status is asked for is CANCELLED).
    if (!writes_over.WaitForNotificationWithTimeout(absl::Seconds(10))) {
      ADD_FAILURE() << "a Write did not return within 10 s";
      ctx.TryCancel();
      writes_over.WaitForNotification();
    }
    const grpc::Status status = stream->Finish();
    for (std::thread& t : racers) t.join();

    ASSERT_TRUE(status.ok() || status.error_code() == grpc::StatusCode::CANCELLED)
        << status.error_code() << " " << status.error_message();
    ASSERT_THAT(OrderViolations(events, status.ok()), IsEmpty());
    for (const auto& ev : events) {
      ASSERT_FALSE(ev.has_failed()) << ev.ShortDebugString();
      if (ev.has_done() && ev.request_id() == "cached") {
        ++cached_done;
        EXPECT_EQ(ev.done().result().source(), vin::v1::SOURCE_CACHE);
        EXPECT_EQ(ev.done().result().attempts(), 0);
        EXPECT_EQ(ev.done().result().vehicle().make(), "HONDA");
      }
      if (ev.has_done() && ev.request_id() == "live") {
        ++live_done;
        EXPECT_EQ(ev.done().result().source(), vin::v1::SOURCE_VPIC);
        EXPECT_EQ(ev.vin(), live);
      }
    }
    if (status.ok()) {
      ++ended_ok;
      EXPECT_TRUE(half_close);
      auto by_id = ByRequestId(events);
      ASSERT_EQ(by_id.size(), 2u);
      EXPECT_TRUE(by_id["live"].back().has_done());
      EXPECT_TRUE(by_id["cached"].back().has_done());
    } else {
      ++ended_cancelled;
    }
  }
  std::cout << "outcomes: " << ended_ok << " ended OK, " << ended_cancelled
            << " CANCELLED; DONE events seen: " << live_done << " live, "
            << cached_done << " cached\n";

  // Nothing is left behind, and the server serves on.
  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
  EXPECT_EQ(server_->batch_counters().items_outstanding.load(), 0);
  const int requests = fake_->TotalRequests();
  auto out = RunBatch(stub_.get(), {Item(kHonda, "c"), Item(ValidVin(7), "n")});
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  EXPECT_THAT(OrderViolations(out.events, true), IsEmpty());
  EXPECT_EQ(out.events.size(), 4u);
  EXPECT_EQ(fake_->TotalRequests(), requests + 1);
  vin::v1::DecodeResponse resp;
  EXPECT_TRUE(Decode(ValidVin(8), &resp).ok());
  EXPECT_EQ(WaitUntilNothingInProgress(*server_, absl::Seconds(20)), "");
}

}  // namespace
