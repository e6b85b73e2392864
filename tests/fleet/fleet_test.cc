// Fleet mode end to end (README "Running a fleet"): three replicas, one fake
// vPIC, one real redis-server of the test's own. The replicas are in this
// process (VinServer), except where one must die: then they are vin-server
// processes.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "fake_vpic/fake_vpic.h"
#include "fleet/redis_client.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "testing/redis_probe.h"
#include "testing/redis_server.h"
#include "testing/request_log.h"
#include "testing/scrape.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

using google::protobuf::util::MessageDifferencer;
using testing_util::ValidVin;
using vin::v1::DecodeRequest;
using vin::v1::DecodeResponse;

constexpr int kReplicas = 3;

class FleetTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(redis_.Start(&error)) << error;
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }
  void TearDown() override {
    stubs_.clear();
    servers_.clear();
    fake_.reset();
  }

  static server::ServerOptions Defaults() {
    server::ServerOptions o;
    o.engine.retry_base = absl::Milliseconds(40);
    o.engine.retry_cap = absl::Milliseconds(400);
    o.engine.attempt_timeout = absl::Seconds(5);
    o.engine.budget.rate_per_minute = 0;
    o.engine.upstream_batch_max = 1;
    o.fleet.timeout = absl::Milliseconds(200);  // a loaded test machine
    return o;
  }

  void StartReplicas(server::ServerOptions o = Defaults(), int n = kReplicas) {
    o.listen = "127.0.0.1:0";
    o.engine.vpic_base_url = fake_->base_url();
    o.fleet.redis_url = redis_.url();
    o.fleet.size_hint = n;
    for (int i = 0; i < n; ++i) {
      auto s = server::VinServer::Start(o);
      ASSERT_TRUE(s.ok()) << s.status();
      auto channel = grpc::CreateChannel(
          absl::StrCat("127.0.0.1:", (*s)->port()),
          grpc::InsecureChannelCredentials());
      stubs_.push_back(vin::v1::VinDecoderService::NewStub(channel));
      servers_.push_back(*std::move(s));
    }
    for (auto& s : servers_) {
      ASSERT_TRUE(WaitFor([&] { return s->metrics().redis_up.value() == 1; }))
          << "replica connected to redis";
    }
  }

  // Polls `pred` (state in another process or thread that nothing signals)
  // until it holds or 30 s pass.
  template <typename Pred>
  static bool WaitFor(Pred pred, absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time give_up = absl::Now() + timeout;
    while (!pred()) {
      if (absl::Now() > give_up) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  grpc::Status Decode(int replica, const std::string& vin, DecodeResponse* out,
                      absl::Duration timeout = absl::Seconds(30)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    DecodeRequest req;
    req.set_vin(vin);
    return stubs_[replica]->Decode(&ctx, req, out);
  }

  size_t Waiters() const {
    size_t n = 0;
    for (const auto& s : servers_) n += s->engine().Stats().waiters;
    return n;
  }

  testing_util::RedisServer redis_;
  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::vector<std::unique_ptr<server::VinServer>> servers_;
  std::vector<std::unique_ptr<vin::v1::VinDecoderService::Stub>> stubs_;
};

// Many calls in flight at once, each answered through its callback.
class Calls {
 public:
  void Start(vin::v1::VinDecoderService::Stub* stub, const std::string& vin) {
    auto call = std::make_unique<Call>();
    call->req.set_vin(vin);
    call->ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(240)));
    Call* c = call.get();
    {
      absl::MutexLock lock(&mu_);
      calls_.push_back(std::move(call));
    }
    stub->async()->Decode(&c->ctx, &c->req, &c->resp, [this, c](grpc::Status s) {
      absl::MutexLock lock(&mu_);
      c->status = std::move(s);
      ++done_;
    });
  }
  // Waits for every call's answer.
  bool Wait() {
    absl::MutexLock lock(&mu_);
    auto all = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return done_ == calls_.size();
    };
    return mu_.AwaitWithTimeout(absl::Condition(&all), absl::Seconds(240));
  }
  struct Call {
    DecodeRequest req;
    DecodeResponse resp;
    grpc::ClientContext ctx;
    grpc::Status status;
  };
  std::vector<const Call*> calls() const {
    absl::MutexLock lock(&mu_);
    std::vector<const Call*> out;
    for (const auto& c : calls_) out.push_back(c.get());
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Call>> calls_ ABSL_GUARDED_BY(mu_);
  size_t done_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(FleetTest, ThreeHundredCallsOverThreeReplicasMakeOneUpstreamRequest) {
  StartReplicas();
  const std::string vin = ValidVin(1);
  fake_->HoldAnswers();  // upstream is slow: every call joins the flight
  Calls calls;
  for (int i = 0; i < 300; ++i) calls.Start(stubs_[i % kReplicas].get(), vin);
  ASSERT_TRUE(WaitFor([&] { return Waiters() == 300; }))
      << "waiting: " << Waiters();
  fake_->ReleaseAnswers();
  ASSERT_TRUE(calls.Wait());
  EXPECT_EQ(fake_->TotalRequests(), 1) << "one flight across the fleet";
  const auto all = calls.calls();
  ASSERT_TRUE(all[0]->status.ok()) << all[0]->status.error_message();
  const DecodeResponse& first = all[0]->resp;
  EXPECT_EQ(all[0]->resp.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(all[0]->resp.result().attempts(), 1);
  int identical = 0;
  for (const auto* c : all) {
    EXPECT_TRUE(c->status.ok()) << c->status.error_message();
    identical += MessageDifferencer::Equals(c->resp, first);
  }
  EXPECT_EQ(identical, 300);
  // The other replicas' waiters were coalesced with a flight they did not
  // run: no replica but one asked vPIC.
  int asked = 0;
  for (const auto& s : servers_) asked += s->engine().Stats().upstream_requests > 0;
  EXPECT_EQ(asked, 1);
}

TEST_F(FleetTest, AVinDecodedOnOneReplicaIsACacheAnswerOnAnother) {
  StartReplicas();
  const std::string vin = ValidVin(2);
  DecodeResponse a, b;
  ASSERT_TRUE(Decode(0, vin, &a).ok());
  EXPECT_EQ(a.result().source(), vin::v1::SOURCE_VPIC);
  ASSERT_TRUE(Decode(1, vin, &b).ok());
  EXPECT_EQ(b.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(b.result().attempts(), 0);
  EXPECT_EQ(b.result().decode_time().seconds(), a.result().decode_time().seconds());
  EXPECT_EQ(b.result().decode_time().nanos(), a.result().decode_time().nanos());
  EXPECT_TRUE(MessageDifferencer::Equals(b.result().vehicle(),
                                         a.result().vehicle()));
  EXPECT_EQ(fake_->TotalRequests(), 1);
  EXPECT_EQ(servers_[1]->engine().Stats().upstream_requests, 0u);
  EXPECT_EQ(servers_[1]->metrics().cache_hits.value(), 1u)
      << "misses " << servers_[1]->metrics().cache_misses.value();
  // Now in replica B's own cache too.
  DecodeResponse again;
  ASSERT_TRUE(Decode(1, vin, &again).ok());
  EXPECT_EQ(again.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(FleetTest, ThreeReplicasTogetherKeepTheRate) {
  server::ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 600;  // 10 a second, for the fleet
  o.engine.budget.burst = 10;
  StartReplicas(o);
  constexpr int kVins = 900;
  Calls calls;
  for (int i = 0; i < kVins; ++i) {
    calls.Start(stubs_[i % kReplicas].get(), ValidVin(1000 + i));
  }
  ASSERT_TRUE(calls.Wait());
  int ok = 0;
  for (const auto* c : calls.calls()) ok += c->status.ok();
  EXPECT_EQ(ok, kVins);
  EXPECT_EQ(fake_->TotalRequests(), kVins);
  EXPECT_LE(testing_util::DensestSecond(fake_->Requests()), 10u + 10u)
      << "no second holds more than the fleet's rate plus the burst";
  for (const auto& s : servers_) {
    EXPECT_GT(s->engine().Stats().upstream_requests, 0u);
  }
}

TEST_F(FleetTest, A429OnOneReplicaPausesTheOthers) {
  server::ServerOptions o = Defaults();
  o.engine.budget.rate_per_minute = 6000;
  StartReplicas(o);
  const std::string first = ValidVin(3);
  auto steps = fakevpic::Step::ParseList("429:2");
  ASSERT_TRUE(steps.ok());
  fake_->Script(first, *steps);
  DecodeResponse a;
  std::thread unary([&] { ASSERT_TRUE(Decode(0, first, &a).ok()); });
  // The pause is in Redis once replica A has told it (it answers 429s with
  // a script; the hash's `paused` is then in the future).
  ASSERT_TRUE(WaitFor([&] {
    auto paused =
        testing_util::RedisCall(redis_.port(), {"HGET", "vin:budget", "paused"});
    return paused.ok() && !paused->str.empty() && paused->str != "0";
  }));
  const absl::Time paused_at = fake_->Requests()[0].time;
  DecodeResponse b, c;
  ASSERT_TRUE(Decode(1, ValidVin(4), &b).ok());
  ASSERT_TRUE(Decode(2, ValidVin(5), &c).ok());
  unary.join();
  const auto log = fake_->Requests();
  ASSERT_EQ(log.size(), 4u);
  for (size_t i = 1; i < log.size(); ++i) {
    EXPECT_GE(log[i].time, paused_at + absl::Seconds(2))
        << log[i].vin << " was asked during the fleet's pause";
  }
  EXPECT_EQ(servers_[1]->engine().Stats().pushbacks, 0u)
      << "B never saw a 429 itself";
}

TEST_F(FleetTest, AnOutageCostsTheFleetAtMostATenthMoreThanWasAsked) {
  server::ServerOptions o = Defaults();
  o.engine.max_attempts = 4;
  o.engine.budget.retry_ratio = 0.1;
  o.engine.budget.retry_min_per_second = 1;
  StartReplicas(o);
  auto outage = fakevpic::Step::ParseList("503,503,503,503,503,503,503,503");
  ASSERT_TRUE(outage.ok());
  fake_->ScriptEveryVin(*outage);
  constexpr int kVins = 300;
  const absl::Time start = absl::Now();
  Calls calls;
  for (int i = 0; i < kVins; ++i) {
    calls.Start(stubs_[i % kReplicas].get(), ValidVin(20000 + i));
  }
  ASSERT_TRUE(calls.Wait());
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  int unavailable = 0;
  for (const auto* c : calls.calls()) {
    unavailable += c->status.error_code() == grpc::StatusCode::UNAVAILABLE;
  }
  EXPECT_EQ(unavailable, kVins);
  // One budget for the fleet: a tenth of the 300 first attempts, plus the
  // floor (1/s over a 10 s window) once, not once per replica.
  EXPECT_LE(fake_->TotalRequests(), 1.1 * kVins + 1 * std::max(seconds, 10.0))
      << "over " << seconds << " s";
  uint64_t refused = 0, retried = 0;
  for (const auto& s : servers_) {
    refused += s->engine().Stats().retries_refused;
    retried += s->metrics().upstream_retries.value();
  }
  EXPECT_GT(refused, kVins / 2u);
  // Every retry made was granted by the fleet's budget in Redis (where a
  // grant is counted when spent, or, unspent, when granted).
  auto ring = testing_util::RedisCall(redis_.port(),
                                      {"HGETALL", "vin:budget:retries"});
  ASSERT_TRUE(ring.ok()) << ring.status();
  long long granted = 0, firsts = 0;
  for (size_t i = 0; i + 1 < ring->elements.size(); i += 2) {
    // The ring's slots: s<k> (which period), f<k>, r<k>.
    const long long v = std::stoll(ring->elements[i + 1].str);
    const char field = ring->elements[i].str[0];
    if (field == 'r') granted += v;
    if (field == 'f') firsts += v;
  }
  EXPECT_EQ(firsts, kVins) << "every replica's first attempts are counted there";
  EXPECT_GT(retried, 0u);
  EXPECT_LE(static_cast<long long>(retried), granted);
}

TEST_F(FleetTest, RedisStoppedAndRestartedLosesNoDecode) {
  server::ServerOptions o = Defaults();
  o.metrics_listen = "127.0.0.1:0";
  StartReplicas(o, 2);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::string last_error;
  absl::Mutex error_mu;
  std::thread feeder([&] {
    for (int i = 0; !stop.load(); ++i) {
      DecodeResponse r;
      grpc::Status s = Decode(i % 2, ValidVin(5000 + i), &r);
      if (s.ok()) {
        ++ok;
      } else {
        ++failed;
        absl::MutexLock lock(&error_mu);
        last_error = s.error_message();
      }
    }
  });
  ASSERT_TRUE(WaitFor([&] { return ok.load() >= 20; }));
  ASSERT_TRUE(redis_.Stop());
  for (auto& s : servers_) {
    ASSERT_TRUE(WaitFor([&] { return s->metrics().redis_up.value() == 0; }));
  }
  const int before = ok.load();
  ASSERT_TRUE(WaitFor([&] { return ok.load() >= before + 20; }))
      << "decodes go on without Redis";
  {
    auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", servers_[0]->port()),
        grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service("vin.v1.VinDecoderService");
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING)
        << "the service still answers while Redis is down";
  }
  std::string error;
  ASSERT_TRUE(redis_.Start(&error)) << error;
  for (auto& s : servers_) {
    ASSERT_TRUE(WaitFor([&] { return s->metrics().redis_up.value() == 1; }));
  }
  const int after = ok.load();
  ASSERT_TRUE(WaitFor([&] { return ok.load() >= after + 20; }));
  stop.store(true);
  feeder.join();
  EXPECT_EQ(failed.load(), 0) << last_error;
  // Shared again: what A decodes now, B answers from the fleet's cache.
  DecodeResponse a, b;
  ASSERT_TRUE(Decode(0, ValidVin(9999), &a).ok());
  ASSERT_TRUE(Decode(1, ValidVin(9999), &b).ok());
  EXPECT_EQ(b.result().source(), vin::v1::SOURCE_CACHE);
  std::string body;
  ASSERT_EQ(testing_util::HttpGet(servers_[0]->metrics_port(), "/metrics", &body), 200);
  testing_util::Samples m = testing_util::ParseSamples(body);
  EXPECT_EQ(m.at("vin_redis_up"), 1);
  EXPECT_GT(m.at("vin_redis_errors_total"), 0) << "the outage's failed commands";
  EXPECT_EQ(m.at("vin_fleet_events_rejected_total"), 0)
      << "every event of the other replica parsed";
}

// A replica started as a process, for the test that kills one.
struct Replica {
  testing_util::Subprocess proc;
  int port = 0;
  int metrics_port = 0;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub;

  double Metric(const std::string& name) {
    std::string body;
    if (testing_util::HttpGet(metrics_port, "/metrics", &body) != 200) return -1;
    testing_util::Samples m = testing_util::ParseSamples(body);
    return m.count(name) ? m.at(name) : -1;
  }
};

int PortIn(const std::string& line) {
  return std::stoi(line.substr(line.find("(port ") + 6));
}

TEST_F(FleetTest, WhenTheOwnerIsKilledAnotherReplicaTakesTheFlightOver) {
  constexpr absl::Duration kLease = absl::Seconds(1);
  std::vector<std::unique_ptr<Replica>> replicas;
  for (int i = 0; i < kReplicas; ++i) {
    auto r = std::make_unique<Replica>();
    ASSERT_TRUE(r->proc.Start(
        {VIN_SERVER_BIN, "--listen=127.0.0.1:0",
         "--vpic_base_url=" + fake_->base_url(), "--upstream_batch_max=1",
         "--upstream_rate=0", "--redis_url=" + redis_.url(),
         "--redis_timeout=200ms", "--fleet_lease=1s", "--attempt_timeout=5s",
         "--metrics_listen=127.0.0.1:0"}));
    auto listening = r->proc.WaitForLine("listening on", absl::Seconds(20));
    ASSERT_TRUE(listening.has_value());
    r->port = PortIn(*listening);
    auto metrics = r->proc.WaitForLine("metrics on", absl::Seconds(20));
    ASSERT_TRUE(metrics.has_value());
    r->metrics_port = PortIn(*metrics);
    r->stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", r->port), grpc::InsecureChannelCredentials()));
    replicas.push_back(std::move(r));
  }
  for (auto& r : replicas) {
    ASSERT_TRUE(WaitFor([&] { return r->Metric("vin_redis_up") == 1; }));
  }
  const std::string vin = ValidVin(7);
  fake_->HoldAnswers();
  Calls owner_calls, calls;
  owner_calls.Start(replicas[0]->stub.get(), vin);
  ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(20)));
  for (int i = 0; i < 10; ++i) calls.Start(replicas[1 + i % 2]->stub.get(), vin);
  // Every waiter of B and C has joined A's flight (QUEUED coalesced).
  for (int r = 1; r < kReplicas; ++r) {
    ASSERT_TRUE(WaitFor([&] {
      return replicas[r]->Metric("vin_coalesced_waiters_total") == 5;
    }));
  }
  replicas[0]->proc.Signal(SIGKILL);
  ASSERT_TRUE(replicas[0]->proc.Wait(absl::Seconds(10)).has_value());
  const absl::Time killed = absl::Now();
  fake_->ReleaseAnswers();
  ASSERT_TRUE(calls.Wait());
  const absl::Duration took = absl::Now() - killed;
  for (const auto* c : calls.calls()) {
    ASSERT_TRUE(c->status.ok()) << c->status.error_message();
    EXPECT_EQ(c->resp.result().vin(), vin);
  }
  EXPECT_EQ(fake_->TotalRequests(), 2) << "the dead owner's, and one takeover";
  // The lease, the look of a waiting replica every half lease, one attempt.
  EXPECT_LT(took, kLease + kLease / 2 + absl::Seconds(5)) << took;
  // Answers sent by B and C, whatever their source (a replica whose look at
  // the lease comes before the owner's DONE reaches it answers from the
  // shared cache).
  double decodes = 0;
  for (int r = 1; r < kReplicas; ++r) {
    std::string body;
    ASSERT_EQ(testing_util::HttpGet(replicas[r]->metrics_port, "/metrics", &body), 200);
    decodes += testing_util::Sum(testing_util::ParseSamples(body), "vin_decodes_total");
  }
  EXPECT_EQ(decodes, 10) << "exactly one answer per call";
}

}  // namespace
