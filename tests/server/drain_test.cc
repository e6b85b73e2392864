// SIGTERM on the real vin-server binary with work in every state: a request
// in flight, a decode waiting for its retry, one waiting for its turn at the
// rate (a pushback pause), a cached item, an idle stream and a health Watch.
#include <grpcpp/create_channel.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "fake_vpic/fake_vpic.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

using testing_util::Item;
using testing_util::ValidVin;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

using Stream =
    grpc::ClientReaderWriter<DecodeBatchRequest, DecodeBatchResponse>;

// Reads a stream's events on a thread of its own, with their arrival times.
class EventLog {
 public:
  explicit EventLog(Stream* stream)
      : stream_(stream), thread_([this] { Read(); }) {}
  ~EventLog() { thread_.join(); }

  // Waits for an event of `vin` that satisfies `pred`; returns it.
  template <typename Pred>
  bool WaitFor(const std::string& vin, Pred pred,
               absl::Duration timeout = absl::Seconds(20)) {
    absl::MutexLock lock(&mu_);
    auto seen = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const auto& [e, at] : events_) {
        if (e.vin() == vin && pred(e)) return true;
      }
      return ended_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
    for (const auto& [e, at] : events_) {
      if (e.vin() == vin && pred(e)) return true;
    }
    return false;
  }
  // The terminal event of `vin` and when it came.
  std::pair<DecodeBatchResponse, absl::Time> Terminal(const std::string& vin) {
    absl::MutexLock lock(&mu_);
    for (const auto& [e, at] : events_) {
      if (e.vin() == vin && (e.has_done() || e.has_failed())) return {e, at};
    }
    return {};
  }
  // Waits for the stream's end; its status and when it came.
  std::pair<grpc::Status, absl::Time> End() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&ended_));
    return {status_, ended_at_};
  }

 private:
  void Read() {
    DecodeBatchResponse e;
    while (stream_->Read(&e)) {
      absl::MutexLock lock(&mu_);
      events_.emplace_back(e, absl::Now());
    }
    grpc::Status s = stream_->Finish();
    absl::MutexLock lock(&mu_);
    status_ = s;
    ended_at_ = absl::Now();
    ended_ = true;
  }

  Stream* const stream_;
  absl::Mutex mu_;
  std::vector<std::pair<DecodeBatchResponse, absl::Time>> events_
      ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  absl::Time ended_at_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

