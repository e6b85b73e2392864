// The fleet tests' fixture (fleet_flights_test.cc, fleet_budget_test.cc,
// fleet_without_redis_test.cc, ...): replicas sharing a real redis-server of
// the test's own in front of one fake vPIC. The replicas are VinServers in
// this process, started by AddReplica (through StartReplicas or
// LaunchReplicas); the test that must kill one starts vin-server processes
// instead, each a testing_util::RealServer.
#ifndef VIN_TESTS_FLEET_FLEET_TEST_FIXTURE_H_
#define VIN_TESTS_FLEET_FLEET_TEST_FIXTURE_H_

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "testing/eventually.h"
#include "testing/redis_server.h"
#include "vin/v1/vin.grpc.pb.h"

namespace fleet_test {

constexpr int kReplicas = 3;

// The port in a vin-server log line "... (port N)".
inline int PortIn(const std::string& line) {
  return std::stoi(line.substr(line.find("(port ") + 6));
}

class FleetTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(redis_.Start(&error)) << error;
    StartFake();
  }
  void StartFake() {
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

  // `n` replicas on redis_, each connected to it.
  void StartReplicas(server::ServerOptions o = Defaults(), int n = kReplicas) {
    LaunchReplicas(std::move(o), n);
    WaitForRedis();
  }
  // `n` replicas on redis_ without waiting for anything: their port is open
  // when this returns.
  void LaunchReplicas(server::ServerOptions o, int n) {
    o.fleet.redis_url = redis_.url();
    o.fleet.size_hint = n;
    for (int i = 0; i < n; ++i) AddReplica(o);
  }
  // One more replica on the fake vPIC, with `o`'s fleet options as they
  // are (its redis_url given).
  void AddReplica(server::ServerOptions o) {
    o.listen = "127.0.0.1:0";
    o.engine.vpic_base_url = fake_->base_url();
    auto s = server::VinServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*s)->port()),
                                       grpc::InsecureChannelCredentials());
    stubs_.push_back(vin::v1::VinDecoderService::NewStub(channel));
    servers_.push_back(*std::move(s));
  }
  // Every replica connected to Redis.
  void WaitForRedis() {
    for (auto& s : servers_) {
      ASSERT_TRUE(testing_util::Eventually([&] {
        return s->metrics().redis_up.value() == 1;
      })) << "replica connected to redis";
    }
  }

  grpc::Status Decode(int replica, const std::string& vin,
                      vin::v1::DecodeResponse* out,
                      absl::Duration timeout = absl::Seconds(30)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    vin::v1::DecodeRequest req;
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
    vin::v1::DecodeRequest req;
    vin::v1::DecodeResponse resp;
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

}  // namespace fleet_test

#endif  // VIN_TESTS_FLEET_FLEET_TEST_FIXTURE_H_