TEST(DrainTest, SigtermAnswersEveryItemStopsUpstreamAndExitsWithinTheGrace) {
  auto fake = fakevpic::FakeVpic::Start();
  ASSERT_TRUE(fake.ok());
  const std::string in_flight = ValidVin(1), retrying = ValidVin(2),
                    rate_bound = ValidVin(3), cached = ValidVin(4);
  (*fake)->Script(in_flight, *fakevpic::Step::ParseList("delay:3s"));
  (*fake)->Script(retrying, *fakevpic::Step::ParseList("429:8"));

  testing_util::Subprocess server;
  ASSERT_TRUE(server.Start({VIN_SERVER_BIN, "--listen=127.0.0.1:0",
                            "--vpic_base_url=" + (*fake)->base_url(),
                            "--retry_base=50ms", "--upstream_batch_max=1",
                            "--shutdown_grace=10s"}));
  auto started = server.WaitForLine("listening on", absl::Seconds(20));
  ASSERT_TRUE(started.has_value());
  const std::string port = started->substr(started->find("(port ") + 6);
  auto channel = grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", std::stoi(port)),
      grpc::InsecureChannelCredentials());
  auto stub = vin::v1::VinDecoderService::NewStub(channel);

  // A cached VIN, and a health Watch.
  {
    grpc::ClientContext ctx;
    vin::v1::DecodeRequest req;
    req.set_vin(cached);
    vin::v1::DecodeResponse resp;
    ASSERT_TRUE(stub->Decode(&ctx, req, &resp).ok());
  }
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext watch_ctx;
  grpc::health::v1::HealthCheckRequest watch_req;
  auto watch = health->Watch(&watch_ctx, watch_req);
  grpc::health::v1::HealthCheckResponse status;
  ASSERT_TRUE(watch->Read(&status));
  EXPECT_EQ(status.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  // An idle stream (its one item answered, then nothing more) and a busy one.
  grpc::ClientContext idle_ctx, busy_ctx;
  auto idle = stub->DecodeBatch(&idle_ctx);
  EventLog idle_log(idle.get());
  ASSERT_TRUE(idle->Write(Item(cached)));
  ASSERT_TRUE(idle_log.WaitFor(cached, [](auto& e) { return e.has_done(); }));
  auto busy = stub->DecodeBatch(&busy_ctx);
  EventLog busy_log(busy.get());
  ASSERT_TRUE(busy->Write(Item(in_flight)));
  ASSERT_TRUE((*fake)->WaitForRequests(2, absl::Seconds(20)));  // cached, in_flight
  ASSERT_TRUE(busy->Write(Item(retrying)));
  ASSERT_TRUE(busy_log.WaitFor(retrying, [](auto& e) { return e.has_retrying(); }))
      << "429: waits 8 s for its retry, and pauses every request";
  ASSERT_TRUE(busy->Write(Item(rate_bound)));
  ASSERT_TRUE(busy_log.WaitFor(rate_bound, [](auto& e) {
    return e.has_queued() && e.queued().waiting_for_rate();
  }));
  ASSERT_TRUE(busy->Write(Item(cached)));
  ASSERT_TRUE(busy_log.WaitFor(cached, [](auto& e) { return e.has_done(); }));

  const int requests_before = (*fake)->TotalRequests();
  const absl::Time sigterm = absl::Now();
  server.Signal(SIGTERM);

  // Health says so, then the Watch ends.
  ASSERT_TRUE(watch->Read(&status));
  EXPECT_EQ(status.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(watch->Read(&status));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  // The idle stream ends at once.
  auto [idle_status, idle_end] = idle_log.End();
  EXPECT_EQ(idle_status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_LT(idle_end - sigterm, absl::Seconds(1)) << "an idle stream holds nothing";
  // Waiting for a retry or for the rate: failed at once, retryable.
  for (const std::string& vin : {retrying, rate_bound}) {
    ASSERT_TRUE(busy_log.WaitFor(vin, [](auto& e) { return e.has_failed(); }));
    auto [failed, at] = busy_log.Terminal(vin);
    EXPECT_EQ(failed.failed().reason(), vin::v1::FAILURE_REASON_SHUTTING_DOWN) << vin;
    EXPECT_TRUE(failed.failed().retryable()) << vin;
    EXPECT_LT(at - sigterm, absl::Seconds(1)) << vin << " failed at once";
  }
  // The request in flight finishes within the grace, and the stream ends
  // right after that last answer.
  ASSERT_TRUE(busy_log.WaitFor(in_flight, [](auto& e) { return e.has_done(); }));
  auto [done, done_at] = busy_log.Terminal(in_flight);
  auto [busy_status, busy_end] = busy_log.End();
  EXPECT_EQ(busy_status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << busy_status.error_message();
  EXPECT_LT(busy_end - done_at, absl::Seconds(1));
  // The process exits 0, well within the grace; nothing more reached vPIC.
  auto exit_status = server.Wait(absl::Seconds(20));
  const absl::Duration stopping = absl::Now() - sigterm;
  ASSERT_TRUE(exit_status.has_value()) << "still running";
  EXPECT_EQ(*exit_status, 0) << [&] {
    std::string tail;
    for (const auto& line : server.lines()) absl::StrAppend(&tail, line, "\n");
    return tail;
  }();
  EXPECT_LT(stopping, absl::Seconds(8)) << "within the 10 s grace";
  EXPECT_EQ((*fake)->TotalRequests(), requests_before)
      << "no upstream request after SIGTERM";
}

}  // namespace
